/**
 * The split patterns of o200k_base and cl100k_base, read by hand where the text is ASCII.
 *
 * The pattern is most of the counting cost once pieces come from a cache (bpe-core.ts), and V8
 * runs its Unicode property classes slowly. Here each pattern's alternatives are followed in
 * their order, greedy as the regular expression is, over a table of ASCII classes. Whenever a
 * decision would read a character outside ASCII (a letter, a mark, a digit or a space of another
 * script may continue a run), the reader answers -1 and the caller asks the pattern itself, so
 * the pieces are the pattern's pieces on any text (a property test compares them).
 *
 * No imports: the counting workers load this file through bpe-core.ts.
 */

/** The end of the piece that starts at `at`, or -1 where the pattern itself must decide. */
export type PieceReader = (text: string, at: number) => number

const UPPER = 1
const LOWER = 2
const DIGIT = 3
/** \s without CR and LF: tab, vertical tab, form feed, space. */
const SPACE = 4
/** CR, LF. */
const NEWLINE = 5
/** Anything else: punctuation, symbols, control characters (`[^\s\p{L}\p{N}]`). */
const OTHER = 6

const CLASS = new Uint8Array(128).fill(OTHER)
for (let c = 65; c <= 90; c++) CLASS[c] = UPPER
for (let c = 97; c <= 122; c++) CLASS[c] = LOWER
for (let c = 48; c <= 57; c++) CLASS[c] = DIGIT
for (const c of [9, 11, 12, 32]) CLASS[c] = SPACE
CLASS[10] = NEWLINE
CLASS[13] = NEWLINE

/** Marks a character outside ASCII: the reader must not decide on it. */
const FOREIGN = 0
/** Past the end of the text. */
const END = 7

function classAt (text: string, i: number): number {
  if (i >= text.length) return END
  const c = text.charCodeAt(i)
  return c < 128 ? CLASS[c]! : FOREIGN
}

const isLetter = (k: number): boolean => k === UPPER || k === LOWER

/** The end of `'s`, `'d`, `'m`, `'t`, `'ll`, `'ve` or `'re` (any case) at `i`, or -1. */
function contractionEnd (text: string, i: number): number {
  if (text.charCodeAt(i) !== 39) return -1
  const a = text.charCodeAt(i + 1) | 32
  if (a === 115 || a === 100 || a === 109 || a === 116) return i + 2
  const b = text.charCodeAt(i + 2) | 32
  if ((a === 108 && b === 108) || (a === 118 && b === 101) || (a === 114 && b === 101)) return i + 3
  return -1
}

/** The end of the run of characters of class `k` (or `k2`) from `i`, or -1 if a foreign character ends it. */
function runEnd (text: string, i: number, k: number, k2 = k): number {
  for (;;) {
    const c = classAt(text, i)
    if (c === FOREIGN) return -1
    if (c !== k && c !== k2) return i
    i++
  }
}

/** Where `\p{N}{1,3}` ends from the digit at `at`, or -1. */
function digitsEnd (text: string, at: number): number {
  let i = at + 1
  while (i < at + 3) {
    const c = classAt(text, i)
    if (c === FOREIGN) return -1
    if (c !== DIGIT) break
    i++
  }
  return i
}

/** Where `P+` and then the run of `tail` characters end, from `i`; -1 where a foreign character decides. */
function punctuationEnd (text: string, i: number, slashInTail: boolean): number {
  const end = runEnd(text, i, OTHER)
  if (end < 0) return -1
  for (let j = end; ; j++) {
    const c = j < text.length ? text.charCodeAt(j) : -1
    if (c !== 10 && c !== 13 && !(slashInTail && c === 47)) return j
  }
}

/**
 * The whitespace alternatives at a run [at, run): `\s*[\r\n]+` (o200k) or `\s*[\r\n]` (cl100k)
 * ends after the run's last newline; else `\s+(?!\S)` leaves the run's last character for the
 * next piece, unless the text ends there or the run is one character (`\s+` / `\s` take it).
 */
function whitespaceEnd (text: string, at: number, run: number): number {
  for (let i = run - 1; i >= at; i--) {
    const c = text.charCodeAt(i)
    if (c === 10 || c === 13) return i + 1
  }
  if (run === text.length || run - at === 1) return run
  return run - 1
}

/** No word starts here (-1 stays: a character outside ASCII decides). */
const NO_WORD = -2

/**
 * Where the word of `[^\r\n\p{L}\p{N}]?` and letters starts, for the character of class `k` at
 * `at`: the optional prefix is taken when a letter follows it.
 */
function wordStart (text: string, at: number, k: number): number {
  if (isLetter(k)) return at
  if (k === NEWLINE || k === DIGIT) return NO_WORD
  const next = classAt(text, at + 1)
  if (next === FOREIGN) return -1
  return isLetter(next) ? at + 1 : NO_WORD
}

/**
 * The alternatives after the words, alike in both patterns: `\p{N}{1,3}`, then
 * ` ?[^\s\p{L}\p{N}]+` with its tail of newlines (and `/` in o200k), then whitespace, where
 * cl100k's `\s+$` takes a run to the end whole, newlines or not.
 */
function restEnd (text: string, at: number, k: number, o200k: boolean): number {
  if (k === DIGIT) return digitsEnd(text, at)
  if (k === OTHER) return punctuationEnd(text, at, o200k)
  if (text.charCodeAt(at) === 32) {
    const next = classAt(text, at + 1)
    if (next === FOREIGN) return -1
    if (next === OTHER) return punctuationEnd(text, at + 1, o200k)
  }
  const run = runEnd(text, at, SPACE, NEWLINE)
  if (run < 0) return -1
  return !o200k && run === text.length ? run : whitespaceEnd(text, at, run)
}

/** The end of o200k_base's piece at `at`, or -1 where its pattern must decide. */
export function o200kPieceEnd (text: string, at: number): number {
  const k = classAt(text, at)
  if (k === FOREIGN) return -1
  const word = wordStart(text, at, k)
  if (word === -1) return -1
  if (word === NO_WORD) return restEnd(text, at, k, true)
  // [Lu]*[Ll]+ or else [Lu]+[Ll]*: the upper-case run, then any lower-case run, then `'s`...
  const upper = runEnd(text, word, UPPER)
  if (upper < 0) return -1
  const lower = runEnd(text, upper, LOWER)
  if (lower < 0) return -1
  const contraction = contractionEnd(text, lower)
  return contraction >= 0 ? contraction : lower
}

/** The end of cl100k_base's piece at `at`, or -1 where its pattern must decide. */
export function cl100kPieceEnd (text: string, at: number): number {
  const k = classAt(text, at)
  if (k === FOREIGN) return -1
  const contraction = contractionEnd(text, at)
  if (contraction >= 0) return contraction
  const word = wordStart(text, at, k)
  if (word === -1) return -1
  return word === NO_WORD ? restEnd(text, at, k, false) : runEnd(text, word, UPPER, LOWER)
}

/** The hand reader for a split pattern, by its source; undefined for the others (r50k, p50k). */
export function asciiReaderFor (source: string): PieceReader | undefined {
  if (source === O200K_SOURCE) return o200kPieceEnd
  if (source === CL100K_SOURCE) return cl100kPieceEnd
  return undefined
}

/** The patterns read here, as gpt-tokenizer 4 writes them: another pattern keeps its regular expression. */
export const O200K_SOURCE = String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?:'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE]))?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
export const CL100K_SOURCE = String.raw`'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+$|\s*[\r\n]|\s+(?!\S)|\s`
