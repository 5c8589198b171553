/**
 * Plain text: paragraphs separated by blank lines. A paragraph's block runs to the start of the
 * next paragraph, so blank lines travel with the paragraph before them. Streaming: only the
 * current paragraph is held.
 */
import type { ParserContext, ParserHandler } from '../../../core/types.js'

/** A line holding only spaces, tabs or a carriage return. */
const BLANK = /^[ \t\r\f\v]*$/
/**
 * A paragraph longer than this goes out in parts, at line ends: one string cannot hold any
 * length, and memory stays bounded. A part is far over the largest budget of ordinary text
 * (1,000,000 tokens is about 4 MiB), so the splitter cuts inside it anyway; a part's end is a
 * block's end to it, a line end where it may end a chunk.
 */
export const PART_CHARS = 64 << 20
/** A line longer than this, with no line break to cut at, is refused. */
export const MAX_LINE_CHARS = 64 << 20

export function createTextParser (ctx: ParserContext): ParserHandler<string> {
  /** Complete lines of the current paragraph (and blank lines after it), not yet emitted. */
  let pieces: string[] = []
  /** Offset in the document where `pieces` start, and their total length. */
  let heldStart = 0
  let heldLength = 0
  /** The incomplete last line. */
  let partial = ''
  /** Whether the current paragraph has content, and whether a blank line followed it. */
  let hasContent = false
  let sawBlank = false

  const emitHeld = (): void => {
    if (heldLength === 0) return
    const text = pieces.length === 1 ? pieces[0]! : pieces.join('')
    ctx.emit({ type: 'block', kind: 'paragraph', start: heldStart, end: heldStart + heldLength, text, cut: 'prose' })
    heldStart += heldLength
    heldLength = 0
    pieces = []
  }

  /** One line, with its line break; a non-blank line after blank lines starts a paragraph. */
  const line = (text: string): void => {
    if (BLANK.test(text.endsWith('\n') ? text.slice(0, -1) : text)) {
      sawBlank = hasContent
    } else {
      if (hasContent && sawBlank) emitHeld()
      hasContent = true
      sawBlank = false
    }
    pieces.push(text)
    heldLength += text.length
    if (heldLength > PART_CHARS) emitHeld()
  }

  return {
    write (piece) {
      // Only the new piece is scanned: a long paragraph costs O(length), not O(length^2).
      let from = 0
      let nl = piece.indexOf('\n')
      while (nl !== -1) {
        line(partial + piece.slice(from, nl + 1))
        partial = ''
        from = nl + 1
        nl = piece.indexOf('\n', from)
      }
      partial += piece.slice(from)
      if (partial.length > MAX_LINE_CHARS) {
        ctx.fail('DOCSPLIT_LIMIT_EXCEEDED', `a line of the text (at character ${heldStart + heldLength}) is longer than ${MAX_LINE_CHARS >> 20} MiB characters without a line break: it is refused rather than held`)
      }
    },
    end () {
      if (partial.length > 0) line(partial)
      partial = ''
      emitHeld()
    },
  }
}
