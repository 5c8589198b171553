/**
 * `docsplit split FILE|-`: the response JSON, or one chunk per line with `--jsonl`, or with
 * `--ndjson` the service's NDJSON: a header line, the chunks, a trailer or an error line.
 */
import { closeSync, createReadStream, fstatSync, openSync, readSync, statSync } from 'node:fs'
import { basename } from 'node:path'
import { setImmediate } from 'node:timers/promises'
import { DocsplitError, quoted } from '../core/errors.js'
import { optionsSchema } from '../core/options.js'
import { FORMAT_SAMPLE, formatNamedByFile } from '../core/format-choice.js'
import { checkSplitOptions, type SplitOptions } from '../core/pipeline.js'
import { splitBatches } from '../core/split.js'
import { tokenizerByName } from '../core/registry.js'
import type { Chunk } from '../core/schema.js'
import { Verifier } from '../core/verify.js'
import { countThreads } from '../plugins/tokenizers/tiktoken/count-threads.js'
import { toProblem } from '../server/problem.js'
import { onInterrupt } from './interrupt.js'
import { JsonlOutput } from './jsonl-output.js'
import { isOutputError, reportError, verifyPastClosedOutput, writeResponse } from './output.js'
import { Progress } from './progress.js'

export interface SplitCommand {
  file: string
  options: SplitOptions
  jsonl: boolean
  ndjson?: boolean
  verify: boolean
  pretty: boolean
  /** One of several files: its notes on stderr start with its name. */
  several?: boolean
}

/**
 * Bytes read at a time. A read of 256 KiB is still in the processor's cache when it is decoded:
 * on a 64 MB log 5% less time and 12% less memory than reads of 1 MiB (of 64 KiB: less memory
 * again, but slower).
 */
const READ_SIZE = 1 << 18

/**
 * How long a stream read for its format (the first 64 KiB, or its end) may keep the split from
 * starting before the CLI says why: `tail -f app.log | docsplit split - --jsonl` printed nothing
 * until 64 KiB of lines had arrived.
 */
const FORMAT_WAIT_NOTE_MS = 2000

/** How much of the input has been read, and whether all of it. */
interface Reading { bytes: number, ended: boolean }

function openInput (file: string): { stream: AsyncIterable<Buffer> | Iterable<Buffer>, size: number | undefined } {
  if (file === '-') {
    // A directory on standard input reads as empty: refuse it as `cat` does.
    if (fstatSync(0).isDirectory()) throw new DocsplitError('DOCSPLIT_READ_FAILED', 'reading the input failed (EISDIR): standard input is a directory')
    // Typed at a terminal, or a script that forgot its pipe: say what it waits for.
    if (process.stdin.isTTY === true && process.stderr.isTTY === true) process.stderr.write('docsplit: reading standard input from the terminal: type the text, then Ctrl-D (or give a FILE)\n')
    return { stream: process.stdin, size: undefined }
  }
  let size: number | undefined
  let fd: number
  try {
    const stat = statSync(file)
    // FIFOs and devices are fine (`docsplit split <(zcat big.log.gz)`); a directory is not.
    if (stat.isDirectory()) throw new DocsplitError('DOCSPLIT_READ_FAILED', `reading the input failed (EISDIR): ${quoted(file)} is a directory`)
    size = stat.isFile() ? stat.size : undefined
    // Opened here, so that a file that cannot be read (EACCES) is this error, not a stream's
    // 'error' event that nobody listens to yet.
    fd = openSync(file, 'r')
  } catch (error) {
    if (error instanceof DocsplitError) throw error
    // The library's code for a stream that fails to open (READ_FAILED), with the system's code.
    const code = (error as { code?: string }).code ?? 'EIO'
    // Node reads its arguments as UTF-8: a name in another encoding (Latin-1 from an old archive)
    // arrives with U+FFFD in it and names no file.
    const undecodable = code === 'ENOENT' && file.includes('\ufffd') ? ' (its name is not valid UTF-8, which Node cannot pass on: give the file on standard input, with --filename)' : ''
    throw new DocsplitError('DOCSPLIT_READ_FAILED', `reading the input failed (${code}): ${code === 'ENOENT' ? `no such file ${quoted(file)}${undecodable}` : `cannot read ${quoted(file)}`}`)
  }
  if (size === undefined) return { stream: createReadStream(file, { fd, highWaterMark: READ_SIZE }), size }
  return { stream: fileBytes(fd), size }
}

