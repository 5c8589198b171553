import { split, isDocsplitError, listTokenizers } from '../../index.js'
import { invariantProblems } from '../../core/testing.js'
import { tokenizerByName } from '../../core/registry.js'
import { hostileCases } from '../../test/hostile/inputs.js'
const approx = await tokenizerByName('approx').load()
const only = process.argv[2]
for (const c of hostileCases()) {
  if (only && !c.name.includes(only)) continue
  const t0 = performance.now()
  let out = ''
  try {
    const r = await split(c.input, { filename: c.filename, ...(c.options ?? {}) })
    const src = typeof c.input === 'string' ? c.input : undefined
    const p = src !== undefined ? invariantProblems(r, src, { tokenizer: approx }) : []
    out = `OK chunks=${r.chunk_count} fmt=${r.document.input_format} problems=${JSON.stringify(p.slice(0,2))} forbid=${c.forbid ? c.forbid.test(r.chunks.map(x=>x.text).join('')) : '-'}`
  } catch (e) {
    out = isDocsplitError(e) ? `ERR ${e.code}: ${e.message.slice(0,150)}` : `THROW ${(e as Error).name}: ${(e as Error).message?.slice(0,150)}`
  }
  console.log(`${c.name}: ${out} (${Math.round(performance.now()-t0)} ms) rss=${Math.round(process.memoryUsage().rss/1e6)}MB`)
}
