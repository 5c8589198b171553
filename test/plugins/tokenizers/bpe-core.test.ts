/**
 * gpt-tokenizer repaired (bpe-core.ts): long pieces merged from a heap give the same tokens as
 * its own scan, in O(n log n) instead of quadratic time; a full merge cache is emptied.
 */
import t from 'tap'
import fc from 'fast-check'
import { createRequire } from 'node:module'
import { LONG_PIECE, heapMerge, installFixes, type BpeCore } from '../../../plugins/tokenizers/tiktoken/bpe-core.js'
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
  t.ok(installFixes(mod))
  t.ok(installFixes(mod), 'installing twice is harmless')
  const text = 'abcdefghij'.repeat(40_000) // one piece of 400 KB: 90 s with the scan alone
  t.equal(mod.countTokens(text), 80_000)
  const bytes = new TextEncoder().encode('ab'.repeat(LONG_PIECE))
  t.same(core.bytePairMerge(bytes), heapMerge(core, bytes))
  t.notOk(installFixes({ default: {} }), 'other internals: the encoding keeps its own code')
  t.notOk(installFixes(undefined))
})

t.test('a full merge cache is emptied, not scanned for its oldest entry', async (t) => {
  const mod = encodingModule('cl100k_base')
  const core = mod.default.bytePairEncodingCoreProcessor
  t.ok(installFixes(mod))
  const size = core.mergeCacheSize
  t.ok(size > 0, `a cache of ${size} pieces`)
  // Distinct pieces (runs of CJK letters between commas), more than the cache holds.
  const cjk = (n: number): string => String.fromCharCode(0x4e00 + (n % 20_000))
  const pieces = Array.from({ length: size + 500 }, (_, i) => cjk(i) + cjk(i * 7 + 1) + cjk(i * 13 + 2))
  const text = pieces.join('，')
  const before = mod.countTokens(text)
  t.ok(core.mergeCache!.size <= size, 'never over its size')
  t.equal(mod.countTokens(text), before, 'counts stay exact after it was emptied')
})
