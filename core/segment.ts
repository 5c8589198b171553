/**
 * Cut points inside a block that is over budget, from coarse to fine. Intl.Segmenter instances
 * are created once, on first use. Every function returns offsets relative to `text`, strictly
 * inside (0 < p < text.length), ascending, and never inside a surrogate pair.
 */
import type { Boundary } from './types.js'

/** `space`: before what follows white space; `word`: before any word, inside a URL or a path too. */
export type CutLevel = 'line' | 'sentence' | 'space' | 'word' | 'grapheme' | 'codepoint'

/** A chunk's `boundary` when it ends at a cut of this level (the schema has no `space` or `codepoint`). */
export const cutBoundary: Record<CutLevel, Boundary> = { line: 'line', sentence: 'sentence', space: 'word', word: 'word', grapheme: 'grapheme', codepoint: 'grapheme' }

export interface Segmenters {
  /** Cut points of `text` at `level`. */
  cuts (text: string, level: CutLevel): number[]
}

let sentenceSegmenter: Intl.Segmenter | undefined
let wordSegmenter: Intl.Segmenter | undefined
let graphemeSegmenter: Intl.Segmenter | undefined

function lineCuts (text: string): number[] {
  const out: number[] = []
  let i = text.indexOf('\n')
  let blankBefore = i !== -1 && whiteSpaceOnly(text, 0, i)
  /** Inside a short run of blank lines that goes with the line before it. */
  let joining = false
  while (i !== -1 && i + 1 < text.length) {
    const next = text.indexOf('\n', i + 1)
    const blank = whiteSpaceOnly(text, i + 1, next === -1 ? text.length : next)
    // A short run of blank lines goes with the line before it: a piece does not start with one
    // (a code block's closing fence and the blank line after it are one piece, not a line and a
    // rest of one token that the widow rule could not keep from standing alone). A long run is
    // cut at its lines, as before: joined, it made the line before it a piece over budget.
    if (!blank) joining = false
    else if (!blankBefore) joining = shortWhiteSpace(text, i + 1)
    if (!blank || !joining) out.push(i + 1)
    blankBefore = blank
    i = next
  }
  return out
}

/** The longest run of white space that goes with the text before it (line cuts, and the packer's pieces). */
export const BLANK_JOIN = 32

/** Whether the white space from `from` ends (at text or at the end) within BLANK_JOIN characters. */
function shortWhiteSpace (text: string, from: number): boolean {
  const limit = Math.min(text.length, from + BLANK_JOIN)
  for (let p = from; p < limit; p++) if (!whiteSpaceCode(text.charCodeAt(p))) return true
  return limit === text.length
}

/** A space, a tab or a line break (LF, VT, FF, CR). */
const whiteSpaceCode = (c: number): boolean => c === 32 || (c >= 9 && c <= 13)

/** Whether text[from, to) holds only spaces, tabs and line breaks (true when empty). */
export function whiteSpaceOnly (text: string, from: number, to: number): boolean {
  for (let p = from; p < to; p++) if (!whiteSpaceCode(text.charCodeAt(p))) return false
  return true
}

/**
 * Intl.Segmenter walks its segments in time quadratic in the text's length (measured: 100,000
 * characters of short lines, 0.19 s for sentences and 0.7 s for words; a 1 MB paragraph took a
 * minute), so a long text is segmented in windows of about SEGMENT_WINDOW characters. A window
 * ends after a newline, where every granularity breaks (Unicode's rules break after a line
 * feed), else after a space before a letter, digit or punctuation below U+0300 (a word and a
 * grapheme boundary, not a sentence one: see segmentStarts), else at a code point.
 */
const SEGMENT_WINDOW = 8192

function windowEnd (text: string, from: number): number {
  const limit = from + SEGMENT_WINDOW
  if (limit >= text.length) return text.length
  const half = from + (SEGMENT_WINDOW >> 1)
  // Both searches stay inside the window's second half (lastIndexOf would run back to the
  // start of a text without newlines, at every window).
  for (let p = limit; p > half; p--) if (text.charCodeAt(p - 1) === 10) return p
  for (let p = limit; p > half; p--) {
    const c = text.charCodeAt(p)
    if (text.charCodeAt(p - 1) === 32 && c > 32 && c < 0x300) return p
  }
  const c = text.charCodeAt(limit)
  return c >= 0xdc00 && c <= 0xdfff ? limit + 1 : limit
}

