/**
 * Plain text: paragraphs separated by blank lines. A paragraph's block runs to the start of the
 * next paragraph, so blank lines travel with the paragraph before them. Streaming: only the
 * current paragraph is held.
 */
import type { ParserContext, ParserHandler } from '../../../core/types.js'

/** A line holding only spaces, tabs or a carriage return. */
const BLANK = /^[ \t\r\f\v]*$/

export function createTextParser (ctx: ParserContext): ParserHandler<string> {
  let held = ''
  /** Offset of `held` in the document. */
  let heldStart = 0
  /** Where the next unscanned line starts inside `held`. */
  let scan = 0
  /** Whether the current paragraph has content, and whether a blank line followed it. */
  let hasContent = false
  let sawBlank = false

  const emit = (length: number): void => {
    const text = held.slice(0, length)
    ctx.emit({ type: 'block', kind: 'paragraph', start: heldStart, end: heldStart + length, text, cut: 'prose' })
    held = held.slice(length)
    heldStart += length
  }

  /** Looks at one line of `held`; returns how many characters were emitted before it. */
  const line = (from: number, to: number): number => {
    const blank = BLANK.test(held.slice(from, to))
    if (blank) {
      sawBlank = hasContent
      return 0
    }
    const paragraphEnds = hasContent && sawBlank
    hasContent = true
    sawBlank = false
    if (paragraphEnds) emit(from)
    return paragraphEnds ? from : 0
  }

  return {
    write (piece) {
      held += piece
      let nl = held.indexOf('\n', scan)
      while (nl !== -1) {
        scan = nl + 1 - line(scan, nl)
        nl = held.indexOf('\n', scan)
      }
    },
    end () {
      if (scan < held.length) line(scan, held.length)
      if (held.length > 0) emit(held.length)
    },
  }
}
