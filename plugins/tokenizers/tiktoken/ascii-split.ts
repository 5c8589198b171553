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

/**
 * The end of the piece that starts at `at` in the first `n` code units of `units` (see
 * unitsOf), or -1 where the pattern itself must decide.
 */
export type PieceReader = (units: Uint16Array, n: number, at: number) => number

/**
 * The white space of tiktoken's split patterns, as a character class's contents: Rust's `\s`
 * (Unicode White_Space), which is JavaScript's less U+FEFF, plus U+0085 (next line).
 */
export const TIKTOKEN_WHITE_SPACE = String.raw`\t-\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000`

/** Texts shorter than this are copied code unit by code unit; a native call costs more there. */
const MIN_NATIVE = 24
/** Units kept between texts; a longer text gets units of its own, let go after it. */
const KEPT_UNITS = 1 << 16
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1
const raw = Buffer.allocUnsafeSlow(KEPT_UNITS * 2)
const kept = new Uint16Array(raw.buffer, raw.byteOffset, KEPT_UNITS)

/**
 * The UTF-16 code units of `text`, in an array that the next call reuses. Reading a typed array
 * costs less than charCodeAt on the sliced strings that records and lines are (V8 unwraps the
 * slice at every call), and the units are read twice: to find a piece, to look it up.
 */
export function unitsOf (text: string): Uint16Array {
  const n = text.length
  let units = kept
  let bytes = raw
  if (n > KEPT_UNITS) {
    bytes = Buffer.allocUnsafeSlow(n * 2)
    units = new Uint16Array(bytes.buffer, bytes.byteOffset, n)
  }
  if (n < MIN_NATIVE || !LITTLE_ENDIAN) {
    for (let i = 0; i < n; i++) units[i] = text.charCodeAt(i)
  } else {
    bytes.write(text, 0, 'utf16le')
  }
  return units
}

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

const APOSTROPHE = 39

/** The end of `'s`, `'d`, `'m`, `'t`, `'ll`, `'ve` or `'re` (any case) at `i`, or -1. */
function contractionEnd (u: Uint16Array, n: number, i: number): number {
  if (u[i] !== APOSTROPHE) return -1
  const a = i + 1 < n ? u[i + 1]! | 32 : 0
  if (a === 115 || a === 100 || a === 109 || a === 116) return i + 2
  const b = i + 2 < n ? u[i + 2]! | 32 : 0
  if ((a === 108 && b === 108) || (a === 118 && b === 101) || (a === 114 && b === 101)) return i + 3
  return -1
}

/**
 * One reader for both patterns, written flat (one loop per run, no helper per character: 1.6x
 * faster than small functions, measured on logs). They differ in four places, marked `o200k`:
 * cl100k tries a contraction first; o200k's words are an upper-case run then a lower-case run
 * with a contraction after them, cl100k's any run of letters; o200k's punctuation takes `/`
 * with the newlines after it; cl100k takes a run of whitespace to the end of the text whole.
 * Every run stops with -1 on a character outside ASCII: it might continue the run.
 */
function pieceEnd (u: Uint16Array, n: number, at: number, o200k: boolean): number {
  const first = u[at]!
  if (first >= 128) return -1
  if (!o200k && first === APOSTROPHE) {
    const contraction = contractionEnd(u, n, at)
    if (contraction >= 0) return contraction
  }
  const k = CLASS[first]!
  let c = first
  let i = at + 1
  // \p{N}{1,3}
  if (k === DIGIT) {
    for (; i < at + 3; i++) {
      if (i >= n) return i
      c = u[i]!
      if (c >= 128) return -1
      if (CLASS[c] !== DIGIT) return i
    }
    return i
  }
  // [^\r\n\p{L}\p{N}]? then letters: the prefix is taken when a letter follows it.
  let word = -1
  if (k === UPPER || k === LOWER) word = at
  else if (k !== NEWLINE && i < n) {
    c = u[i]!
    if (c >= 128) return -1
    const next = CLASS[c]
    if (next === UPPER || next === LOWER) word = i
  }
  if (word >= 0) {
    i = word
    if (!o200k) {
      for (;; i++) {
        if (i >= n) return i
        c = u[i]!
        if (c >= 128) return -1
        const kc = CLASS[c]
        if (kc !== UPPER && kc !== LOWER) return i
      }
    }
    // [Lu]*[Ll]+ or else [Lu]+[Ll]*: the upper-case run, then the lower-case run, then `'s`...
    for (;; i++) {
      if (i >= n) return i
      c = u[i]!
      if (c >= 128) return -1
      if (CLASS[c] !== UPPER) break
    }
    for (;; i++) {
      if (i >= n) return i
      c = u[i]!
      if (c >= 128) return -1
      if (CLASS[c] !== LOWER) break
    }
    const contraction = c === APOSTROPHE ? contractionEnd(u, n, i) : -1
    return contraction >= 0 ? contraction : i
  }
  // ` ?[^\s\p{L}\p{N}]+` then `[\r\n/]*` (o200k) or `[\r\n]*` (cl100k)
  let punctuation = -1
  if (k === OTHER) punctuation = at
  else if (first === 32 && i < n) {
    c = u[i]!
    if (c >= 128) return -1
    if (CLASS[c] === OTHER) punctuation = i
  }
  if (punctuation >= 0) {
    for (i = punctuation + 1; ; i++) {
      if (i >= n) return i
      c = u[i]!
      if (c >= 128) return -1
      if (CLASS[c] !== OTHER) break
    }
    while (c === 10 || c === 13 || (o200k && c === 47)) {
      if (++i >= n) return i
      c = u[i]!
    }
    return i
  }
  // Whitespace: cl100k's `\s+$` takes a run to the end whole; `\s*[\r\n]+` (o200k) and
  // `\s*[\r\n]` (cl100k) end after the run's last newline; else `\s+(?!\S)` leaves the run's last
  // character for the next piece, unless the text ends there or the run is one character.
  let lastNewline = k === NEWLINE ? at : -1
  for (i = at + 1; i < n; i++) {
    c = u[i]!
    if (c >= 128) return -1
    const kc = CLASS[c]
    if (kc === NEWLINE) lastNewline = i
    else if (kc !== SPACE) break
  }
  if (i >= n && !o200k) return i
  if (lastNewline >= 0) return lastNewline + 1
  return i >= n || i - at === 1 ? i : i - 1
}

/** The end of o200k_base's piece at `at`, or -1 where its pattern must decide. */
export function o200kPieceEnd (units: Uint16Array, n: number, at: number): number {
  return pieceEnd(units, n, at, true)
}

/** The end of cl100k_base's piece at `at`, or -1 where its pattern must decide. */
export function cl100kPieceEnd (units: Uint16Array, n: number, at: number): number {
  return pieceEnd(units, n, at, false)
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