/** Sentence ends this close to a window's edge are found again in the next window, with what follows them in view. */
const EDGE_LOOKAHEAD = 64

/**
 * Segment starts in `text`, a window at a time. For words and graphemes a window's edge is a
 * boundary (see windowEnd). For sentences only an edge after a newline is (a hard break; soft
 * ones are spaces by then): elsewhere the sentence may go on past it, so the next window starts
 * again at the last sentence start found in this one, and the edge itself is never a cut (a
 * text of no sentence ends had a false one every 8 KiB, labelled `sentence`).
 */
function segmentStarts (text: string, segmenter: Intl.Segmenter, wordsOnly: boolean, sentences = false): number[] {
  const out: number[] = []
  // Whether the window's start is a cut to report (a window after an edge that breaks).
  let startIsCut = false
  for (let from = 0; from < text.length;) {
    const to = windowEnd(text, from)
    const firstOut = out.length
    for (const s of segmenter.segment(text.slice(from, to))) {
      if (s.index === 0 && !startIsCut) continue
      // A cut before a word keeps punctuation and spaces with the word before them.
      if (wordsOnly && s.isWordLike !== true) continue
      out.push(from + s.index)
    }
    startIsCut = !sentences || text.charCodeAt(to - 1) === 10
    if (startIsCut || to === text.length) {
      from = to
      continue
    }
    // Back to the last sentence start not too close to the edge (in `out` already), and on from there.
    while (out.length > firstOut && out[out.length - 1]! > to - EDGE_LOOKAHEAD) out.pop()
    from = out.length > firstOut ? out[out.length - 1]! : to
  }
  return out
}

/**
 * Text where every character is its own grapheme: below U+0300 (no combining marks) or in the
 * CJK and precomposed Hangul blocks, minus the combining kana marks. Intl.Segmenter costs about
 * a microsecond per character (measured); this check and the cut loop cost nanoseconds.
 */
const SIMPLE_GRAPHEMES = /^[\u0000-\u02ff\u3040-\u3098\u309b-\u9fff\uac00-\ud7a3]*$/
const ASCII = /^[\u0000-\u007f]*$/
/** ASCII characters that continue a word (so no cut before the next letter). */
const WORD_CHAR = /[A-Za-z0-9_'.]/

function simpleGraphemeCuts (text: string): number[] {
  const out: number[] = []
  for (let i = 1; i < text.length; i++) {
    if (text.charCodeAt(i) === 10 && text.charCodeAt(i - 1) === 13) continue
    out.push(i)
  }
  return out
}

/** Cuts before each ASCII word that follows a space or punctuation. */
function asciiWordCuts (text: string): number[] {
  const out: number[] = []
  const word = /[A-Za-z0-9]+/g
  let m: RegExpExecArray | null
  while ((m = word.exec(text)) !== null) {
    if (m.index > 0 && !WORD_CHAR.test(text[m.index - 1]!)) out.push(m.index)
  }
  return out
}

/** Whether the code unit is white space a line may break at (not a no-break space). */
function breakingSpace (c: number): boolean {
  return whiteSpaceCode(c) || c === 0x1680 || (c >= 0x2000 && c <= 0x200a && c !== 0x2007) ||
    c === 0x2028 || c === 0x2029 || c === 0x205f || c === 0x3000
}

/**
 * A full-width comma, enumeration comma, semicolon or colon: where Chinese and Japanese, which
 * put no spaces between words, pause inside a sentence (`您的网络连接和浏览器设置，然后…`).
 */
const cjkPause = (c: number): boolean => c === 0x3001 || c === 0xFF0C || c === 0xFF1B || c === 0xFF1A

/**
 * Cuts after white space, before what follows it, and after a CJK pause (cjkPause). Word cuts
 * alone broke URLs, link targets and code spans at their slashes and dots
 * (`https://tools.ietf.org/html/ ‖ rfc8174`) when a space was a few characters away, and a long
 * CJK sentence between any two words; words are cut inside only when a piece between spaces
 * (or pauses) is over budget alone.
 */
function spaceCuts (text: string): number[] {
  const out: number[] = []
  let lineStart = 0
  for (let i = 1; i < text.length; i++) {
    const before = text.charCodeAt(i - 1)
    if (before === 10 || before === 13) lineStart = i
    if ((breakingSpace(before) || cjkPause(before)) && !breakingSpace(text.charCodeAt(i)) &&
      (i - lineStart > MARKER_MAX || !LINE_MARKERS.test(text.slice(lineStart, i)))) out.push(i)
  }
  return out
}

/** A mark, a zero-width joiner or an emoji modifier: it belongs to the grapheme cluster of what is before it (UAX #29 GB9, GB9a). */
const CLUSTER_EXTENDER = /[\p{M}\u200D\u{1F3FB}-\u{1F3FF}]/uy

/**
 * The cuts that fall between grapheme clusters: not before a mark, a joiner or an emoji
 * modifier, which belong with what precedes them. A space cut left a combining accent or a
 * ZWJ at a chunk's start, and the sentence rules cut `.🏻` (a modifier is no Extend to them).
 * After a line break is always a cluster's start (GB4, GB5).
 */
function betweenClusters (text: string, cuts: number[]): number[] {
  return cuts.filter((p) => {
    if (text.charCodeAt(p) < 0x300) return true
    CLUSTER_EXTENDER.lastIndex = p
    return !CLUSTER_EXTENDER.test(text)
  })
}

/** What opens a line of a quote, a list item or a table row: `> `, `- `, `12. `, `| ` (a pattern's source). */
export const LINE_MARKER = /(?:[>*+|-]|\d{1,9}[.)])[ \t]+/.source
/**
 * Markers alone from a line's start (`> - `): no space cut after them, so that no piece is a
 * marker alone, to end a chunk (after a heading) or start one.
 */
