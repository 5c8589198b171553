/**
 * `--jsonl` output: one chunk per line, in order. For a large input, chunks gather in batches
 * that a worker thread turns into JSON and writes to standard output, so the main thread only
 * splits (measured: a 256 MB log 4.13 -> 3.40 s, 2 GB 29.7 -> 25.0 s, 64 MB of CSV 2.56 ->
 * 2.13 s). The thread costs about 17 MB of memory and gained nothing on 8 MB of markdown, so it
 * serves inputs of THREAD_FROM bytes or more (and standard input, whose size is unknown), and
 * starts with the first full batch. Otherwise (a smaller input, one core, a thread that cannot
 * start, an output under one batch) the main thread writes, each chunk as it is made.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { chunkId, makeChunkId } from '../core/chunk-id.js'
import type { Chunk } from '../core/schema.js'
import { Output, outputError, readerClosed } from './output.js'

/**
 * Writes every byte to fd 1. A pipe may be non-blocking (the main thread's process.stdout sets
 * it so): on EAGAIN the reader is behind, so wait a little and go on. Structured clone keeps
 * the chunks' properties and their order, so JSON.stringify gives the same line as it would
 * on the main thread. Chunks made without ids (see JsonlOutput.idsLater) get them here, from
 * the engine's own makeChunkId.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const { writeSync } = require('node:fs')
// Set by the main thread to stop after the line being written (see WriterThread.stop).
const stopped = new Int32Array(workerData.stop)
const chunkId = (${makeChunkId.toString()})((data) => require('node:crypto').hash('sha256', data, 'hex'))
const nap = new Int32Array(new SharedArrayBuffer(4))
// One buffer, grown only for a line longer than it: a new one per batch cost the kernel a page
// fault per page. Each line is encoded into it as it is made; joining a batch into one string
// first made a string of large-object size per batch (fresh pages each time), and took 60% of
// this thread.
let bytes = Buffer.allocUnsafeSlow(1 << 20)
const flush = (length) => {
  for (let at = 0; at < length;) {
    try {
      at += writeSync(1, bytes, at, length - at)
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error
      Atomics.wait(nap, 0, 0, 2)
    }
  }
}
parentPort.on('message', (batch) => {
  if (batch === 'stop') return parentPort.postMessage({ stopped: true })
  try {
    let length = 0
    let context
    for (const chunk of batch) {
      if (Atomics.load(stopped, 0) === 1) break
      // null: the context of the chunk before (see sendContextsOnce)
      if (chunk.context === null) chunk.context = context
      else context = chunk.context
      if (chunk.id === '') chunk.id = chunkId(chunk, chunk.text)
      const line = JSON.stringify(chunk)
      // A UTF-16 code unit takes at most 3 bytes of UTF-8; one more for the newline.
      const most = line.length * 3 + 1
      if (length + most > bytes.length) {
        flush(length)
        length = 0
        if (most > bytes.length) bytes = Buffer.allocUnsafeSlow(most)
      }
      length += bytes.write(line, length)
      bytes[length++] = 10
    }
    flush(length)
    parentPort.postMessage({})
  } catch (error) {
    parentPort.postMessage({ error: typeof error.code === 'string' ? error.code : 'EIO' })
  }
})
`

/** Input bytes from which the writer thread is used. */
export const THREAD_FROM = 32 << 20
/** Characters of chunk text per batch. */
const BATCH_CHARS = 1 << 18
/**
 * A chunk waits at most this long in a partial batch: chunks of a slow stream (`tail -f log |
 * docsplit split - --jsonl`) go out as they are made, not once a batch is full.
 */
const IDLE_FLUSH_MS = 50
/** Batches sent and not yet written; past this, the split waits for the writer (a slow reader). */
const IN_FLIGHT = 4

/** A line of output: a chunk, or one of --ndjson's header, trailer and error lines. */
export type OutputLine = Chunk | Record<string, unknown>

/**
 * Runs `post` with each chunk's context that is the chunk before's (a CSV header, repeated in
 * every chunk) set to null, then puts them back: a batch's contexts are cloned once, not once
 * a chunk. On 64 MB of CSV with a 931-character header, that was as much text again to clone.
 */
function sendContextsOnce (batch: OutputLine[], post: () => void): void {
  const lines = batch as Array<{ context?: unknown }>
  const same: number[] = []
  let context: unknown
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (typeof line.context !== 'string') {
      context = undefined
    } else if (line.context === context) {
      same.push(i)
      line.context = null
    } else {
      context = line.context
    }
  }
  try {
    post()
  } finally {
    // in order: the chunk before has its context back already
    for (const i of same) lines[i]!.context = lines[i - 1]!.context
  }
}

class WriterThread {
  private readonly worker: Worker
  private readonly stopFlag = new Int32Array(new SharedArrayBuffer(4))
  private sent = 0
  private written = 0
  private failure: string | undefined
  /** Everyone waiting for a write to finish (the split's sends, the end). */
  private wakers: Array<() => void> = []
  private onStopped: (() => void) | undefined

  constructor () {
    this.worker = new Worker(WORKER, { eval: true, workerData: { stop: this.stopFlag.buffer }, resourceLimits: { maxYoungGenerationSizeMb: 4 } })
    this.worker.on('message', (reply: { error?: string, stopped?: true }) => {
      if (reply.stopped === true) this.onStopped?.()
      else if (reply.error !== undefined) this.failure ??= reply.error
      else this.written++
      this.wakeAll()
    })
    const stopped = (): void => {
      this.failure ??= 'EIO'
      this.wakeAll()
    }
    this.worker.on('error', stopped)
    this.worker.on('exit', stopped)
  }

