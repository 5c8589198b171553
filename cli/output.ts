/** Writing to standard output: buffered, with backpressure, and what a failed write means. */
import { DocsplitError } from '../core/errors.js'

const FLUSH_AT = 1 << 16

/** Buffered writes to stdout with backpressure: fast for millions of JSONL lines. */
export class Output {
  private buffer = ''

  constructor (private readonly stream: NodeJS.WritableStream = process.stdout) {}

  async write (text: string): Promise<void> {
    this.buffer += text
    if (this.buffer.length >= FLUSH_AT) await this.flush()
  }

  async flush (): Promise<void> {
    if (this.buffer.length === 0) return
    const data = this.buffer
    this.buffer = ''
    if (!this.stream.write(data)) {
      await new Promise<void>((resolve, reject) => {
        const done = (error?: Error): void => {
          this.stream.off('drain', done)
          this.stream.off('error', done)
          if (error !== undefined) reject(error)
          else resolve()
        }
        this.stream.once('drain', done)
        this.stream.once('error', done)
      })
    }
  }
}

/**
 * The error for a failed write to standard output. EPIPE (a closed pipe:
 * `docsplit split big.log --jsonl | head`) is a normal way to stop: the process exits 0 here.
 */
export function outputError (code: string | undefined): DocsplitError {
  if (code === 'EPIPE') process.exit(0)
  return new DocsplitError('DOCSPLIT_INTERNAL', `cannot write the output (${code ?? 'error'})`)
}
