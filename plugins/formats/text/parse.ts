/**
 * Plain text: paragraphs separated by blank lines (or by a page break). A paragraph's block runs
 * to the start of the next paragraph, so blank lines travel with the paragraph before them.
 * Streaming: only the current paragraph is held.
 */
import { LineEnds } from '../../../core/line-ends.js'
import type { ParserContext, ParserHandler } from '../../../core/types.js'
import { headingLike } from './heading.js'

/** A line holding only spaces, tabs, a form feed or its line break. */
const BLANK = /^[ \t\r\n\f\v]*$/
/**
 * A paragraph longer than this goes out in parts, at line ends: one string cannot hold any
 * length, and memory stays bounded. A part is far over the largest budget of ordinary text
 * (1,000,000 tokens is about 4 MiB), so the splitter cuts inside it anyway; a part's end is a
 * block's end to it, a line end where it may end a chunk.
 */
export const PART_CHARS = 64 << 20
/** A line longer than this, with no line break to cut at, is refused. */
export const MAX_LINE_CHARS = 64 << 20
/** A paragraph this short may be a heading (see heading.ts); a longer one is not looked at. */
const HEADING_CHARS = 512

export function createTextParser (ctx: ParserContext): ParserHandler<string> {
  /** Complete lines of the current paragraph (and blank lines after it), not yet emitted. */
  let pieces: string[] = []
  /** Offset in the document where `pieces` start, and their total length. */
  let heldStart = 0
  let heldLength = 0
  /**
   * The incomplete last line, as the pieces it came in: one string grown by `+=` is a rope that
   * endsWith() flattened on every piece, copying the line so far each time (a 64 MiB line took
   * 18 s to reach the limit).
   */
  let partial: string[] = []
  let partialLength = 0
  /** The line so far, joined; the pieces are let go. */
  const takePartial = (): string => {
    const text = partial.length === 1 ? partial[0]! : partial.join('')
    partial = []
    partialLength = 0
    return text
  }
  /** Whether the current paragraph has content, and whether a blank line followed it. */
  let hasContent = false
  let sawBlank = false

  /** `next`: the first line of the paragraph that follows, when one does. */
  const emitHeld = (next?: string): void => {
    if (heldLength === 0) return
    const text = pieces.length === 1 ? pieces[0]! : pieces.join('')
    // A title line (`CHAPTER IV.`, `ARTICLE 5`) or a page's running header goes with the
    // paragraph after it, as a markdown heading does: no chunk ends with it while its text goes on.
    const attachNext = heldLength <= HEADING_CHARS && headingLike(text, next)
    ctx.emit({ type: 'block', kind: 'paragraph', start: heldStart, end: heldStart + heldLength, text, cut: 'prose', attachNext })
    heldStart += heldLength
    heldLength = 0
    pieces = []
  }

  /**
   * One line, with its line break; a non-blank line after blank lines starts a paragraph, and
   * so does one that starts a page (pdftotext puts the form feed before a page's first line).
   */
  const line = (text: string): void => {
    if (BLANK.test(text)) {
      sawBlank = hasContent
    } else {
      if (hasContent && (sawBlank || text.charCodeAt(0) === 12 /* \f */)) emitHeld(text)
      hasContent = true
      sawBlank = false
    }
    pieces.push(text)
    heldLength += text.length
    if (heldLength > PART_CHARS) emitHeld()
  }

  return {
    write (piece) {
      // A carriage return that ended the last piece: with no line feed after it, a line's end.
      if (partialLength > 0 && partial[partial.length - 1]!.endsWith('\r') && piece.length > 0 && piece.charCodeAt(0) !== 10) line(takePartial())
      // Lines end with LF, CRLF or a lone CR (old Mac text); a CR that ends the piece waits for
      // the next. Only the new piece is scanned: a long paragraph costs O(length), not O(length^2).
      const ends = new LineEnds(piece, false)
      let from = 0
      for (let end = ends.after(0); end !== -1; end = ends.after(from)) {
        line(partialLength > 0 ? takePartial() + piece.slice(from, end) : piece.slice(from, end))
        from = end
      }
      if (from < piece.length) {
        partial.push(piece.slice(from))
        partialLength += piece.length - from
      }
      if (partialLength > MAX_LINE_CHARS) {
        ctx.fail('DOCSPLIT_LIMIT_EXCEEDED', `a line of the text (at character ${heldStart + heldLength}) is longer than ${MAX_LINE_CHARS >> 20} MiB characters without a line break: it is refused rather than held`)
      }
    },
    end () {
      if (partialLength > 0) line(takePartial())
      emitHeld()
    },
  }
}