const LINE_MARKERS = new RegExp(`^[ \\t]*(?:${LINE_MARKER})+$`)

function codepointCuts (text: string): number[] {
  const out: number[] = []
  for (let i = 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xdc00 && c <= 0xdfff) {
      const p = text.charCodeAt(i - 1)
      if (p >= 0xd800 && p <= 0xdbff) continue
    }
    out.push(i)
  }
  return out
}

/** A line break with none next to it: one that wraps a paragraph's lines, not a blank line. */
const SOFT_BREAK = /(?<![\r\n])(?:\r\n|\r|\n)(?![\r\n])/g

/**
 * The text with its soft line breaks as spaces (same length, so the same offsets). Unicode's
 * sentence rules break after every line break, so hard-wrapped prose (licences, RFCs, specs)
 * had a "sentence" end at each line, mid-sentence; its lines are the next level down.
 */
export function softBreaksAsSpaces (text: string): string {
  return text.replace(SOFT_BREAK, (m) => m.length === 2 ? '  ' : ' ')
}

/**
 * The sentence cuts of a text of white space alone (a run of blank lines), as Intl.Segmenter
 * makes them: after each line break that is not soft (CR LF is one). The segmenter took about
 * 2 µs a line, 2 s for 1 MB of blank lines.
 */
function blankSentenceCuts (text: string): number[] {
  const soft = softBreaksAsSpaces(text)
  const out: number[] = []
  for (let i = 0; i < soft.length - 1; i++) {
    const c = soft.charCodeAt(i)
    if (c === 10 || (c === 13 && soft.charCodeAt(i + 1) !== 10)) out.push(i + 1)
  }
  return out
}

/** Opening brackets and quotes (`(`, `「`, `“`, `«`). */
const OPENER = /[\p{Ps}\p{Pi}]/u
const SPACE = /\s/

/** Whether text[i] opens: an opening bracket or quote, or a straight quote after a space (or at the start). */
function opens (text: string, i: number): boolean {
  const c = text[i]!
  if (c === '"' || c === "'") return i === 0 || SPACE.test(text[i - 1]!)
  return OPENER.test(c)
}