/**
 * A regular file's bytes, every read into the same buffer (the engine copies what it keeps past
 * a piece). A stream's new buffer per read is fresh memory that the kernel must fault in, and
 * on a virtual machine that is slow: a 256 MB log took 550 ms to stream, 70 ms this way. The
 * reads are synchronous: a regular file does not block the way a pipe can.
 */
function * fileBytes (fd: number): Generator<Buffer> {
  const buffer = Buffer.allocUnsafeSlow(READ_SIZE)
  try {
    for (;;) {
      const read = readSync(fd, buffer, 0, READ_SIZE, null)
      if (read === 0) return
      yield buffer.subarray(0, read)
    }
  } finally {
    closeSync(fd)
  }
}

/**
 * Says once on stderr what the split waits for, should it not have started in
 * FORMAT_WAIT_NOTE_MS while the input is still short of the sample that tells its format.
 */
function noteFormatWait (start: Promise<unknown>, reading: Reading): void {
  const note = setTimeout(() => {
    if (reading.ended || reading.bytes >= FORMAT_SAMPLE) return // waiting for something else (a tokenizer's load)
    process.stderr.write('docsplit: note: waiting for 64 KiB of the input (or its end) to tell its format; with --input-format (log, jsonl, ...) it does not wait for them\n')
  }, FORMAT_WAIT_NOTE_MS)
  note.unref()
  start.then(() => { clearTimeout(note) }, () => { clearTimeout(note) })
}

/**
 * Reads of a file (synchronous) between turns of the event loop. Without a turn, a split whose
 * output keeps up never gives one: a SIGINT or SIGTERM waited for the end of the split, and was
 * then lost (exit 0, the whole output).
 */
const READS_PER_TURN = 4

/** Passes bytes through while feeding the progress line, the verifier's view of the source and `reading`. */
async function * tee (source: AsyncIterable<Buffer> | Iterable<Buffer>, progress: Progress | undefined, verifier: Verifier | undefined, reading: Reading): AsyncGenerator<Buffer> {
  const synchronous = Symbol.iterator in source
  let reads = 0
  for await (const piece of source) {
    reading.bytes += piece.length
    progress?.advance(piece.length)
    verifier?.addBytes(piece)
    yield piece
    if (synchronous && ++reads % READS_PER_TURN === 0) await setImmediate()
  }
  reading.ended = true
  verifier?.endBytes()
}

/**
 * Several files in one process (`docsplit split *.md --ndjson`), one after another: start-up
 * is paid once. A file that fails is told on stderr, naming it, and the next one goes on, as
 * `cat` goes on; the exit code is the first failure's. A failed write to stdout still ends all.
 */
export async function runSplits (files: string[], command: Omit<SplitCommand, 'file' | 'several'>): Promise<number> {
  // What is wrong with the command, not with a file, fails it once, before any file.
  if (command.options.filename !== undefined) throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', '--filename names one input; several FILEs are each named by their own path; see docsplit --help')
  countThreads(process.env.DOCSPLIT_COUNT_THREADS)
  await checkSplitOptions(command.options)
  let code = 0
  for (const file of files) {
    try {
      await runSplit({ ...command, file, several: true })
    } catch (error) {
      // Output that cannot be written ends them all.
      if (isOutputError(error)) throw error
      const e = reportError(error, file)
      if (code === 0) code = e.exitCode
    }
  }
  return code
}

/**
 * One FILE. Its options are checked before it is opened, as with several: a bad --max-tokens
 * is a usage error (exit 2) even when the file is missing.
 */
export async function runOneSplit (command: SplitCommand): Promise<number> {
  await checkSplitOptions(command.options)
  return await runSplit(command)
}

