/**
 * Text given as strings (the library's `split(string)`, the service's text endpoint) must be
 * well-formed Unicode: a lone surrogate has no UTF-8 bytes, so `byte_*` offsets and a Python
 * consumer could not hold it (bytes with the same fault are DOCSPLIT_INVALID_UTF8 too).
 * Pieces may split a surrogate pair.
 */
import { DocsplitError } from './errors.js'
import { isHighSurrogate as isHigh, isLowSurrogate as isLow } from './positions.js'

interface WellFormed { isWellFormed (): boolean }


function lone (index: number): DocsplitError {
  return new DocsplitError('DOCSPLIT_INVALID_UTF8', `the text has a lone surrogate at string index ${index}: it is not valid Unicode and has no UTF-8 form`)
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
 * refused), and before a lone surrogate exactly the text before it goes on: what is given, and
 * so the chunks made before the error, do not depend on where the pieces were cut.
 */
export class WellFormedCheck {
  /** UTF-16 units before the current piece. */
  private offset = 0
  /** The high surrogate that ended the previous piece, waiting for its low one. */
  private held = ''

  next (piece: string): WellFormedPart {
    if (piece.length === 0) return { text: '' }
    const held = this.held
    this.held = ''
    const start = this.offset - held.length
    this.offset += piece.length
    if (held !== '' && !isLow(piece.charCodeAt(0))) return { text: '', error: lone(start) }
    let text = held === '' ? piece : held + piece
    if (isHigh(text.charCodeAt(text.length - 1))) {
      this.held = text.slice(-1)
      text = text.slice(0, -1)
    }
    if ((text as unknown as WellFormed).isWellFormed()) return { text }
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (isHigh(c) && i + 1 < text.length && isLow(text.charCodeAt(i + 1))) i++
      else if (isHigh(c) || isLow(c)) return { text: text.slice(0, i), error: lone(start + i) }
    }
    return { text }
  }

  /** The input's end: a high surrogate still waiting is lone. */
  end (): DocsplitError | undefined {
    return this.held === '' ? undefined : lone(this.offset - 1)
  }
}