/**
 * Unicode's sentence rules keep the quotes and brackets after a sentence's stop with it, so
 * `参数。“super” 调用` had its next sentence's opening quote at the end of the one before; word
 * cuts, made before a word, left `(` and `“` behind too. A cut moves back over opening quotes
 * and brackets that touch the text after them (a German closing `“` is followed by a space,
 * and stays).
 */
function openersToNext (text: string, cuts: number[]): number[] {
  for (let i = 0; i < cuts.length; i++) {
    let p = cuts[i]!
    const floor = i > 0 ? cuts[i - 1]! + 1 : 1
    if (p >= text.length || SPACE.test(text[p]!)) continue
    while (p > floor && opens(text, p - 1)) p--
    cuts[i] = p
  }
  return cuts
}

/** Characters that open and close emphasis or code in lightweight markup (`**`, `_`, `~~`, a backtick). */
const MARKUP = /[*_~`]/
/** A piece that is only a list marker: `6.`, `b)`, `iv.`. */
const ENUMERATOR = /^\s*(?:\d{1,9}|[A-Za-z]|[ivxlcdm]{1,7}|[IVXLCDM]{1,7})[.)]\s*$/
/** No list marker with its spaces is longer. */
const MARKER_MAX = 24

/**
 * Unicode's sentence rules know no markup. A stop inside a code span (`` `?` ``: an odd number
 * of backticks since the line's start) ends no sentence; the `**` or backtick that closes
 * emphasis after a stop (`**Rule.** Next`) goes with the sentence it closes, not the next one;
 * and a list marker (`6.  If ...`) is not a sentence of its own. One pass over the text.
 */
function markupAware (text: string, cuts: number[]): number[] {
  const out: number[] = []
  let ticks = 0
  let read = 0
  for (let i = 0; i < cuts.length; i++) {
    let p = cuts[i]!
    for (; read < p; read++) {
      const c = text.charCodeAt(read)
      if (c === 10 || c === 13) ticks = 0
      else if (c === 96) ticks++
    }
    if (ticks % 2 === 1) continue
    if (MARKUP.test(text[p]!)) {
      let q = p
      while (q < text.length && MARKUP.test(text[q]!)) q++
      if (q === text.length || breakingSpace(text.charCodeAt(q))) {
        while (q < text.length && (text[q] === ' ' || text[q] === '\t')) q++
        if (q >= text.length || (i + 1 < cuts.length && q >= cuts[i + 1]!)) continue
        p = q
      }
    }
    const from = out.length > 0 ? out[out.length - 1]! : 0
    if (p - from <= MARKER_MAX && ENUMERATOR.test(text.slice(from, p))) continue
    out.push(p)
  }
  return out
}

/**
 * A text that ends in an abbreviation after which a sentence seldom ends: a title (`Dr.`,
 * `Prof.`, `St.`), an initial (`J.`), letters with stops (`U.S.`, `e.g.`, `a.m.`), a company or
 * reference word (`Inc.`, `No.`, `Fig.`, `pp.`), a legal citation's (`Roe v. Wade`, `Cal. Civ. Code`,
 * `9th Cir.`, `et al.`, `para.`), a month (`Jan.`), German ones (`Nr.`, `bzw.`,
 * `vgl.`, and the second letter of the spaced `z. B.`, `d. h.`; for the first, see GERMAN_PAIR). Unicode's sentence rules end
 * a sentence at any stop before a capital, and V8's Intl.Segmenter applies none of ICU's
 * suppression lists, so `the U.S. | Department` and `Prof. | Amara Osei` were cut apart.
 */
const ABBREVIATION = /(?:^|[^\p{L}\p{N}.])(?:Mr|Mrs|Ms|Mx|Dr|Prof|Sr|Jr|St|Mt|Ft|Capt|Col|Gen|Lt|Sgt|Cmdr|Adm|Rev|Hon|Gov|Sen|Rep|Pres|Supt|Messrs|Mme|Mlle|Ph\.D|vs|cf|approx|Inc|Ltd|Corp|Dept|Univ|Bros|No|Nos|Vol|Fig|Figs|Eq|Eqs|Sec|Ch|Art|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|pp?|v|Co|Cir|Cal|Civ|Ct|Supp|Stat|Reg|Dist|Fed|Const|Amend|Proc|Crim|Evid|Eds|ed|eds|para|paras|vol|vols|ch|ss|et al|et seq|Id|Nr|bzw|ggf|vgl|evtl|inkl|bspw|bzgl|zzgl|sog|ca|\p{Lu}|(?:\p{L}\.)+\p{L}|[a-zäöü]\. [a-zäöüA-ZÄÖÜ])\.$/u
/**
 * German writes some abbreviations as two letters with a space (`z. B.`, `d. h.`, `u. a.`,
 * `z. T.`): no cut between them, a lowercase letter and its stop, then a letter and its stop.
 * (A lone lowercase letter ends a sentence elsewhere: `The answer is x. Next.`)
 */
const LOWER_INITIAL = /(?:^|[^\p{L}\p{N}.])[a-zäöü]\.$/u
const GERMAN_PAIR = /^[a-zäöüA-ZÄÖÜ]\.\s/

/** No abbreviation above, with what may come before it, is longer. */
const ABBREVIATION_MAX = 24
/**
 * Words that mostly start a sentence: after an abbreviation's stop they still end it (`Plan B.
 * Then`, `vitamin C. It`, `in the U.S. The`, `Is it safe? No. It is`).
 */
const SENTENCE_START = /^(?:The|This|That|These|Those|There|Then|It|Its|A|An|In|On|At|He|She|We|They|I|You|But|And|So|If|When|As|For|Yes|After|Before|However|Also)\b/

/** Sentence cuts without those right after an abbreviation (see ABBREVIATION). */
function abbreviationAware (text: string, cuts: number[]): number[] {
  return cuts.filter((p) => {
    // Back over the spaces before the cut, a few only: a run of blank lines has a cut at every
    // line feed, and a walk to its start from each was quadratic in the run.
    let e = p
    while (e > 0 && p - e < ABBREVIATION_MAX && breakingSpace(text.charCodeAt(e - 1))) e--
    if (text.charCodeAt(e - 1) !== 46 /* . */ || SENTENCE_START.test(text.slice(p, p + 12))) return true
    const before = text.slice(Math.max(0, e - ABBREVIATION_MAX), e)
    return !ABBREVIATION.test(before) && !(LOWER_INITIAL.test(before) && GERMAN_PAIR.test(text.slice(p, p + 3)))
  })
}

/** How far back a `?` or `!` is looked at for the slash of a URL or path it is in. */
const URL_LOOKBEHIND = 2048

/**
 * Unicode's rules end a sentence at `?` and `!` whatever follows, so a URL's query or fragment
 * (`/search?q=reset`, `/#!/settings`) was cut there, as a sentence end, when it fitted whole.
 * An ASCII `?` or `!` with no white space after it, in a word that holds a `/` (a URL, a path),
 * ends no sentence; elsewhere it does (`你好吗?我很好!` has no spaces to wait for).
 */
