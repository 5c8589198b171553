/**
 * The decoded text that chunks have not passed yet, so that every chunk's text can be checked
 * against the source: a parser or a splitter (built in or a plugin) that changed a character
 * would otherwise break losslessness unnoticed. Chunks come in order, so pieces wholly before a
 * chunk are dropped: what is held is about one chunk plus one input piece.
 */
export class SourceWindow {
  private readonly pieces: string[] = []
  /** Index in `pieces` of the first piece still held, and its offset in the text. */
  private first = 0
  private firstStart = 0
  private end = 0

  add (piece: string): void {
    if (piece.length === 0) return
    this.pieces.push(piece)
    this.end += piece.length
  }

  /** Whether `text` is the source text at offset `at`. Offsets must not go back. */
  matches (at: number, text: string): boolean {
    const pieces = this.pieces
    while (this.first < pieces.length && this.firstStart + pieces[this.first]!.length <= at) {
      this.firstStart += pieces[this.first]!.length
      pieces[this.first++] = ''
    }
    // Compact now and then, so the array does not grow with the document.
    if (this.first > 64 && this.first * 2 > pieces.length) {
      pieces.splice(0, this.first)
      this.first = 0
    }
    if (at < this.firstStart || at + text.length > this.end) return false
    let offset = at - this.firstStart
    let done = 0
    for (let i = this.first; done < text.length; i++) {
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
