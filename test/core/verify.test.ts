import t from 'tap'
import { split } from '../../index.js'
import { tokenizerByName } from '../../core/registry.js'
import { Verifier } from '../../core/verify.js'
import type { Chunk } from '../../core/schema.js'

const text = Array.from({ length: 60 }, (_, i) => `Sentence ${i} has a few words 😀 in it.`).join(' ') + '\n'

async function verify (chunks: Chunk[]): Promise<string[]> {
  const v = new Verifier()
  v.start(await tokenizerByName('approx').load(), 32)
  v.addSource(text)
  for (const c of chunks) v.check(c)
  return v.finish().map((x) => x.rule)
}

t.test('a real split with overlap verifies clean; tampering is caught by rule', async (t) => {
  const r = await split(text, { input_format: 'text', max_tokens: 32, overlap_tokens: 8 })
  t.ok(r.chunks.some((c, i) => i > 0 && c.char_start < r.chunks[i - 1]!.char_end), 'chunks overlap')
  t.same(await verify(r.chunks), [])

  const overlapped = r.chunks.findIndex((c, i) => i > 0 && c.char_start < r.chunks[i - 1]!.char_end)
  const badHead = r.chunks.map((c, i) => i === overlapped ? { ...c, text: 'X' + c.text.slice(1) } : c)
  t.ok((await verify(badHead)).includes('overlap'), 'a changed overlap prefix')

  const badSpan = r.chunks.map((c, i) => i === 1 ? { ...c, char_end: c.char_end + 1 } : c)
  t.ok((await verify(badSpan)).includes('offsets'), 'a span longer than the text')
})
