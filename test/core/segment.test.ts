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

/**
 * One walk over the whole text, as segment.ts did before it used windows; for sentences, less
 * the cuts after `Dr.` (the one abbreviation the texts below hold) and after a `?` before a
 * lowercase word on the same line.
 */
function whole (text: string, level: 'sentence' | 'word' | 'grapheme'): number[] {
  const out: number[] = []
  for (const s of new Intl.Segmenter(undefined, { granularity: granularity[level] }).segment(text)) {
    if (s.index === 0 || (level === 'word' && s.isWordLike !== true)) continue
    if (level === 'sentence' && /(?:^|[^\p{L}\p{N}.])Dr\.$/u.test(text.slice(0, s.index).trimEnd().slice(-12))) continue
    // nor a question that a lowercase word goes on after (`Why? naïve`)
    if (level === 'sentence' && /[?!][ \t]*$/.test(text.slice(0, s.index)) && /^\p{Ll}/u.test(text.slice(s.index))) continue
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

t.test('white space alone: the sentence cuts of one walk, found without the segmenter', async (t) => {
  const blank = fc.array(fc.constantFrom(' ', '\t', '\n', '\r', '\v', '\f', '\r\n', '\n\n'), { minLength: 1, maxLength: 400 }).map((parts) => parts.join(''))
  fc.assert(fc.property(blank, (text) => {
    t.same(segmenters.cuts(text, 'sentence'), whole(softBreaksAsSpaces(text), 'sentence'), JSON.stringify(text.slice(0, 40)))
  }), { numRuns: 300 })
  // A megabyte of blank lines: a cut after each (the segmenter took about 2 s for them).
  const run = '\n'.repeat(1 << 20)
  const cuts = segmenters.cuts(run, 'sentence')
  t.equal(cuts.length, run.length - 1)
  t.equal(cuts[cuts.length - 1], run.length - 1)
})

t.test('hard-wrapped prose: a sentence ends at its stop, not at the end of each line', async (t) => {
  const para = 'The licenses for most software are designed\nto take away your freedom to share.  By contrast,\r\nthe License is intended to guarantee\ryour freedom.\n\nA new paragraph\nstarts here.\n'
  const cuts = segmenters.cuts(para, 'sentence')
  const after = (s: string): number => para.indexOf(s) + s.length
  t.same(cuts, [after('share.  '), after('freedom.\n'), after('freedom.\n\n')], 'cuts after the stops and at the blank line only')
  t.same(segmenters.cuts(para, 'line').length, 4, 'the line ends are the next level down (the blank line with the line before it)')
})

t.test('a long text without newlines: the same cuts as one walk, at every level', async (t) => {
  const words = ['Straße', 'naïve', 'e\u0301', '👩‍👩‍👧', 'Dr.', 'end.', 'Why?', '中文']
  const text = Array.from({ length: 6000 }, (_, i) => words[(i * 7) % words.length]).join(' ')
  t.ok(text.length > 3 * 8192)
  t.same(segmenters.cuts(text, 'word'), whole(text, 'word'))
  t.same(segmenters.cuts(text, 'grapheme'), whole(text, 'grapheme'))
  t.same(segmenters.cuts(text, 'sentence'), whole(text, 'sentence'), 'a window\'s edge is no sentence end')
  fc.assert(fc.property(fc.array(line, { minLength: 400, maxLength: 900 }), (parts) => {
    const long = parts.join(' ')
    t.same(segmenters.cuts(long, 'sentence'), whole(long, 'sentence'), `sentence, ${long.length} characters`)
  }), { numRuns: 6, seed: 5 })
})

t.test('a long line with no sentence end is cut at words, never labelled sentence', async (t) => {
  const words = ['the', 'farmer', 'sells', 'eggs', 'for', '$3', 'each,', 'and', 'buys', 'feed']
  const text = Array.from({ length: 12000 }, (_, i) => words[(i * 3) % words.length]).join(' ') + '\n'
  t.same(segmenters.cuts(text, 'sentence'), [], 'no sentence cut in 60,000 characters without a stop')
  const r = await split(text, { input_format: 'text', max_tokens: 2048 })
  t.same([...new Set(r.chunks.slice(0, -1).map((c) => c.boundary))], ['word'], 'every chunk but the last ends at a word')
  t.ok(r.chunks.slice(0, -1).every((c) => c.token_count > 2048 * 0.9), 'and is full: no chunk ends at a window of the segmenter')
})

t.test('a 2 MB paragraph of short lines at a large budget splits in linear time', async (t) => {
  // One walk took over three minutes here (a paragraph over budget is cut at sentences).
  let text = ''
  for (let i = 0; text.length < 2e6; i++) text += `line ${i}\n`
  const r = await split(text, { input_format: 'text', max_tokens: 100_000 })
  t.equal(r.chunks.map((c) => c.text).join(''), text)
  t.ok(r.chunks.every((c) => c.token_count <= 100_000))
})

t.test('an opening quote or bracket starts the next sentence, not the end of the one before', async (t) => {
  const text = '他说了参数。“super” 调用的是父类。（注意）这很重要。Er sagte: „Ja.“ Dann ging er.'
  const cuts = segmenters.cuts(text, 'sentence')
  const pieces = [0, ...cuts].map((p, i) => text.slice(p, cuts[i] ?? text.length))
  t.same(pieces, ['他说了参数。', '“super” 调用的是父类。', '（注意）这很重要。', 'Er sagte: „Ja.“ ', 'Dann ging er.'], 'a closing quote before a space stays with its sentence')
  for (const words of ['call (foo) and "bar" or “baz” it\'s \'q\' done', 'call (fóo) and "bär" or “baz” it\'s \'q\' done']) {
    const at = segmenters.cuts(words, 'word')
    t.same([0, ...at].map((p, i) => words.slice(p, at[i] ?? words.length)).filter((w) => /^["'(“]/.test(w)).map((w) => w[0]), ['(', '"', '“', "'"],
      `word cuts go before the opening quote or bracket (${/ó/.test(words) ? 'segmenter' : 'ASCII'}), not an apostrophe inside a word`)
  }
})

t.test('space cuts: a URL, a link target or a code span is cut at the white space around it, not inside', async (t) => {
  const text = 'See [RFC8174](https://tools.ietf.org/html/rfc8174) and [templating](#path-templating), `readOnly` and `writeOnly`.\u00a0Kept\ttogether'
  const cuts = segmenters.cuts(text, 'space')
  const pieces = [0, ...cuts].map((p, i) => text.slice(p, cuts[i] ?? text.length))
  t.same(pieces, ['See ', '[RFC8174](https://tools.ietf.org/html/rfc8174) ', 'and ', '[templating](#path-templating), ', '`readOnly` ', 'and ', '`writeOnly`.\u00a0Kept\t', 'together'],
    'after spaces and tabs, not after a no-break space')
  // A line of links over budget: every chunk ends at white space.
  const links = Array.from({ length: 300 }, (_, i) => `[@user${i}](https://twitter.com/user_${i}/status/${i * 7919})`).join(', ') + '\n'
  const r = await split(links, { input_format: 'text', max_tokens: 64 })
  t.ok(r.chunks.length > 10)
  t.same(r.chunks.slice(0, -1).filter((c) => !/\s$/.test(c.text)).map((c) => c.text.slice(-30)), [], 'no chunk ends inside a link')
})

t.test('sentences in lightweight markup: code spans, closing emphasis and list markers', async (t) => {
  const text = '6.  If a line is blank, it ends. **Rule one.** Next comes `?` or `!` in code. Last one.'
  const cuts = segmenters.cuts(text, 'sentence')
  const pieces = [0, ...cuts].map((p, i) => text.slice(p, cuts[i] ?? text.length))
  t.same(pieces, ['6.  If a line is blank, it ends. ', '**Rule one.** ', 'Next comes `?` or `!` in code. ', 'Last one.'],
    'the marker stays with its sentence, `**` with the sentence it closes, and a stop inside a code span ends none')
})

t.test('a window of a long line without stops does not end a chunk short', async (t) => {
  // The packer segments a unit over budget one window (2,048 characters at this budget) at a
  // time; what was left after the window (under a window long, so segmented whole) was cut as
  // one long sentence and the blank line after it, and the chunk before it ended there, short.
  const words = ['use', 'a', 'indents', 'link', 'however', 'net', 'pre', 'for', 'get', 'end', 'like', 'markdown']
  const text = '# Title\n\n' + Array.from({ length: 650 }, (_, i) => words[(i * 5) % words.length]).join(' ') + '\n\nAfter.\n'
  for (const tokenizer of ['approx', 'o200k_base']) {
    const r = await split(text, { input_format: 'markdown', max_tokens: 128, tokenizer }).catch((error: unknown) => {
      if ((error as { code?: string }).code === 'DOCSPLIT_TOKENIZER_UNAVAILABLE') return undefined
      throw error
    })
    if (r === undefined) continue
    t.same(r.chunks.slice(0, -1).filter((c) => c.token_count < 100).map((c) => [c.index, c.token_count]), [], `${tokenizer}: every chunk but the last is full`)
  }
})

t.test('line cuts: a blank line goes with the line before it, so no piece starts with one', async (t) => {
  t.same(segmenters.cuts('a\n\nb\n  \n\nc', 'line'), [3, 9])
  t.same(segmenters.cuts('```\ncode\n```\n\n', 'line'), [4, 9], 'a closing fence and the blank line after it are one piece')
  t.same(segmenters.cuts('\n\n\n', 'line'), [1, 2], 'blank lines only: cut at each')
})

t.test('sentences: no cut right after a title, an initial or an abbreviation with stops', async (t) => {
  const text = 'The committee was chaired by Dr. Eleanor Whitfield, who opened the session at nine. She thanked the delegates from the U.S. Department of Energy and the U.K. Treasury. Prof. Amara Osei disagreed. She cited the St. Louis pilot and Mr. J. Reyes, e.g. in Fig. 3 of the report. The vote was postponed.\n'
  const starts = segmenters.cuts(text, 'sentence').map((c) => text.slice(c, c + 12))
  t.same(starts, ['She thanked ', 'Prof. Amara ', 'She cited th', 'The vote was'])
  // Stops after a number or a word are sentence ends as before.
  const other = 'Version 1.2.3. Next one. It ends at 3.5. Then more. We chose Plan B. Then we left. Take vitamin C. It helps. Is it safe? No. It is not.'
  t.same(segmenters.cuts(other, 'sentence').map((c) => other.slice(c, c + 4)), ['Next', 'It e', 'Then', 'We c', 'Then', 'Take', 'It h', 'Is i', 'No. ', 'It i'],
    'and a word that mostly starts a sentence starts one after an abbreviation too')
  const german = 'Betroffen sind z. B. Mail und Kalender. Das heißt, d. h. Schluss. Siehe Nr. 5 und vgl. Abschnitt 3 bzw. Anhang. Neu.'
  t.same(segmenters.cuts(german, 'sentence').map((c) => german.slice(c, c + 4)), ['Das ', 'Sieh', 'Neu.'], 'German abbreviations, with a space between their letters too')
  const legal = 'As held in Roe v. Wade and by the Ninth Cir. Court of Appeals, see Cal. Civ. Code § 1542, 15 U.S.C. § 78 et seq. Under para. Six, Smith et al. Found it. Id. at 5. The court agreed. We studied art. Music came later. I met Ed. Ann came too.'
  t.same(segmenters.cuts(legal, 'sentence').map((c) => legal.slice(c, c + 4)), ['Id. ', 'The ', 'We s', 'Musi', 'I me', 'Ann '], 'legal citations\' abbreviations, and words that are not one')
  const dashed = 'He waited for a long while and the candles burned down to the seal.—Nobody came. Sie ging zu ihr. – Von dort aus sah sie alles. Zahlen 1–2 und Ende.'
  t.same(segmenters.cuts(dashed, 'sentence').map((c) => dashed.slice(c, c + 4)), ['—Nob', 'Sie ', '– Vo', 'Zahl'], 'a stop, then a dash that opens a sentence')
  const lone = 'The answer is x. Next one. Это я. Открой дверь. Il arrive à 5 h. Nous partons. Milch usw. Morgen.'
  t.same(segmenters.cuts(lone, 'sentence').map((c) => lone.slice(c, c + 4)), ['Next', 'Это ', 'Откр', 'Il a', 'Nous', 'Milc', 'Morg'], 'a lone lowercase letter ends a sentence')
})

t.test('sentences: a URL\'s `?` and `!` are no stops, nor a quoted question\'s, nor a Japanese quote\'s end before its particle', async (t) => {
  const pieces = (text: string): string[] => { const cuts = segmenters.cuts(text, 'sentence'); return [0, ...cuts].map((p, i) => text.slice(p, cuts[i] ?? text.length)) }
  t.same(pieces('See https://example.com/search?q=reset and https://app.example.com/#!/Settings now. Why? Because!\nDone.'),
    ['See https://example.com/search?q=reset and https://app.example.com/#!/Settings now. ', 'Why? ', 'Because!\n', 'Done.'])
  t.same(pieces('私は「はい、本当です。」と答えました。「いいえ。」次の文です。本当？はい！'), ['私は「はい、本当です。」と答えました。', '「いいえ。」', '次の文です。', '本当？', 'はい！'])
  t.same(pieces('“Why?” she asked. « Pourquoi ? » demanda-t-il. Is it? Yes! (Really?) yes.'), ['“Why?” she asked. ', '« Pourquoi ? » demanda-t-il. ', 'Is it? ', 'Yes! ', '(Really?) yes.'],
    'a quoted question that a lowercase word goes on after ends no sentence')
  t.same(pieces('你好吗?我很好!谢谢。See /docs?x=1 now.'), ['你好吗?', '我很好!', '谢谢。', 'See /docs?x=1 now.'], 'half-width stops end CJK sentences; only a word with a slash is a URL')
})

t.test('space cuts: after white space, and after a CJK comma, enumeration comma, semicolon or colon', async (t) => {
  const zh = '如果您遇到问题，请先查看帮助中心、常见问题；然后：联系我们。'
  const cuts = segmenters.cuts(zh, 'space')
  t.same([0, ...cuts].map((p, i) => zh.slice(p, cuts[i] ?? zh.length)), ['如果您遇到问题，', '请先查看帮助中心、', '常见问题；', '然后：', '联系我们。'])
  t.same(segmenters.cuts('a, b; c', 'space'), [3, 6], 'ASCII punctuation cuts only where a space follows it')
})

t.test('space cuts: none right after what opens a line of a quote, a list item or a table row', async (t) => {
  const pieces = (text: string): string[] => { const cuts = segmenters.cuts(text, 'space'); return [0, ...cuts].map((p, i) => text.slice(p, cuts[i] ?? text.length)) }
  t.same(pieces('> quoted words\n> - item one\n12. step two\n| a | b |'), ['> quoted ', 'words\n', '> - item ', 'one\n', '12. step ', 'two\n', '| a ', '| ', 'b ', '|'])
  t.same(pieces('  * nested item'), ['  ', '* nested ', 'item'])
  t.same(pieces('a > b - c'), ['a ', '> ', 'b ', '- ', 'c'], 'in the middle of a line they are words like any other')
})
