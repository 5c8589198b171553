/**
 * Long pieces are merged from a heap (long-merge.ts): the same tokens as gpt-tokenizer's own
 * scan, in O(n log n) instead of quadratic time.
 */
import t from 'tap'
import fc from 'fast-check'
import { createRequire } from 'node:module'
import { LONG_PIECE, heapMerge, installLongMerge, type BpeCore } from '../../../plugins/tokenizers/tiktoken/long-merge.js'
import { ENCODINGS } from '../../../plugins/tokenizers/tiktoken/index.js'

const require = createRequire(import.meta.url)
const encodingModule = (name: string): { countTokens: (s: string) => number, default: { bytePairEncodingCoreProcessor: BpeCore } } => require(`gpt-tokenizer/cjs/encoding/${name}`)

/** Runs of few characters make long pieces with many merges of equal rank (ties: leftmost first). */
const alphabets = ['ab', 'aaaab', 'abcdefghij', 'etaoinshrdlu', 'ACGT', '=', '-_=*', '的是不了人我在有他这', 'éàü€😀x', 'Straße']
const piece = fc.tuple(fc.constantFrom(...alphabets), fc.array(fc.nat(), { minLength: 1, maxLength: 2500 }))
  .map(([alphabet, picks]) => { const chars = [...alphabet]; return picks.map((p) => chars[p % chars.length]).join('') })

for (const name of ENCODINGS) {
  t.test(`${name}: heapMerge gives the scan's tokens`, async (t) => {
    const core = encodingModule(name).default.bytePairEncodingCoreProcessor
    const scan = core.bytePairMerge
    fc.assert(fc.property(piece, (text) => {
      const bytes = new TextEncoder().encode(text)
      t.same(heapMerge(core, bytes), scan.call(core, bytes))
    }), { numRuns: 60, seed: 7 })
  })
}

t.test('the encoding merges long pieces from the heap once installed, and counts stay exact', async (t) => {
  const mod = encodingModule('o200k_base')
  const core = mod.default.bytePairEncodingCoreProcessor
  t.ok(installLongMerge(mod))
  t.ok(installLongMerge(mod), 'installing twice is harmless')
  const text = 'abcdefghij'.repeat(40_000) // one piece of 400 KB: 90 s with the scan alone
  t.equal(mod.countTokens(text), 80_000)
  const bytes = new TextEncoder().encode('ab'.repeat(LONG_PIECE))
  t.same(core.bytePairMerge(bytes), heapMerge(core, bytes))
  t.notOk(installLongMerge({ default: {} }), 'other internals: the encoding keeps its own merge')
  t.notOk(installLongMerge(undefined))
})
