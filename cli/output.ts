/** Writing to standard output: buffered, with backpressure, and what a failed write means. */
import { DocsplitError, escapeControls, isDocsplitError, quoted } from '../core/errors.js'
import { responseOpening, type Chunk, type SplitSummary } from '../core/schema.js'

const FLUSH_AT = 1 << 16

/**
 * Buffered writes to stdout with backpressure: fast for millions of JSONL lines. Text is encoded
 * into a buffer as it comes: a string of many appended lines had to be flattened before it was
 * encoded (8.6 MB of markdown's JSONL: 45 -> ~20 ms).
 */
export class Output {
  private buffer = Buffer.allocUnsafeSlow(FLUSH_AT * 2)
  private length = 0

  constructor (private readonly stream: NodeJS.WritableStream = process.stdout) {}

  async write (text: string): Promise<void> {
    if (readerGone) return
    // At most 3 bytes per UTF-16 code unit.
    if (this.length + text.length * 3 > this.buffer.length) {
      await this.flush()
      if (text.length * 3 > this.buffer.length) return await this.send(text)
    }
    this.length += this.buffer.write(text, this.length)
    if (this.length >= FLUSH_AT) await this.flush()
  }

  async flush (): Promise<void> {
    if (this.length === 0) return
    // The stream may hold the bytes until they are written: the next ones go to a new buffer.
    const data = this.buffer.subarray(0, this.length)
    this.buffer = Buffer.allocUnsafeSlow(FLUSH_AT * 2)
    this.length = 0
    await this.send(data)
  }

  /** Writes what is buffered and waits until the stream has handed every byte to the system. */
  async settle (): Promise<void> {
    await this.flush()
    const stream = this.stream as NodeJS.WritableStream & { writableLength?: number }
    while ((stream.writableLength ?? 0) > 0 && !readerGone) await new Promise((resolve) => setTimeout(resolve, 10))
  }

  private async send (data: string | Buffer): Promise<void> {
    if (!this.stream.write(data)) {
      await new Promise<void>((resolve, reject) => {
        const done = (error?: Error): void => {
          this.stream.off('drain', done)
          this.stream.off('error', done)
          if (error !== undefined && !readerGone) reject(error)
          else resolve()
        }
        this.stream.once('drain', done)
        this.stream.once('error', done)
      })
    }
  }
}

/**
 * Says on stderr, in one line, why a command (or, `about`, one of its files) failed, and gives
 * the DocsplitError it stands for. With DOCSPLIT_DEBUG the cause follows, with its stack (for a
 * plugin's author: it may quote the document).
 */
export function reportError (error: unknown, about?: string): DocsplitError {
  const e = isDocsplitError(error) ? error : new DocsplitError('DOCSPLIT_INTERNAL', 'unexpected failure', { cause: error })
  // Output that cannot be written fails every write after it (the writer thread's, stdout's own 'error'): said once.
  if (isOutputError(e)) {
    if (outputFailureTold) return e
    outputFailureTold = true
  }
  process.stderr.write(`${errorLine(e, about)}\n`)
  const cause = isDocsplitError(error) ? error.cause : error
  if (cause !== undefined && process.env.DOCSPLIT_DEBUG !== undefined) console.error(cause)
  return e
}

/**
 * `docsplit: CODE: message`, prefixed by the file it is `about`, as one line: a message that
 * quotes a value given to it raw (a plugin's, say) still cannot break the line or drive the terminal.
 */
export function errorLine (e: DocsplitError, about?: string): string {
  return `docsplit: ${e.code}: ${about === undefined ? '' : `${quoted(about)}: `}${escapeControls(e.message)}`
}

/** Set by --verify: a reader that closes the pipe ends the output, not the check. */
let verifyPastReader = false
let readerGone = false

/**
 * Under --verify, a reader that closes the pipe early (`| head`) no longer ends the process:
 * the split goes on to the end, unwritten, so that the exit code still says whether every chunk
 * passed. Otherwise a check cut short would exit 0 with nothing verified.
 */
export function verifyPastClosedOutput (): void {
  verifyPastReader = true
}

/** Whether the reader closed standard output under --verify: nothing more is written. */
export function readerClosed (): boolean {
  return readerGone
}

/**
 * The error for a failed write to standard output. EPIPE (a closed pipe:
 * `docsplit split big.log --jsonl | head`) is a normal way to stop: the process exits 0 here,
 * but under --verify only once the check is done (see verifyPastClosedOutput).
 */
export function outputError (code: string | undefined): DocsplitError {
  if (code === 'EPIPE' || readerGone) {
    if (!verifyPastReader) process.exit(0)
    if (!readerGone) process.stderr.write('docsplit: note: the output\'s reader closed it; --verify goes on to the end of the input, writing nothing more\n')
    readerGone = true
  }
  const error = new DocsplitError('DOCSPLIT_INTERNAL', `cannot write the output (${code ?? 'error'})`)
  outputErrors.add(error)
  return error
}

const outputErrors = new WeakSet<Error>()
let outputFailureTold = false

/** Whether `error` is a failed write to standard output (no input's fault: nothing more can go out). */
export function isOutputError (error: unknown): boolean {
  return error instanceof Error && outputErrors.has(error)
}

/**
 * The response JSON, a chunk at a time: one JSON.stringify of the whole response fails past
 * V8's longest string (about 512 MB of JSON: a log of a few hundred MB at the default budget)
 * and would hold the output twice. Byte for byte what JSON.stringify(response) gives, or
 * JSON.stringify(response, null, 2) when `pretty`.
 */
export async function writeResponse (summary: SplitSummary, chunks: Chunk[], pretty: boolean, output = new Output()): Promise<void> {
  if (chunks.length === 0) {
    await output.write(JSON.stringify({ ...summary, chunks: [] }, null, pretty ? 2 : undefined) + '\n')
    return await output.flush()
  }
  await output.write(responseOpening(summary, pretty))
  for (let i = 0; i < chunks.length; i++) {
    const json = pretty ? '\n    ' + JSON.stringify(chunks[i], null, 2).replaceAll('\n', '\n    ') : JSON.stringify(chunks[i])
    await output.write(i > 0 ? ',' + json : json)
  }
  await output.write(pretty ? '\n  ]\n}\n' : ']}\n')
  await output.flush()
}
