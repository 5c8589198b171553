/**
 * gpt-tokenizer repaired (bpe-core.ts): long pieces merged from a heap give the same tokens as
 * its own scan, in O(n log n) instead of quadratic time; a full merge cache is emptied; counts
 * read with a sticky pattern equal the encoded tokens.
 */
import t from 'tap'
import fc from 'fast-check'
import { createRequire } from 'node:module'
import { LONG_PIECE, countUpTo, heapMerge, installFixes, stickyCount, type BpeCore } from '../../../plugins/tokenizers/tiktoken/bpe-core.js'
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

t.test('cached piece counts stay exact when the table overflows and pieces share its slots', async (t) => {
  const AS_TEXT = { disallowedSpecial: new Set<string>() }
  const mod = encodingModule('o200k_base') as unknown as { countTokens: (s: string, o: object) => number, encode: (s: string, o: object) => number[] }
  t.ok(installFixes(mod))
  // 150,000 distinct short pieces (more than the table's 65,536 slots), 70,000 distinct long
  // ones (more than the long map holds) and two too long to cache, each text read twice: cold,
  // then from the cache.
  const short = Array.from({ length: 150_000 }, (_, i) => ` w${i.toString(36)}x`).join('')
  const long = Array.from({ length: 70_000 }, (_, i) => ` Internationalisation${i.toString(36)}`).join('')
  const veryLong = ` ${'abcdefghij'.repeat(40)} ${'abcdefghij'.repeat(40)}` // pieces never cached
  for (const text of [short, long, veryLong]) {
    const expected = mod.encode(text, AS_TEXT).length
    t.equal(mod.countTokens(text, AS_TEXT), expected, 'cold')
    t.equal(mod.countTokens(text, AS_TEXT), expected, 'warm')
  }
  t.equal(mod.countTokens(' w1x w1y w1x', AS_TEXT), mod.encode(' w1x w1y w1x', AS_TEXT).length, 'a piece that differs in one letter is not taken for another')
})

t.test('countUpTo is the count up to the limit, and stops soon after it', async (t) => {
  const AS_TEXT = { disallowedSpecial: new Set<string>() }
  const text = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', '\n', '.', '9', 'é', '的', '<|endoftext|>'), maxLength: 60 })
  for (const name of ENCODINGS) {
    const mod = encodingModule(name) as unknown as { countTokens: (s: string, o: object) => number }
    t.ok(installFixes(mod))
    fc.assert(fc.property(text, fc.nat(40), (s, limit) => {
      const n = mod.countTokens(s, AS_TEXT)
      const upTo = countUpTo(mod, s, limit)!
      return n <= limit ? upTo === n : upTo > limit && upTo <= n
    }), { numRuns: 1000, seed: 3 })
  }
  const o200k = encodingModule('o200k_base')
  t.equal(countUpTo(o200k, ' word'.repeat(1_000_000), 10), 11, 'a million words: it stops at the 11th')
  t.equal(countUpTo({}, 'text', 10), undefined, 'undefined without the fixes')
})

t.test('counts read with the sticky pattern equal the encoded tokens (property)', async (t) => {
  const AS_TEXT = { disallowedSpecial: new Set<string>() }
  const text = fc.string({
    unit: fc.oneof(
      fc.constantFrom('a', 'Z', 'é', '9', ' ', '  ', '\n', '\r\n', '\t', '.', '--', "'s", '的', '😀', '\uD800', '\uDC00', '<|endoftext|>', 'Straße', '123456'),
      fc.string({ unit: 'binary', maxLength: 3 }),
    ),
    maxLength: 80,
  })
  for (const name of ENCODINGS) {
    const mod = encodingModule(name) as unknown as { countTokens: (s: string, o: object) => number, encode: (s: string, o: object) => number[], default: { bytePairEncodingCoreProcessor: BpeCore } }
    t.ok(installFixes(mod))
    fc.assert(fc.property(text, (s) => mod.countTokens(s, AS_TEXT) === mod.encode(s, AS_TEXT).length), { numRuns: 1500, seed: 11 })
  }
  // Where the pattern does not match, the count is left to gpt-tokenizer's own walk.
  const core = encodingModule('o200k_base').default.bytePairEncodingCoreProcessor
  t.equal(stickyCount(core, /a/y, 'ab'), undefined)
  t.equal(stickyCount(core, /a/y, 'aa'), 2)
  t.equal(stickyCount(core, /a?/y, 'b'), undefined, 'an empty match is no piece')
})
