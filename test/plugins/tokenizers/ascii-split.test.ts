/**
 * The hand readers of the o200k_base and cl100k_base split patterns (ascii-split.ts) find the
 * pattern's own pieces: wherever a reader decides, it ends the piece where the pattern does.
 */
import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { corpusFiles, corpusMissing } from '../../helpers/corpus.js'
import { CL100K_SOURCE, O200K_SOURCE, asciiReaderFor, cl100kPieceEnd, o200kPieceEnd, unitsOf, type PieceReader } from '../../../plugins/tokenizers/tiktoken/ascii-split.js'

const require = createRequire(import.meta.url)
const patternOf = (name: string): RegExp => require(`gpt-tokenizer/cjs/encoding/${name}`).default.bytePairEncodingCoreProcessor.tokenSplitRegex
/** The pattern made sticky, as bpe-core.ts reads it. */
const stickyOf = (pattern: RegExp): RegExp => new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, '') + 'y')

/** The end a reader gives the piece at `at` of `text`. */
const endOf = (reader: PieceReader, text: string, at: number): number => reader(unitsOf(text), text.length, at)

/** Pieces as the pattern gives them, and as the reader gives them where it decides; how many it decided. */
function compare (text: string, sticky: RegExp, reader: PieceReader): { pattern: number[], read: number[], decided: number } {
  const pattern: number[] = []
  const read: number[] = []
  let decided = 0
  const units = unitsOf(text)
  for (let at = 0; at < text.length;) {
    sticky.lastIndex = at
    if (!sticky.test(text) || sticky.lastIndex === at) throw new Error(`no piece at ${at}`)
    const end = sticky.lastIndex
    const mine = reader(units, text.length, at)
    pattern.push(end)
    read.push(mine < 0 ? end : mine)
    if (mine >= 0) decided++
    at = end
  }
  return { pattern, read, decided }
}

// Every ASCII class the patterns tell apart, the contractions, and characters outside ASCII
// that continue runs (letters, marks, digits, spaces, symbols) or end them.
const unit = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'b', 'Z', 'Q', 'x', '0', '7', ' ', '  ', '\t', '\n', '\r\n', '\r', '\v', '\f', '.', ',', '/', '-', '_', '(', '"', '\'', '\'s', '\'S', '\'ll', '\'Ve', '\'re', '\'d', '\'m', '\'T', '\'x', '\x00', '\x1f', '\x7f', 'HTTPServer', 'fooBar', 'ABC', 'abc', '123456') },
  { weight: 2, arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)), maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom('é', 'É', 'ß', '\u0301', '²', '٣', '\u00a0', '\u2028', '\u3000', '—', '€', '的', '😀', '\uD800', 'ǅ', 'ʰ') },
)
const text = fc.array(unit, { maxLength: 40 }).map((parts) => parts.join(''))

for (const [name, source, reader] of [['o200k_base', O200K_SOURCE, o200kPieceEnd], ['cl100k_base', CL100K_SOURCE, cl100kPieceEnd]] as const) {
  t.test(`${name}: the reader ends each piece where the pattern does (property)`, async (t) => {
    const pattern = patternOf(name)
    t.equal(pattern.source, source, 'gpt-tokenizer writes the pattern as the reader expects')
    t.equal(asciiReaderFor(pattern.source), reader)
    const sticky = stickyOf(pattern)
    let decided = 0
    fc.assert(fc.property(text, (s) => {
      const { pattern, read, decided: n } = compare(s, sticky, reader)
      decided += n
      return JSON.stringify(pattern) === JSON.stringify(read)
    }), { numRuns: 20_000, seed: 5 })
    t.ok(decided > 50_000, `the reader decided ${decided} pieces (it must not leave them all to the pattern)`)
  })
}

t.test('other patterns keep their regular expression', async (t) => {
  t.equal(asciiReaderFor(patternOf('r50k_base').source), undefined)
  t.equal(asciiReaderFor(patternOf('p50k_base').source), undefined)
  t.equal(asciiReaderFor('x'), undefined)
})

t.test('pieces the reader leaves to the pattern: a character outside ASCII decides', async (t) => {
  t.equal(endOf(o200kPieceEnd, 'café', 0), -1, 'é may continue the word')
  t.equal(endOf(o200kPieceEnd, '12²', 0), -1, '² is a digit to \\p{N}')
  t.equal(endOf(o200kPieceEnd, ' \u00a0x', 0), -1, 'a no-break space continues the run')
  t.equal(endOf(o200kPieceEnd, 'cafe ', 0), 4)
  t.equal(endOf(o200kPieceEnd, 'HTTPServer!', 0), 10)
  t.equal(endOf(cl100kPieceEnd, 'HTTPServer!', 0), 10)
  t.equal(endOf(o200kPieceEnd, "it's", 2), 4, "'s after a word is o200k's prefix and word")
  t.equal(endOf(cl100kPieceEnd, "'sun", 0), 2, "cl100k takes 's alone")
  t.equal(endOf(o200kPieceEnd, '  \n  ', 0), 3, 'o200k: up to the last newline')
  t.equal(endOf(cl100kPieceEnd, '  \n  ', 0), 5, 'cl100k: a run to the end is whole')
})

t.test('a reader never reads past its text into the units of a longer one before it', async (t) => {
  const cases = [
    ['abcdefghijklmnopqrstuvwxyz abcdefghijklmnopqrstuvwxyz', 'abc'],
    ["it's it's it's it's it's it's it's it's", "it'"],
    ["'ll 'll 'll 'll 'll 'll 'll 'll 'll 'll", "'l"],
    ['1234567890123456789012345678901234567890', '12'],
    ['....................................\n\n\n', '..'],
  ]
  for (const [name, reader] of [['o200k_base', o200kPieceEnd], ['cl100k_base', cl100kPieceEnd]] as const) {
    const sticky = stickyOf(patternOf(name))
    for (const [before, text] of cases) {
      unitsOf(before!)
      sticky.lastIndex = 0
      sticky.test(text!)
      t.equal(endOf(reader, text!, 0), sticky.lastIndex, `${name}: ${JSON.stringify(text)} after ${JSON.stringify(before!.slice(0, 12))}...`)
    }
  }
})

t.test('the readers find the pattern\'s pieces in every corpus text file', { skip: corpusMissing }, async (t) => {
  const files = ['markdown', 'log', 'csv', 'json', 'xml', 'yaml'].flatMap((folder) => corpusFiles(folder))
  const readers = [['o200k_base', o200kPieceEnd], ['cl100k_base', cl100kPieceEnd]] as const
  const stickies = readers.map(([name]) => stickyOf(patternOf(name)))
  let checked = 0
  let differ = 0
  for (const file of files) {
    const text = readFileSync(file).toString('utf8').slice(0, 1 << 20)
    readers.forEach(([, reader], i) => {
      const { pattern, read } = compare(text, stickies[i]!, reader)
      checked += pattern.length
      if (JSON.stringify(pattern) !== JSON.stringify(read)) differ++
    })
  }
  t.ok(files.length > 0 && checked > 100_000, `${files.length} files, ${checked} pieces`)
  t.equal(differ, 0, 'no file where a reader ends a piece elsewhere than the pattern')
})
