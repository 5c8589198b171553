/**
 * The five invariants over every corpus markdown file and over generated markdown, for budgets
 * from 8 to 4096, with the approx tokenizer and an exact BPE one.
 */
import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { split } from '../../index.js'
import { tokenizerByName } from '../../core/registry.js'
import type { Tokenizer } from '../../core/types.js'
import { corpusFiles, corpusMissing } from '../helpers/corpus.js'
import { invariantProblems } from '../../testing.js'

const tokenizers: Array<[string, Tokenizer | undefined]> = []
for (const name of ['approx', 'o200k_base']) {
  try { tokenizers.push([name, await tokenizerByName(name).load()]) } catch { tokenizers.push([name, undefined]) }
}

for (const [name, tokenizer] of tokenizers) {
  const skip = corpusMissing !== false ? corpusMissing : tokenizer === undefined ? `${name} is not available` : false
  t.test(`should hold the invariants on every corpus markdown file with ${name}`, { skip }, async (t) => {
    for (const path of corpusFiles('markdown', ['.md'])) {
      const text = readFileSync(path, 'utf8')
      for (const max of [8, 64, 512, 4096]) {
        const a = await split(text, { input_format: 'markdown', max_tokens: max, tokenizer: name })
        t.same(invariantProblems(a, text, { tokenizer: tokenizer! }), [], `${basename(path)} at ${max}`)
        const b = await split(Buffer.from(text), { input_format: 'markdown', max_tokens: max, tokenizer: name })
        t.equal(JSON.stringify(b.chunks), JSON.stringify(a.chunks), `${basename(path)} at ${max}: deterministic, bytes or string`)
      }
    }
  })
}

const inline = fc.oneof(fc.constantFrom('word', 'Ünïcödé', '日本語の文章です。', '😀', '👩‍👩‍👧', '`code`', '**bold**', '[link][ref]', 'x'.repeat(30), '1.'), fc.string({ maxLength: 10 }))
const line = fc.array(inline, { minLength: 1, maxLength: 15 }).map((ws) => ws.join(' '))
const block = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 6 }), line).map(([n, l]) => `${'#'.repeat(n)} ${l}\n`),
  fc.array(line, { minLength: 1, maxLength: 5 }).map((ls) => ls.join('\n') + '\n'),
  fc.array(line, { minLength: 1, maxLength: 6 }).map((ls) => '```js\n' + ls.join('\n') + '\n```\n'),
  fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), line), { minLength: 1, maxLength: 6 }).map((items) => items.map(([d, l]) => `${'  '.repeat(d)}- ${l}`).join('\n') + '\n'),
  fc.array(line, { minLength: 1, maxLength: 4 }).map((ls) => '| a | b |\n|---|---|\n' + ls.map((l) => `| ${l.replaceAll('|', '')} | x |`).join('\n') + '\n'),
  fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => ls.map((l) => `> ${l}`).join('\n') + '\n'),
  fc.constant('---\n'),
  fc.constant('[ref]: https://example.com "Title"\n'),
)
const markdown = fc.tuple(
  fc.boolean(), fc.array(block, { maxLength: 25 }), fc.constantFrom('\n', '\r\n'), fc.boolean(),
).map(([frontMatter, blocks, eol, trailing]) => {
  let text = (frontMatter ? '---\ntitle: Generated\n---\n' : '') + blocks.join('\n')
  if (eol === '\r\n') text = text.replaceAll('\n', '\r\n')
  return trailing ? text : text.replace(/\r?\n$/, '')
})

for (const [name, tokenizer] of tokenizers) {
  t.test(`should hold the invariants on generated markdown with ${name}`, { skip: tokenizer === undefined ? `${name} is not available` : false }, async (t) => {
    await fc.assert(fc.asyncProperty(markdown, fc.constantFrom(8, 16, 64, 512, 4096), async (text, max) => {
      const r = await split(text, { input_format: 'markdown', max_tokens: max, tokenizer: name })
      const problems = invariantProblems(r, text, { tokenizer: tokenizer! })
      if (problems.length > 0) throw new Error(problems.join('\n'))
    }), { numRuns: name === 'approx' ? 200 : 60 })
    t.pass('properties held')
  })
}
