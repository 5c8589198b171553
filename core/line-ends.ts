/**
 * Line ends in one text, left to right: `\n`, `\r\n` or a lone `\r` (the line breaks core
 * counts). The next `\n` and `\r` are each searched for again only once passed, so a file with
 * one kind of line ending does not scan for the other at every line.
 */
export class LineEnds {
  private nl = -2
  private cr = -2

  /** `final`: the text is all there is, so a `\r` that ends it ends its line. */
  constructor (private readonly text: string, private readonly final: boolean) {}

  /**
   * Index just past the line ending of the line at `from`, or -1 when the line goes on past
   * the text (or, not final, the text ends with a `\r` that a `\n` may follow).
   */
  after (from: number): number {
    const text = this.text
    if (this.nl !== -1 && this.nl < from) this.nl = text.indexOf('\n', from)
    if (this.cr !== -1 && this.cr < from) this.cr = text.indexOf('\r', from)
    const { nl, cr } = this
    if (cr === -1 || (nl !== -1 && cr >= nl - 1)) return nl === -1 ? -1 : nl + 1
    return cr + 1 < text.length || this.final ? cr + 1 : -1
  }
}
