/**
 * Turns chunk spans (string offsets) into code point, byte and line offsets. Chunks come in
 * order and tile the text, so the tracker only counts the text added since the previous chunk
 * (and, with overlap, the repeated tail once more): O(n) over the whole document.
 */

export interface Located {
  char_start: number
  char_end: number
  byte_start: number
  byte_end: number
  line_start: number
  line_end: number
}

export const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff
export const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g

/**
 * Code points in `text`: a high surrogate followed by a low one counts once. The regular
 * expression scans about twice as fast as a charCodeAt loop (the pairs are rare).
 */
export function codePoints (text: string): number {
  let pairs = 0
  SURROGATE_PAIR.lastIndex = 0
  while (SURROGATE_PAIR.test(text)) pairs++
  return text.length - pairs
}

const LF = 10
const CR = 13

/**
 * Line breaks in `text`: LF, CRLF (counted at its LF) and a lone CR. `next` is the character
 * after `text`, or -1 when it is not known yet: a CR at the end is then left out (pending).
 */
export function lineBreaks (text: string, next: number): number {
  let n = 0
  let i = text.indexOf('\n')
  while (i !== -1) { n++; i = text.indexOf('\n', i + 1) }
  for (i = text.indexOf('\r'); i !== -1; i = text.indexOf('\r', i + 1)) {
    const after = i + 1 < text.length ? text.charCodeAt(i + 1) : next
    if (after !== LF && after !== -1) n++
  }
  return n
}

export class PositionTracker {
  /**
   * Position reached: string offset, and the code points, bytes and line breaks before it (a
   * CR just before it is pending until the next character tells CRLF from a lone CR).
   */
  private offset = 0
  private chars = 0
  private bytes: number
  private lines = 0
  private pendingCR = false
  private lastIsLF = false

  private readonly ascii: (text: string, bytes: number) => boolean

  /**
   * `byteLength(text, at)`: bytes of `text`, at string offset `at`, in the input as received.
   * `forget(before)`: nothing before string offset `before` is asked about again.
   */
  constructor (private readonly byteLength: (text: string, at: number) => number, bomBytes: number, utf8: boolean, private readonly forget?: (before: number) => void) {
    this.bytes = bomBytes
    this.ascii = utf8 ? (text, bytes) => bytes === text.length : () => false
  }

  /** Where the tracked text ends (string offset). */
  get end (): number {
    return this.offset
  }

  /**
   * Locates a chunk `[start, start + text.length)`. `start` may be before the end of the
   * previous chunk (overlap) but never after it (that would drop text).
   */
  locate (start: number, text: string): Located | undefined {
    if (start > this.offset || start + text.length < this.offset) return undefined
    const repeated = text.slice(0, this.offset - start)
    const added = text.slice(this.offset - start)
    const firstAdded = added.length > 0 ? added.charCodeAt(0) : -1
    if (this.pendingCR && firstAdded !== -1) {
      if (firstAdded !== LF) this.lines++
      this.pendingCR = false
    }
    this.forget?.(start)
    const charStart = this.chars - codePoints(repeated)
    const byteStart = this.bytes - this.byteLength(repeated, start)
    const linesBefore = this.lines - lineBreaks(repeated, firstAdded)
    const addedBytes = this.byteLength(added, this.offset)
    this.offset += added.length
    // As many UTF-8 bytes as UTF-16 units means pure ASCII: no surrogate pairs to look for.
    this.chars += this.ascii(added, addedBytes) ? added.length : codePoints(added)
    this.bytes += addedBytes
    this.lines += lineBreaks(added, -1)
    if (added.length > 0) {
      this.pendingCR = added.charCodeAt(added.length - 1) === CR
      this.lastIsLF = added.charCodeAt(added.length - 1) === LF
    }
    // The last character's own break (an LF) is not before it; a CR at the end is pending.
    const endsWithNewline = text.charCodeAt(text.length - 1) === LF
    return {
      char_start: charStart,
      char_end: this.chars,
      byte_start: byteStart,
      byte_end: this.bytes,
      line_start: linesBefore + 1,
      line_end: Math.max(linesBefore + 1, this.lines + 1 - (endsWithNewline ? 1 : 0)),
    }
  }

  /** Totals for the whole document once every chunk is located. */
  totals (): { chars: number, bytes: number, lines: number } {
    // Nothing follows the last character: a CR there is a line break; after a break, no new line.
    const endsWithBreak = this.pendingCR || this.lastIsLF
    const lines = this.offset === 0 ? 0 : this.lines + (this.pendingCR ? 1 : 0) + (endsWithBreak ? 0 : 1)
    return { chars: this.chars, bytes: this.bytes, lines }
  }
}
