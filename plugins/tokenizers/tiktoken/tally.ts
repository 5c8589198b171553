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

const NEWLINE = 10
const SPACE = 32
const SLASH = 47

function isAsciiLetter (c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
}

const WHITESPACE = /\s/u

/**
 * Whether `p` is a piece boundary of every text that has the same characters around it, and
 * the count of text[0, p) alone is the count of its pieces in the longer text, under the split
 * patterns of r50k, p50k, cl100k and o200k:
 * - after a newline, before a character that is neither whitespace nor `/`: the only pieces that
 *   hold a newline are runs of whitespace and punctuation followed by newlines (o200k adds `/`
 *   to those newlines), so none reaches past it, and a piece starts there. cl100k and o200k take
 *   a run of whitespace up to its last newline as one piece whatever follows; r50k and p50k
 *   leave the last whitespace character of a run for the next piece unless the text ends
 *   there, so for them the newline must follow a character that is not whitespace;
 * - a space between two ASCII letters: a word piece never holds a space but as its first
 *   character, so a word ends before the space and the next one starts with it.
 */
export function isStable (text: string, p: number, wholeNewlineRuns: boolean): boolean {
  if (p <= 0 || p >= text.length) return false
  const c = text.charCodeAt(p)
  const before = text.charCodeAt(p - 1)
  if (before === NEWLINE) {
    if (c === SLASH || (c < 128 ? c <= SPACE : WHITESPACE.test(text[p]!))) return false
    return wholeNewlineRuns || p === 1 || !WHITESPACE.test(text[p - 2]!)
  }
  return c === SPACE && isAsciiLetter(before) && p + 1 < text.length && isAsciiLetter(text.charCodeAt(p + 1))
}

/** The last stable position in text(from, text.length), or -1. */
function lastStable (text: string, from: number, wholeNewlineRuns: boolean): number {
  for (let p = text.length - 1; p > from; p--) {
    const c = text.charCodeAt(p)
    if ((c === SPACE || text.charCodeAt(p - 1) === NEWLINE) && isStable(text, p, wholeNewlineRuns)) return p
  }
  return -1
}

export class BpeTally implements Tally {
  /** The count of the text before `tail`. */
  private settled = 0
  /** The text since the last stable position, and its count. */
  private tail = ''
  private tailCount = 0
  private readonly saved = { settled: 0, tail: '', tailCount: 0 }
  /** The part added last, and its own count when known (-1). */
  private last = ''
  private lastCount = -1

  /** `wholeNewlineRuns`: the encoding splits whitespace as cl100k and o200k do (see isStable). */
  constructor (private readonly count: (text: string) => number, private readonly wholeNewlineRuns: boolean) {}

  add (part: string): number {
    const saved = this.saved
    saved.settled = this.settled
    saved.tail = this.tail
    saved.tailCount = this.tailCount
    this.last = part
    this.lastCount = 0
    if (part.length === 0) return this.settled + this.tailCount
    if (this.tail.length === 0 || this.joinsStably(part)) {
      // The usual case (parts are lines, records, blocks): the tail is final, the part counted once.
      this.settled += this.tailCount
      this.tail = part
      this.tailCount = this.lastCount = this.count(part)
    } else {
      this.lastCount = -1
      // The join may merge pieces: recount the tail with the part, settling up to the last
      // stable position so the tail does not grow.
      const joined = this.tail + part
      const p = lastStable(joined, this.tail.length, this.wholeNewlineRuns)
      if (p > 0) {
        this.settled += this.count(joined.slice(0, p))
        this.tail = joined.slice(p)
      } else {
        this.tail = joined
      }
      this.tailCount = this.count(this.tail)
    }
    return this.settled + this.tailCount
  }

  /** isStable at the join of the tail and `part`, read from the few characters around it. */
  private joinsStably (part: string): boolean {
    const tail = this.tail
    // With one character of tail, the one before it is settled text: unknown here.
    if (tail.length === 1 && this.settled > 0 && !this.wholeNewlineRuns) return false
    const left = tail.length > 2 ? tail.slice(-2) : tail
    return isStable(left + part.slice(0, 2), left.length, this.wholeNewlineRuns)
  }

  undo (): number {
    this.settled = this.saved.settled
    this.tail = this.saved.tail
    this.tailCount = this.saved.tailCount
    return this.settled + this.tailCount
  }

  restart (): number {
    this.settled = 0
    this.tail = this.last
    this.tailCount = this.lastCount >= 0 ? this.lastCount : this.count(this.last)
    this.lastCount = this.tailCount
    return this.tailCount
  }
}