function stopsInUrls (text: string, cuts: number[]): number[] {
  return cuts.filter((p) => {
    const stop = text.charCodeAt(p - 1)
    if ((stop !== 63 /* ? */ && stop !== 33 /* ! */) || breakingSpace(text.charCodeAt(p))) return true
    for (let i = p - 2; i >= 0 && i >= p - URL_LOOKBEHIND; i--) {
      const c = text.charCodeAt(i)
      if (c === 47 /* / */) return false
      if (breakingSpace(c)) break
    }
    return true
  })
}

/** A closing quote or bracket (`”`, `»`, `)`, `」`) or a straight quote. */
const CLOSER = /[\p{Pe}\p{Pf}"']/u
const LOWER = /\p{Ll}/u
/** Stops that end a question or an exclamation, ASCII and full-width. */
const STOPS = ['?', '!', '？', '！']

/**
 * Unicode's rules end a sentence at `?` or `!` before anything but a lowercase letter right
 * after it, so a quoted question went on in the next chunk (`“Why?” | she asked`, `« Pourquoi ?
 * | » demanda-t-il`). A cut between `?` or `!` and a lowercase letter, with only closing quotes
 * or brackets and spaces between them, is no sentence end. `text` with its soft line breaks as
 * spaces (a hard-wrapped `“Why?”\nshe asked` too).
 */
function quotedQuestionsContinued (text: string, cuts: number[]): number[] {
  // Not a line break: a blank line ends any sentence (soft line breaks are spaces in `text`).
  const between = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\u00A0' || (c !== undefined && CLOSER.test(c))
  return cuts.filter((p) => {
    let after = p
    while (after - p < ABBREVIATION_MAX && between(text[after])) after++
    if (!LOWER.test(text[after] ?? '')) return true
    let before = p - 1
    while (before > 0 && p - before < ABBREVIATION_MAX && between(text[before])) before--
    return !STOPS.includes(text[before] ?? '')
  })
}

/**
 * Japanese quotes a sentence in 「」 or 『』 and goes on after it (`「はい。」と答えた。`): the stop
 * inside the quote ended a sentence, and the quotative particle after it started the next one.
 * No cut after a closing corner bracket that hiragana follows.
 */
function quotationsContinued (text: string, cuts: number[]): number[] {
  return cuts.filter((p) => {
    const close = text.charCodeAt(p - 1)
    const next = text.charCodeAt(p)
    return !((close === 0x300D || close === 0x300F) && next >= 0x3041 && next <= 0x3096)
  })
}

/** A stop, then a dash that opens the next sentence: `the seal.—Nobody`, German `ihr. – Von`. */
const STOP_DASH = /[.!?]["'”’»)]?\s?(?=[—–]\s?\p{Lu})/gu

/**
 * Unicode's rules (SB8a) end no sentence at a stop that a dash follows, so a long speech of
 * old print (`left.—Then`) or German (`ihr. – Von`) had no sentence cut and was cut at a word.
 * Adds a cut before such a dash.
 */
function dashedStops (text: string, cuts: number[]): number[] {
  if (!text.includes('—') && !text.includes('–')) return cuts
  const extra: number[] = []
  for (const m of text.matchAll(STOP_DASH)) extra.push(m.index + m[0].length)
  if (extra.length === 0) return cuts
  return [...new Set([...cuts, ...extra])].sort((a, b) => a - b)
}

export const segmenters: Segmenters = {
  cuts (text, level) {
    switch (level) {
      case 'line':
        return lineCuts(text)
      case 'sentence': {
        if (whiteSpaceOnly(text, 0, text.length)) return blankSentenceCuts(text)
        sentenceSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'sentence' })
        const soft = softBreaksAsSpaces(text)
        const cuts = quotedQuestionsContinued(soft, quotationsContinued(text, stopsInUrls(text, segmentStarts(soft, sentenceSegmenter, false, true))))
        return betweenClusters(text, abbreviationAware(text, markupAware(text, openersToNext(text, dashedStops(text, cuts)))))
      }
      case 'space':
        return betweenClusters(text, spaceCuts(text))
      case 'word':
        if (ASCII.test(text)) return openersToNext(text, asciiWordCuts(text))
        wordSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' })
        return betweenClusters(text, openersToNext(text, segmentStarts(text, wordSegmenter, true)))
      case 'grapheme':
        if (SIMPLE_GRAPHEMES.test(text)) return simpleGraphemeCuts(text)
        graphemeSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' })
        return segmentStarts(text, graphemeSegmenter, false)
      case 'codepoint':
        return codepointCuts(text)
    }
  },
}

/**
 * Keeps cut points at least `spacing` apart: one piece per grapheme costs microseconds per
 * character on a 5 MB run of one character, while grapheme cuts budget/16 characters apart
 * still keep every piece far under the budget.
 */
export function thinCuts (cuts: number[], spacing: number): number[] {
  const out: number[] = []
  let last = 0
  for (const p of cuts) if (p - last >= spacing) { out.push(p); last = p }
  return out
}

/** The order in which a block over budget is cut, by its cut style. */
export const cutLevels = {
  prose: ['sentence', 'line', 'space', 'word', 'grapheme', 'codepoint'],
  lines: ['line', 'space', 'word', 'grapheme', 'codepoint'],
} as const satisfies Record<string, readonly CutLevel[]>
