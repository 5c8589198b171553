/**
 * Text given as strings (the library's `split(string)`, the service's text endpoint) must be
 * well-formed Unicode: a lone surrogate has no UTF-8 bytes, so `byte_*` offsets and a Python
 * consumer could not hold it (bytes with the same fault are DOCSPLIT_INVALID_UTF8 too). With
 * `invalid_bytes: replace` each lone surrogate is read as U+FFFD instead, as
 * `String.prototype.toWellFormed` does: one UTF-16 unit for one, so offsets do not move.
 * Pieces may split a surrogate pair.
 */
import { DocsplitError } from './errors.js'
import { isHighSurrogate as isHigh, isLowSurrogate as isLow } from './positions.js'

interface WellFormed { isWellFormed (): boolean }

const REPLACEMENT = '\uFFFD'

function lone (index: number): DocsplitError {
  return new DocsplitError('DOCSPLIT_INVALID_UTF8', `the text has a lone surrogate at string index ${index}: it is not valid Unicode and has no UTF-8 form; pass invalid_bytes: replace to read it as U+FFFD`)
}

/** What of a piece goes on, and the lone surrogate after it, if any. */
export interface WellFormedPart {
  /** Text to give now: well-formed, whatever the piece's cuts (see WellFormedCheck). */
  text: string
  /** The lone surrogate that follows `text`: the input stops there. */
  error?: DocsplitError
}

/**
 * A string input's pieces, checked: `next` answers the part of each to give on. A high
 * surrogate that ends a piece waits for the next one (it goes with its low surrogate, or is
 * lone), and before a lone surrogate exactly the text before it goes on: what is given, and
 * so the chunks made before the error, do not depend on where the pieces were cut.
 */
export class WellFormedCheck {
  /** Lone surrogates read as U+FFFD (with `replace`). */
  replaced = 0
  /** The UTF-8 byte offset of the first of them, -1 before one. */
  firstReplacedByte = -1
  /** UTF-16 units before the current piece. */
  private offset = 0
  /** UTF-8 bytes of the text given before the current piece, while none was replaced. */
  private bytes = 0
  /** The high surrogate that ended the previous piece, waiting for its low one. */
  private held = ''

  constructor (private readonly replace = false) {}

  next (piece: string): WellFormedPart {
    if (piece.length === 0) return { text: '' }
    let held = this.held
    this.held = ''
    const start = this.offset - held.length
    this.offset += piece.length
    if (held !== '' && !isLow(piece.charCodeAt(0))) {
      if (!this.replace) return { text: '', error: lone(start) }
      this.count(1, '')
      held = REPLACEMENT
    }
    let text = held === '' ? piece : held + piece
    if (isHigh(text.charCodeAt(text.length - 1))) {
      this.held = text.slice(-1)
      text = text.slice(0, -1)
    }
    if (!(text as unknown as WellFormed).isWellFormed()) {
      let first = -1
      let n = 0
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i)
        if (isHigh(c) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) i++
        else if (isHigh(c) || isLow(c)) {
          if (!this.replace) return { text: text.slice(0, i), error: lone(start + i) }
          if (n++ === 0) first = i
        }
      }
      this.count(n, text.slice(0, first))
      text = (text as unknown as { toWellFormed (): string }).toWellFormed()
    }
    if (this.replaced === 0) this.bytes += Buffer.byteLength(text)
    return { text }
  }

  /** The input's end: a high surrogate still waiting is lone. */
  end (): WellFormedPart {
    if (this.held === '') return { text: '' }
    if (!this.replace) return { text: '', error: lone(this.offset - 1) }
    this.held = ''
    this.count(1, '')
    return { text: REPLACEMENT }
  }

  /** `n` lone surrogates replaced, the first after `before` (the text given from the piece before it). */
  private count (n: number, before: string): void {
    if (this.replaced === 0) this.firstReplacedByte = this.bytes + Buffer.byteLength(before)
    this.replaced += n
  }
}
