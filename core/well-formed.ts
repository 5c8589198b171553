/**
 * Text given as strings (the library's `split(string)`, the service's text endpoint) must be
 * well-formed Unicode: a lone surrogate has no UTF-8 bytes, so `byte_*` offsets and a Python
 * consumer could not hold it (bytes with the same fault are DOCSPLIT_INVALID_UTF8 too).
 * Pieces may split a surrogate pair: a high surrogate that ends a piece waits for the next.
 */
import { DocsplitError } from './errors.js'
import { isHighSurrogate as isHigh, isLowSurrogate as isLow } from './positions.js'

interface WellFormed { isWellFormed (): boolean }


function lone (index: number): DocsplitError {
  return new DocsplitError('DOCSPLIT_INVALID_UTF8', `the text has a lone surrogate at string index ${index}: it is not valid Unicode and has no UTF-8 form`)
}

export class WellFormedCheck {
  /** UTF-16 units before the current piece. */
  private offset = 0
  /** The previous piece ended with a high surrogate. */
  private held = false

  check (piece: string): void {
    if (piece.length === 0) return
    let from = 0
    if (this.held) {
      if (!isLow(piece.charCodeAt(0))) throw lone(this.offset - 1)
      from = 1
      this.held = false
    }
    let to = piece.length
    if (to > from && isHigh(piece.charCodeAt(to - 1))) {
      this.held = true
      to--
    }
    const body = from === 0 && to === piece.length ? piece : piece.slice(from, to)
    if (!(body as unknown as WellFormed).isWellFormed()) {
      for (let i = from; i < to; i++) {
        const c = piece.charCodeAt(i)
        if (isHigh(c) && i + 1 < to && isLow(piece.charCodeAt(i + 1))) i++
        else if (isHigh(c) || isLow(c)) throw lone(this.offset + i)
      }
    }
    this.offset += piece.length
  }

  end (): void {
    if (this.held) throw lone(this.offset - 1)
  }
}
