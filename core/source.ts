/**
 * The decoded text that chunks have not passed yet, so that every chunk's text can be checked
 * against the source: a parser or a splitter (built in or a plugin) that changed a character
 * would otherwise break losslessness unnoticed. Chunks come in order, so pieces wholly before a
 * chunk are dropped: what is held is about one chunk plus one input piece.
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

  /** Whether `text` is the source text at offset `at`. Offsets must not go back. */
  matches (at: number, text: string): boolean {
    const pieces = this.pieces
    while (pieces.length > 0 && this.start + pieces[0]!.length <= at) this.start += pieces.shift()!.length
    if (at < this.start || at + text.length > this.end) return false
    let offset = at - this.start
    let done = 0
    for (let i = 0; done < text.length; i++) {
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
