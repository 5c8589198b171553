/**
 * A one-line progress display on stderr (bytes, MB/s, ETA), shown only when stderr is a
 * terminal and the input is large, redrawn at most a few times a second.
 */
const REDRAW_MS = 200
/** Bytes from which an input is large: a smaller one is done before a progress line helps. */
const LARGE = 8 * 1024 * 1024

export class Progress {
  private done = 0
  private readonly began = Date.now()
  private drawn = 0

  constructor (private readonly total: number | undefined, private readonly out: NodeJS.WriteStream = process.stderr) {}

  /** Not when the chunks go to the same terminal: the line would be redrawn among them. */
  static wanted (size: number | undefined, stream: NodeJS.WriteStream = process.stderr, output: NodeJS.WriteStream = process.stdout): boolean {
    return stream.isTTY === true && output.isTTY !== true && (size === undefined || size >= LARGE)
  }

  advance (bytes: number): void {
    this.done += bytes
    // Of an input of unknown size (standard input, a pipe), only once it has proved large.
    if (this.total === undefined && this.done < LARGE) return
    const now = Date.now()
    if (now - this.drawn < REDRAW_MS) return
    this.drawn = now
    this.draw(now)
  }

  private draw (now: number): void {
    const seconds = Math.max(0.001, (now - this.began) / 1000)
    const rate = this.done / seconds
    const mb = (n: number): string => (n / 1e6).toFixed(1)
    let line = `docsplit: ${mb(this.done)} MB`
    if (this.total !== undefined && this.total > 0) {
      const share = Math.min(1, this.done / this.total)
      const width = 24
      const filled = Math.round(share * width)
      const eta = rate > 0 ? Math.max(0, (this.total - this.done) / rate) : 0
      line = `docsplit [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(share * 100).toFixed(0)}% ${mb(this.done)}/${mb(this.total)} MB`
      line += `  ${mb(rate)} MB/s  ETA ${eta.toFixed(0)}s`
    } else {
      line += `  ${mb(rate)} MB/s`
    }
    this.out.write(`\r${line}\u001b[K`)
  }

  finish (): void {
    if (this.drawn === 0) return
    this.draw(Date.now())
    this.out.write('\n')
    this.drawn = 0
  }

  /** Ends the line as it stands (an error follows it, or the process is stopped). */
  abort (): void {
    if (this.drawn === 0) return
    this.drawn = 0
    this.out.write('\n')
  }
}