async function runSplit (command: SplitCommand): Promise<number> {
  // Read only when an exact tokenizer loads: checked first, so a bad value fails every split
  // (with the default approx too), before any input is read.
  countThreads(process.env.DOCSPLIT_COUNT_THREADS)
  const { stream, size } = openInput(command.file)
  const progress = Progress.wanted(size) ? new Progress(size) : undefined
  // A reader that closes the pipe ends the process at once (exit 0): the line still ends.
  const endLine = (): void => { progress?.abort() }
  if (progress !== undefined) process.once('exit', endLine)
  const jsonl = command.jsonl || command.ndjson === true ? new JsonlOutput(size) : undefined
  const interrupt = jsonl === undefined ? undefined : onInterrupt(async () => { endLine(); await jsonl.stop() })
  try {
    return await splitInput(command, stream, size, progress, jsonl)
  } catch (error) {
    // The error's line starts a line of its own.
    progress?.abort()
    throw error
  } finally {
    process.off('exit', endLine)
    await interrupt?.settle()
  }
}

async function splitInput (command: SplitCommand, stream: AsyncIterable<Buffer> | Iterable<Buffer>, size: number | undefined, progress: Progress | undefined, jsonl: JsonlOutput | undefined): Promise<number> {
  const options: SplitOptions = { ...command.options }
  if (command.file !== '-' && options.filename === undefined) options.filename = basename(command.file)
  const verifier = command.verify ? new Verifier() : undefined
  if (verifier !== undefined) verifyPastClosedOutput()
  // --ndjson: the header goes out with the first chunk (or at the end), as the service sends it.
  let header = command.ndjson === true
  const headerLine = async (): Promise<void> => {
    if (!header) return
    header = false
    const start = await chunks.start as unknown as Record<string, unknown>
    // The service's header, and the file as given: which document the lines that follow are of.
    await jsonl!.write([{ ...start, source: command.file }])
  }
  // The writer thread gives the chunks their ids (the verifier reads them as they come).
  const idsLater = jsonl?.idsLater === true && verifier === undefined
  // By batches: one await per input piece rather than two per chunk (about 4% of a log's split).
  const reading: Reading = { bytes: 0, ended: false }
  const chunks = splitBatches(tee(stream, progress, verifier, reading), options, idsLater)
  // A stream whose format its content will tell (no format given, no file name that tells it).
  const byContent = (options.input_format ?? 'auto').toLowerCase() === 'auto' && !formatNamedByFile(options.filename)
  if (size === undefined && byContent) noteFormatWait(chunks.start, reading)
  const collected: Chunk[] = []
  let started = false
  let protectedChunks = 0
  try {
    for await (const batch of chunks) {
      if (batch.length === 0) continue
      if (!started && verifier !== undefined) {
        const { metadata } = await chunks.start
        verifier.start(await tokenizerByName(metadata.tokenizer).load(), metadata.max_tokens)
        verifier.decodeAs(typeof metadata.options.encoding === 'string' ? metadata.options.encoding : undefined, String(metadata.options.invalid_bytes))
      }
      started = true
      for (const chunk of batch) if (chunk.protected) protectedChunks++
      if (verifier !== undefined) for (const chunk of batch) verifier.check(chunk)
      await headerLine()
      if (jsonl !== undefined) await jsonl.write(batch)
      else for (const chunk of batch) collected.push(chunk)
      // A signal stopped the output: the process ends by it (onInterrupt), the split goes no further.
      if (jsonl?.stopped === true) return await new Promise<never>(() => {})
    }
  } catch (error) {
    // The chunks made before an input error still go out; the input error is what is reported.
    // After an --ndjson header, an error line ends the stream as the service's does.
    if (command.ndjson === true && !header) await jsonl!.write([{ error: toProblem(error).body }]).catch(() => {})
    await jsonl?.end().catch(() => {})
    throw error
  }
  const summary = await chunks.summary
  if (command.ndjson === true) {
    await headerLine()
    const { document, reference_definitions: refs, chunk_count: count } = summary
    await jsonl!.write([{ document, reference_definitions: refs, chunk_count: count }])
  }
  await jsonl?.end()
  progress?.finish()
  if (jsonl === undefined) await writeResponse(summary, collected, command.pretty)
  /** Which file a line on stderr is about, when there are several. */
  const of = command.several === true ? `${quoted(command.file)}: ` : ''
  // Said once at the end (--verify says it in its own line): a `log_start` that never matches,
  // or a record format whose records are this large, shows here rather than only in the output.
  // A log truncated in place while read (logrotate's copytruncate) ends early, as `cat` does:
  // the chunks are right for the bytes read, but they are not the whole file that was opened.
  if (size !== undefined && reading.bytes < size) {
    process.stderr.write(`docsplit: note: ${quoted(command.file)} shrank while it was read: the chunks cover its first ${reading.bytes.toLocaleString('en-US')} of the ${size.toLocaleString('en-US')} bytes it had when opened\n`)
  }
  const replaced = summary.document.replaced
  if (replaced !== undefined && replaced.sequences > 0) {
    process.stderr.write(`docsplit: note: ${of}${replaced.sequences.toLocaleString('en-US')} invalid UTF-8 sequence${replaced.sequences === 1 ? '' : 's'} read as U+FFFD (the first at byte ${replaced.first_byte!.toLocaleString('en-US')})\n`)
  }
  if (protectedChunks > 0 && verifier === undefined) {
    // Most chunks over: entries likely run together (a start pattern that never matches).
    const hint = summary.document.input_format === 'log' && protectedChunks * 2 > summary.chunk_count ? '; entries may run together: see the log_start option' : ''
    process.stderr.write(`docsplit: note: ${of}${protectedChunks} of ${summary.chunk_count} chunks are a single record over ${summary.metadata.max_tokens} tokens, kept whole (protected)${hint}\n`)
  }
  // Another format's option is left out, as the library and the service do (metadata.options
  // lists those in effect): said here, so that `--log-start` on a log named `.txt` is not lost.
  const given = command.options as Record<string, unknown>
  const unused = Object.keys(given).filter((name) => given[name] != null && !(name in summary.metadata.options))
  if (unused.length > 0) {
    // A boolean comes from the flags as text: `--no-header` is "false".
    const properties = optionsSchema().properties as Record<string, { type?: string }>
    const flags = unused.map((name) => `--${properties[name]?.type === 'boolean' && String(given[name]) === 'false' ? 'no-' : ''}${name.replace(/_/g, '-')}`).join(', ')
    process.stderr.write(`docsplit: note: ${of}${flags} left out: ${unused.length === 1 ? 'it is an option' : 'they are options'} of another format or splitter than ${summary.document.input_format} with ${summary.metadata.splitter} (see docsplit formats; --input-format and --splitter choose)\n`)
  }
  if (verifier !== undefined) {
    const lossless = summary.document.encoding !== 'binary'
    const violations = verifier.finish(lossless)
    if (violations.length > 0) {
      for (const v of violations) process.stderr.write(`docsplit: verify: ${of}chunk ${v.chunk}: ${v.rule}: ${v.detail}\n`)
      const shown = violations.length < verifier.violationCount ? ` (${violations.length} shown)` : ''
      throw new DocsplitError('DOCSPLIT_VERIFY_FAILED', `${verifier.violationCount} invariant violation(s) found${shown}`)
    }
    const checked = lossless ? 'lossless, offsets (characters, bytes, lines) and overlaps exact' : `in order, character and line offsets and overlaps exact (${summary.document.input_format} is read as bytes: its chunks are not the file's bytes)`
    process.stderr.write(`docsplit: verified ${of}${summary.chunk_count} chunk${summary.chunk_count === 1 ? '' : 's'}: ${checked}, every chunk within ${summary.metadata.max_tokens} tokens by recount${verifier.protectedCount > 0 ? ` but ${verifier.protectedCount} protected (each a single record over it)` : ''}\n`)
  }
  return 0
}
