/**
 * Cut points of long texts: segmented in windows (Intl.Segmenter is quadratic in the length of
 * what it walks), with the same cuts as one walk over the whole text wherever a window can end
 * on a boundary of every granularity.
 */
import t from 'tap'
import fc from 'fast-check'
import { segmenters, softBreaksAsSpaces, type CutLevel } from '../../core/segment.js'
import { split } from '../../index.js'

const granularity = { sentence: 'sentence', word: 'word', grapheme: 'grapheme' } as const

/** One walk over the whole text, as segment.ts did before it used windows. */
function whole (text: string, level: 'sentence' | 'word' | 'grapheme'): number[] {
  const out: number[] = []
  for (const s of new Intl.Segmenter(undefined, { granularity: granularity[level] }).segment(text)) {
    if (s.index === 0 || (level === 'word' && s.isWordLike !== true)) continue
    out.push(s.index)
  }
  return out
}

/** Lines of prose with non-ASCII letters, marks and emoji (no fast path applies). */
const line = fc.array(fc.constantFrom('Straße', 'naïve', 'é', 'e\u0301', '👩‍👩‍👧', '中文', 'Dr.', 'end.', 'Why?', 'a', '42', ',', ' ', '  '), { minLength: 1, maxLength: 30 })
  .map((words) => words.join(' '))

t.test('long texts with newlines: the same cuts as one walk, at every level', async (t) => {
  fc.assert(fc.property(fc.array(line, { minLength: 300, maxLength: 700 }), (lines) => {
    const text = lines.join('\n') + '\n'
    for (const level of ['word', 'grapheme'] as const) {
      t.same(segmenters.cuts(text, level as CutLevel), whole(text, level), `${level}, ${text.length} characters`)
    }
    // Sentences: paragraphs of wrapped lines, read with their soft breaks as spaces.
    const paragraphs = lines.map((l, i) => i % 3 === 2 ? `${l}\n\n` : `${l}\n`).join('')
    t.same(segmenters.cuts(paragraphs, 'sentence'), whole(softBreaksAsSpaces(paragraphs), 'sentence'), `sentence, ${paragraphs.length} characters`)
  }), { numRuns: 6, seed: 3 })
})

t.test('hard-wrapped prose: a sentence ends at its stop, not at the end of each line', async (t) => {
  const para = 'The licenses for most software are designed\nto take away your freedom to share.  By contrast,\r\nthe License is intended to guarantee\ryour freedom.\n\nA new paragraph\nstarts here.\n'
  const cuts = segmenters.cuts(para, 'sentence')
  const after = (s: string): number => para.indexOf(s) + s.length
  t.same(cuts, [after('share.  '), after('freedom.\n'), after('freedom.\n\n')], 'cuts after the stops and at the blank line only')
  t.same(segmenters.cuts(para, 'line').length, 5, 'the line ends are the next level down')
})

t.test('a long text without newlines: word and grapheme cuts are the same; sentence cuts ascend', async (t) => {
  const words = ['Straße', 'naïve', 'e\u0301', '👩‍👩‍👧', 'Dr.', 'end.', 'Why?', '中文']
  const text = Array.from({ length: 6000 }, (_, i) => words[(i * 7) % words.length]).join(' ')
  t.ok(text.length > 3 * 8192)
  t.same(segmenters.cuts(text, 'word'), whole(text, 'word'))
  t.same(segmenters.cuts(text, 'grapheme'), whole(text, 'grapheme'))
  const sentences = segmenters.cuts(text, 'sentence')
  t.ok(sentences.every((p, i) => p > 0 && p < text.length && (i === 0 || p > sentences[i - 1]!)))
  t.ok(whole(text, 'sentence').every((p) => sentences.includes(p)), 'every sentence boundary is a cut')
})

t.test('a 2 MB paragraph of short lines at a large budget splits in linear time', async (t) => {
  // One walk took over three minutes here (a paragraph over budget is cut at sentences).
  let text = ''
  for (let i = 0; text.length < 2e6; i++) text += `line ${i}\n`
  const r = await split(text, { input_format: 'text', max_tokens: 100_000 })
  t.equal(r.chunks.map((c) => c.text).join(''), text)
  t.ok(r.chunks.every((c) => c.token_count <= 100_000))
})