  async send (batch: OutputLine[]): Promise<void> {
    if (this.failure !== undefined) throw outputError(this.failure)
    sendContextsOnce(batch, () => { this.worker.postMessage(batch) })
    this.sent++
    await this.waitFor(this.sent - IN_FLIGHT)
  }

  /**
   * Has the thread stop after the line it is writing, and the batches sent after it skipped;
   * resolves once it has (or writing failed).
   */
  async stop (): Promise<void> {
    Atomics.store(this.stopFlag, 0, 1)
    if (this.failure !== undefined) return
    await new Promise<void>((resolve) => {
      this.onStopped = resolve
      this.worker.once('exit', () => { resolve() })
      this.worker.postMessage('stop')
    })
  }

  /** Waits until everything sent is written (or writing failed), then ends the thread. */
  async end (): Promise<void> {
    try {
      await this.waitFor(this.sent)
    } finally {
      this.worker.removeAllListeners('exit')
      await this.worker.terminate()
    }
  }

  private wakeAll (): void {
    const wakers = this.wakers
    this.wakers = []
    for (const wake of wakers) wake()
  }

  private async waitFor (written: number): Promise<void> {
    while (this.written < written && this.failure === undefined) {
      await new Promise<void>((resolve) => { this.wakers.push(resolve) })
    }
    if (this.failure !== undefined) throw outputError(this.failure)
  }
}

export class JsonlOutput {
  private readonly here = new Output()
  private batch: OutputLine[] = []
  private batchChars = 0
  private thread: WriterThread | undefined
  private threadless: boolean
  /** Armed while a partial batch waits; what it last wrote (or failed to). */
  private idle: NodeJS.Timeout | undefined
  private flushing: Promise<void> = Promise.resolve()
  /** A write is under way: a partial batch waits for its end, not to go out beside it. */
  private writing = false
  /** Stopped by a signal (see stop): what comes after is not written. */
  private halted = false

  /** `inputBytes`: the input's size when known. */
  constructor (inputBytes: number | undefined) {
    this.threadless = availableParallelism() < 2 || (inputBytes !== undefined && inputBytes < THREAD_FROM)
  }

  /**
   * Whether chunks may come without ids (splitBatches' idsLater): they are given them where they
   * are written, on the writer thread (hashing there took about 8% off the main thread of a 64
   * MB log), or here should the thread not start.
   */
  get idsLater (): boolean {
    return !this.threadless
  }

  /** Writes `chunks` (or other lines) in order, or hands them to the writer thread. */
  async write (chunks: OutputLine[]): Promise<void> {
    if (readerClosed()) return
    try {
      await this.writeInOrder(chunks)
    } catch (error) {
      if (!readerClosed()) throw error
    }
  }

  private async writeInOrder (chunks: OutputLine[]): Promise<void> {
    await this.flushing
    if (this.halted) return
    if (this.threadless) return await this.writeHere(chunks)
    this.writing = true
    try {
      await this.gather(chunks)
    } finally {
      this.writing = false
    }
    if (this.batch.length > 0 && this.idle === undefined) {
      this.idle = setTimeout(() => {
        this.idle = undefined
        if (this.writing) return
        // Awaited by the next write or end, which report its failure.
        this.flushing = this.flushPartial()
        this.flushing.catch(() => {})
      }, IDLE_FLUSH_MS)
      this.idle.unref()
    }
  }

  /** The partial batch, written now: to the thread if it runs, else here (and flushed, so the thread's writes come after). */
  private async flushPartial (): Promise<void> {
    const batch = this.batch
    this.batch = []
    this.batchChars = 0
    if (this.thread === undefined) {
      await this.writeHere(batch)
      return await this.here.flush()
    }
    if (batch.length > 0) await this.thread.send(batch)
  }

  private async gather (chunks: OutputLine[]): Promise<void> {
    for (let i = 0; i < chunks.length; i++) {
      const chunk = chunks[i]!
      this.batch.push(chunk)
      this.batchChars += typeof chunk.text === 'string' ? chunk.text.length : 0
      if (this.batchChars < BATCH_CHARS) continue
      const batch = this.batch
      this.batch = []
      this.batchChars = 0
      try {
        this.thread ??= new WriterThread()
      } catch {
        this.threadless = true
        await this.writeHere(batch)
        return await this.writeHere(chunks.slice(i + 1))
      }
      await this.thread.send(batch)
    }
  }

  /** Whether a signal stopped the output. */
  get stopped (): boolean {
    return this.halted
  }

  /**
   * Ends the output after a whole line, now (a signal came): what is written or handed to the
   * writer thread goes out up to the end of a line, and nothing after it.
   */
  async stop (): Promise<void> {
    this.halted = true
    clearTimeout(this.idle)
    if (this.thread !== undefined) return await this.thread.stop()
    await this.here.settle()
  }

  /** Writes what is left and waits until all is written; the thread ends, written or not. */
  async end (): Promise<void> {
    clearTimeout(this.idle)
    this.idle = undefined
    try {
      try {
        await this.flushing
        await this.flushPartial()
      } finally {
        // A thread left running would keep the process alive after the error is told.
        await this.thread?.end()
      }
    } catch (error) {
      if (!readerClosed()) throw error
    }
  }

  private async writeHere (chunks: OutputLine[]): Promise<void> {
    for (const chunk of chunks) {
      if (this.halted) return
      if (chunk.id === '') chunk.id = chunkId(chunk as Chunk, (chunk as Chunk).text)
      await this.here.write(JSON.stringify(chunk) + '\n')
    }
  }
}
