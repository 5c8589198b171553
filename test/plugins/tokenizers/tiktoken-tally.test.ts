import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { ENCODINGS } from '../../../plugins/tokenizers/tiktoken/index.js'
import { loadEncoding } from '../../../plugins/tokenizers/tiktoken/load.js'
import { isStable } from '../../../plugins/tokenizers/tiktoken/tally.js'
import { corpusFiles, corpusMissing } from '../../helpers/corpus.js'

// Fragments chosen to sit on both sides of the positions the tally treats as stable: newlines
// before `/`, spaces and letters, runs of whitespace, contractions, marks, CJK, digits.
const FRAGMENTS = [
  '\n', '\r\n', '\n\n', ' ', '  ', '\t', '/', '//', 'a', 'Zz', 'word', ' the', "'s", "'LL", '}', '};', '(x)', '1', '123456',
  'é', 'e\u0301', '日本', '\u00A0', '\u3000', '\uFEFF', '\u0085', ' \uFEFF', '\u0085\n', '<|endoftext|>', '  \n', ' \n ', '-', '#', '😀', '\r', '。', '\u{1D518}', "'", 'İ', 'ǅ',
]

const text = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }).map((parts) => parts.join(''))

/**
 * Parts that join at fragment boundaries, where the tally's shortcuts apply; each with whether
 * its own count is handed in, as when the engine counted it ahead.
 */
const partsOf = fc.array(fc.tuple(fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 6 }).map((p) => p.join('')), fc.boolean()), { maxLength: 12 })

for (const encoding of ENCODINGS) {
  t.test(`${encoding}: the tally counts every prefix exactly, and undo restores`, async (t) => {
    const tok = await loadEncoding(encoding)
    fc.assert(fc.property(partsOf, (parts) => {
      const tally = tok.tally!()
      let joined = ''
      for (const [part, ahead] of parts) {
        // Asking for the backlog settles what it can: the counts stay exact.
        if (ahead && tally.backlog!() < 0) throw new Error('negative backlog')
        const before = tok.count(joined)
        const known = ahead ? tok.count(part) : undefined
        joined += part
        const n = tally.add(part, known)
        if (n !== tok.count(joined)) throw new Error(`tally ${n} != count ${tok.count(joined)} for ${JSON.stringify(joined)}`)
        if (tally.undo() !== before) throw new Error(`undo gave the wrong count for ${JSON.stringify(joined)}`)
        tally.add(part, known)
      }
      const last = parts[parts.length - 1]?.[0] ?? ''
      if (tally.restart!() !== tok.count(last)) throw new Error(`restart gave the wrong count for ${JSON.stringify(last)}`)
      if (tally.add(joined) !== tok.count(last + joined)) throw new Error(`add after restart: ${JSON.stringify(last + joined)}`)
    }), { numRuns: 3000 })
    t.pass('held')
  })
}

t.test('a stable position splits the count for every encoding', async (t) => {
  const toks = await Promise.all(ENCODINGS.map((e) => loadEncoding(e)))
  fc.assert(fc.property(text, text, (a, b) => {
    const s = a + b
    for (const tok of toks) {
      if (!isStable(s, a.length, tok.name === 'o200k_base' || tok.name === 'cl100k_base')) continue
      if (tok.count(s) !== tok.count(a) + tok.count(b)) throw new Error(`${tok.name}: ${JSON.stringify(a)} | ${JSON.stringify(b)}`)
    }
  }), { numRuns: 3000 })
  t.ok(isStable('a\nb', 2, false))
  t.notOk(isStable('a\n/b', 2, true), 'o200k keeps `/` with the newlines before it')
  t.notOk(isStable('a\n b', 2, false), 'r50k starts a piece with the newline and one space')
  t.notOk(isStable('a\n\nb', 3, false), 'r50k splits a whitespace run before a word, not at the end of a text')
  t.ok(isStable('a\n\nb', 3, true))
  t.ok(isStable('ab cd', 2, false))
  t.ok(isStable('ab.', 2, false), 'a word ends before punctuation')
  t.notOk(isStable("ab's", 2, true), "o200k keeps a contraction with its word")
  t.notOk(isStable('e\u0301', 1, true), 'o200k keeps a mark with its letter')
  t.ok(isStable('\u{1D518}.', 2, true), 'a letter outside the BMP ends a word')
  t.notOk(isStable('a\n \nb', 2, true), 'a whitespace run with a later newline is one piece')
  t.ok(isStable('a\n  b', 2, true))
})

t.test('corpus: tallying lines counts each file exactly', async (t) => {
  if (corpusMissing !== false) return t.skip(corpusMissing)
  const tok = await loadEncoding('o200k_base')
  for (const folder of ['markdown', 'log', 'csv', 'json', 'xml', 'yaml']) {
    for (const file of corpusFiles(folder).slice(0, 4)) {
      const s = readFileSync(file, 'utf8').slice(0, 200_000)
      const tally = tok.tally!()
      let n = 0
      for (const line of s.split(/(?<=\n)/)) n = tally.add(line)
      t.equal(n, tok.count(s), file.slice(file.lastIndexOf('/') + 1))
    }
  }
})
