/**
 * An exact running count for the BPE encodings, each part read about once.
 *
 * tiktoken-style encoders split the text with a regular expression into pieces and run BPE on
 * each piece alone, so the count of a text is the sum of its pieces' counts. Two texts joined
 * are split differently only near the join. Some positions are a piece boundary whatever
 * comes before or after them (see `isStable`); at such a position the count is additive:
 * count(a + b) = count(a) + count(b). The tally keeps the count of everything up to the last
 * stable position it has seen and recounts only the text after it (usually the last line).
 */
import type { Tally } from '../../../core/types.js'
import { TIKTOKEN_WHITE_SPACE } from './ascii-split.js'

const NEWLINE = 10
const RETURN = 13
const SPACE = 32
const SLASH = 47
const APOSTROPHE = 39

/** White space as the split pattern reads it (Rust's `\s`: see withTiktokenWhiteSpace). */
const WHITESPACE = new RegExp(`[${TIKTOKEN_WHITE_SPACE}]`, 'u')
/** The code point that ends a string is a letter. */
const ENDS_WITH_LETTER = /\p{L}$/u
/** The code point that starts a string may continue a word piece (letters, marks, `'s`). */
const CONTINUES_WORD = /^[\p{L}\p{M}']/u

function isAsciiLetter (c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
}

function isWhitespace (text: string, i: number): boolean {
  const c = text.charCodeAt(i)
  return c < 128 ? c === SPACE || (c >= 9 && c <= 13) : WHITESPACE.test(text[i]!)
}

/** Whether the whitespace run at `p` ends before a newline, inside `text`. */
function runEndsWithoutNewline (text: string, p: number): boolean {
  for (let i = p; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === NEWLINE || c === RETURN) return false
    if (!isWhitespace(text, i)) return true
  }
  return false
}

/**
 * Whether `p` is a piece boundary of every text that has the same characters around it, and
 * the count of text[0, p) alone is the count of its pieces in the longer text, under the split
 * patterns of r50k, p50k, cl100k and o200k (the pattern splits text into pieces; BPE then
 * merges inside each piece alone):
 * - after a letter, before anything that cannot continue a word (a letter, a mark, the `'` of
 *   a contraction): every pattern's word piece holds only letters and marks after its first
 *   character, so a word ends there, alone or not;
 * - after a newline, before a character that is neither whitespace nor `/`: the only pieces that
 *   hold a newline are runs of whitespace and punctuation followed by newlines (o200k adds `/`
 *   to those newlines), so none reaches past it. cl100k and o200k (`wholeNewlineRuns`) take a
 *   run of whitespace up to its last newline as one piece whatever follows, so for them a run
 *   of whitespace without a newline may follow too; r50k and p50k leave the last whitespace
 *   character of a run for the next piece unless the text ends there, so for them the newline
 *   must follow a character that is not whitespace.
 */
export function isStable (text: string, p: number, wholeNewlineRuns: boolean): boolean {
  if (p <= 0 || p >= text.length) return false
  const c = text.charCodeAt(p)
  const before = text.charCodeAt(p - 1)
  if (before === NEWLINE) {
    if (c === SLASH) return false
    if (!isWhitespace(text, p)) return wholeNewlineRuns || p === 1 || !isWhitespace(text, p - 2)
    return wholeNewlineRuns && runEndsWithoutNewline(text, p)
  }
  const letterBefore = before < 128 ? isAsciiLetter(before) : ENDS_WITH_LETTER.test(text.slice(Math.max(0, p - 2), p))
  if (!letterBefore) return false
  return c < 128 ? !isAsciiLetter(c) && c !== APOSTROPHE : !CONTINUES_WORD.test(text.slice(p, p + 2))
}

/** The last stable position in text(from, text.length), or -1. */
function lastStable (text: string, from: number, wholeNewlineRuns: boolean): number {
  for (let p = text.length - 1; p > from; p--) if (isStable(text, p, wholeNewlineRuns)) return p
  return -1
}

/**
 * The first stable position of `part` from its third character on, or -1. From there on,
 * isStable reads only characters of `part`, so the position is stable in any text that ends
 * with `part`, and the count of `part` adds up there.
 */
function firstStable (part: string, wholeNewlineRuns: boolean): number {
  for (let p = 2; p < part.length; p++) if (isStable(part, p, wholeNewlineRuns)) return p
  return -1
}

