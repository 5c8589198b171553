/**
 * The decoded text that chunks have not passed yet, so that every event's and every chunk's text
 * can be checked against the source: a parser or a splitter (built in or a plugin) that changed
 * a character would otherwise break losslessness unnoticed (and, for a parser, the token counts
 * made from its texts). Chunks come in order, so pieces wholly before a chunk are dropped: what
 * is held is about one chunk plus one input piece.
 */
export class SourceWindow {
  private readonly pieces: string[] = []
  /** Offset in the text of the first piece held, and of the end of the last. */
  private start = 0
  private end = 0

  add (piece: string): void {
    if (piece.length === 0) return
    this.pieces.push(piece)
    this.end += piece.length
  }

  /** The text from `at` to `end` when one held piece has all of it. */
  slice (at: number, end: number): string | undefined {
    let offset = this.start
    for (const piece of this.pieces) {
      if (at < offset) return undefined
      if (end <= offset + piece.length) return piece.slice(at - offset, end - offset)
      offset += piece.length
    }
    return undefined
  }

  /** Whether `text` is the source text at offset `at`, dropping the pieces before it. Offsets must not go back. */
  matches (at: number, text: string): boolean {
    const pieces = this.pieces
    while (pieces.length > 0 && this.start + pieces[0]!.length <= at) this.start += pieces.shift()!.length
    return this.holds(at, text)
  }

  /** Whether `text` is the source text at offset `at`; drops nothing (events run ahead of chunks). */
  holds (at: number, text: string): boolean {
    const pieces = this.pieces
    if (at < this.start || at + text.length > this.end) return false
    let first = 0
    let offset = at - this.start
    while (first < pieces.length - 1 && offset >= pieces[first]!.length) offset -= pieces[first++]!.length
    let done = 0
    for (let i = first; done < text.length; i++) {
      const piece = pieces[i]!
      const take = Math.min(piece.length - offset, text.length - done)
      const mine = take === text.length ? text : text.slice(done, done + take)
      if (piece.slice(offset, offset + take) !== mine) return false
      done += take
      offset = 0
    }
    return true
  }
}