/** Characters of a part read to judge the join: a run of whitespace longer than this is not. */
const JOIN_WINDOW = 64

export class BpeTally implements Tally {
  /** The count of the text before `tail`. */
  private settled = 0
  /** The text since the last stable position settled, and its count. */
  private tail = ''
  private tailCount = 0
  /** Leading characters of `tail` known to hold no stable position from the third on. */
  private scanned = 0
  private readonly saved = { settled: 0, tail: '', tailCount: 0, scanned: 0 }
  /** The part added last, and its own count when known (-1). */
  private last = ''
  private lastCount = -1

  /** `wholeNewlineRuns`: the encoding splits whitespace as cl100k and o200k do (see isStable). */
  constructor (private readonly count: (text: string) => number, private readonly wholeNewlineRuns: boolean) {}

  add (part: string, known?: number): number {
    const saved = this.saved
    saved.settled = this.settled
    saved.tail = this.tail
    saved.tailCount = this.tailCount
    saved.scanned = this.scanned
    this.last = part
    this.lastCount = 0
    if (part.length === 0) return this.settled + this.tailCount
    if (this.tail.length === 0 || this.joinsStably(part)) {
      // The usual case (parts are lines, records, blocks): the tail is final, the part counted once.
      this.settled += this.tailCount
      this.tail = part
      this.tailCount = this.lastCount = known ?? this.count(part)
      this.scanned = 0
      return this.settled + this.tailCount
    }
    // The join may merge pieces: recount only from the tail's last stable position to the
    // part's first, so each part is read about once even when every join is unstable (code
    // blocks that end in `}` before the next one's newline).
    this.lastCount = known ?? -1
    this.trimTail()
    const at = firstStable(part, this.wholeNewlineRuns)
    if (at === -1) {
      this.tail += part
      this.tailCount = this.count(this.tail)
      return this.settled + this.tailCount
    }
    const head = part.slice(0, at)
    const rest = part.slice(at)
    this.settled += this.count(this.tail + head)
    this.tail = rest
    this.tailCount = known === undefined ? this.count(rest) : known - this.count(head)
    this.scanned = 0
    return this.settled + this.tailCount
  }

  /** Settles the tail up to its last stable position (from its third character on). */
  private trimTail (): void {
    const tail = this.tail
    const p = lastStable(tail, Math.max(1, this.scanned - 2), this.wholeNewlineRuns)
    this.scanned = tail.length
    if (p === -1) return
    const end = tail.slice(p)
    const endCount = this.count(end)
    this.settled += this.tailCount - endCount
    this.tail = end
    this.tailCount = endCount
    this.scanned = end.length
  }

  /** isStable at the join of the tail and `part`, read from the few characters around it. */
  private joinsStably (part: string): boolean {
    const tail = this.tail
    // With one character of tail, the one before it is settled text: unknown here.
    if (tail.length === 1 && this.settled > 0 && !this.wholeNewlineRuns) return false
    // The usual joins, read in place (isStable's own cases): a new line that does not start with
    // whitespace or `/`, and what follows an ASCII letter. Building the text around the join
    // cost four strings a record.
    const before = tail.charCodeAt(tail.length - 1)
    const c = part.charCodeAt(0)
    if (before < 128 && c < 128) {
      if (before !== NEWLINE) return isAsciiLetter(before) && !isAsciiLetter(c) && c !== APOSTROPHE
      if (c === SLASH) return false
      if (c !== SPACE && (c < 9 || c > 13)) return this.wholeNewlineRuns || tail.length === 1 || !isWhitespace(tail, tail.length - 2)
    }
    const left = tail.length > 2 ? tail.slice(-2) : tail
    return isStable(left + part.slice(0, JOIN_WINDOW), left.length, this.wholeNewlineRuns)
  }

  backlog (): number {
    this.trimTail()
    return this.tail.length
  }

  undo (): number {
    this.settled = this.saved.settled
    this.tail = this.saved.tail
    this.tailCount = this.saved.tailCount
    this.scanned = this.saved.scanned
    return this.settled + this.tailCount
  }

  restart (): number {
    this.settled = 0
    this.tail = this.last
    this.tailCount = this.lastCount >= 0 ? this.lastCount : this.count(this.last)
    this.lastCount = this.tailCount
    this.scanned = 0
    return this.tailCount
  }
}
