/**
 * The worker pool (piscina): at most DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS splits run at once, at
 * most DOCSPLIT_WEB_MAX_QUEUED_SPLITS wait, and each has DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS from
 * the moment it is accepted (queue wait included). Past the budget the AbortSignal makes piscina
 * terminate the thread and start a fresh one, so the work really stops.
 */
import { existsSync } from 'node:fs'
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { PassThrough, type Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Piscina } from 'piscina'
import { DocsplitError } from '../../core/errors.js'
import { toProblem, type RetryHint } from '../problem.js'
import type { SplitTask, StreamMessage, TaskFailure, TaskResult } from '../worker.js'
import { readStep, stepSlot } from '../waiting-step.js'
import { retirements } from '../retire.js'

export interface PoolOptions {
  maxConcurrentSplits: number
  maxQueuedSplits: number
  splitTimeoutSeconds: number
  workerMaxMemoryMb: number
  /**
   * Bytes of JSON answers the main process may hold at once (DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB):
   * a JSON answer is held whole from the moment its worker hands it over until it is sent.
   */
  jsonResponseBytes: number
  /** External plugin modules the workers load (DOCSPLIT_PLUGINS). */
  plugins: string[]
}

/** A JSON answer held in the main process; `release` once it is sent or its client is gone. */
export interface HeldJson {
  /** The answer in UTF-8, moved from the worker that made it. */
  json: Uint8Array
  release: () => void
}

export interface SplitPool {
  /**
   * Runs one split; resolves to the response JSON text, counted against the JSON answer memory
   * until released. Refused (503 DOCSPLIT_OVERLOADED) before the split when that memory is
   * used up, and after it when its answer would not fit beside those already held (an answer
   * alone is always sent, even one larger than the budget).
   */
  json (input: string | Uint8Array, options: Record<string, unknown>, cancel: AbortSignal): Promise<HeldJson>
  /**
   * Runs one split as NDJSON. Resolves once the header line is ready (so a failure before it is
   * still a plain problem response); later failures end the stream with an `{"error": ...}` line.
   */
  ndjson (input: string | Uint8Array, options: Record<string, unknown>, cancel: AbortSignal): Promise<Readable>
  /**
   * The refusal a split would meet if it were submitted now (queue full; for a JSON answer,
   * its memory used up), or undefined. Asked as a request's headers arrive, so that it is
   * refused before its body is read; `json` and `ndjson` check again when it is submitted.
   */
  refusal (json: boolean): DocsplitError | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    splitPool: SplitPool
  }
}

/** Under tsx the worker is the .ts source; in the build it is the compiled .js. */
function workerFile (): string {
  const ts = fileURLToPath(new URL('../worker.ts', import.meta.url))
  return import.meta.url.endsWith('.ts') && existsSync(ts) ? ts : fileURLToPath(new URL('../worker.js', import.meta.url))
}

function failureError (failure: TaskFailure): DocsplitError {
  if (failure.code === 'DOCSPLIT_INTERNAL') {
    // The worker sends only the error's class and the part that failed; they go to the log.
    return Object.assign(new DocsplitError('DOCSPLIT_INTERNAL', 'internal error', { part: failure.part?.slice(0, 200) }), { errorClass: failure.message.slice(0, 64) })
  }
  return new DocsplitError(failure.code as DocsplitError['code'], failure.message)
}

async function poolPlugin (app: FastifyInstance, opts: PoolOptions): Promise<void> {
  const retire = retirements(opts.maxConcurrentSplits)
  const pool = new Piscina({
    filename: workerFile(),
    minThreads: opts.maxConcurrentSplits,
    maxThreads: opts.maxConcurrentSplits,
    concurrentTasksPerWorker: 1,
    idleTimeout: 60_000,
    atomics: 'disabled',
    workerData: { plugins: opts.plugins, retire: retire.slots },
    resourceLimits: { maxOldGenerationSizeMb: opts.workerMaxMemoryMb },
    loadBalancer: retire.balancer,
  })
  // A worker that fails to start is replaced by piscina; keep the event from crashing the process.
  pool.on('error', () => { app.log.error({ code: 'DOCSPLIT_INTERNAL' }, 'worker error') })
  const budgetMs = Math.round(opts.splitTimeoutSeconds * 1000)
  let pending = 0

  /**
   * Why a task failed, as the DocsplitError the client gets. `waiting`: the task's plugin step
   * slot; a split stopped while it awaited a plugin's step (a create() that never settles) says
   * which, since a smaller document would not help.
   */
  function poolError (err: unknown, timeout: AbortSignal, waiting?: Uint16Array): DocsplitError {
    if (err instanceof DocsplitError) return err
    const e = err as { name?: string, message?: string, code?: string }
    if (e.name === 'AbortError') {
      if (timeout.aborted) {
        const budget = `the split ran past its budget of ${opts.splitTimeoutSeconds} s (DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS)`
        const step = waiting === undefined ? undefined : readStep(waiting)
        if (step !== undefined) {
          return new DocsplitError('DOCSPLIT_TIMEOUT', `${budget} waiting for ${step} to finish, and was stopped`, { part: step })
        }
        return new DocsplitError('DOCSPLIT_TIMEOUT',
          `${budget} and was stopped; send a smaller document, or split it with the docsplit CLI or library, which have no time limit`)
      }
      return new DocsplitError('DOCSPLIT_OVERLOADED', 'the request was cancelled')
    }
    if (e.message === 'Terminating worker thread' || (e.name === 'AbortError' && /pool is closed/.test(String((err as { cause?: unknown }).cause ?? '')))) {
      return new DocsplitError('DOCSPLIT_OVERLOADED', 'the service is shutting down; retry on another instance')
    }
    if (e.message === 'Task queue is at limit' || e.message === 'No task queue available and all Workers are busy') return overloaded()
    if (e.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return new DocsplitError('DOCSPLIT_LIMIT_EXCEEDED',
        `the split needed more memory than a worker may use (DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB = ${opts.workerMaxMemoryMb})`)
    }
    return new DocsplitError('DOCSPLIT_INTERNAL', 'internal error')
  }

  /** What a 503 asks a client to wait before it retries: a quarter of a split's budget, 1-30 s. */
  const retryHint: RetryHint = { retryAfterSeconds: Math.min(30, Math.max(1, Math.ceil(opts.splitTimeoutSeconds / 4))) }

  function overloaded (): DocsplitError {
    return Object.assign(new DocsplitError('DOCSPLIT_OVERLOADED',
      `all ${opts.maxConcurrentSplits} workers are busy and ${opts.maxQueuedSplits} splits are waiting (DOCSPLIT_WEB_MAX_QUEUED_SPLITS); retry later`),
    retryHint)
  }

  // Splits wait here, not in piscina: a task is handed over only when a worker is free, so the
  // queue bound and the budget (queue wait included) are exact. piscina 5 parks some waiting
  // tasks outside the queue that its `maxQueue` counts.
  let running = 0
  const waiting: Array<() => void> = []

  function acquire (signal: AbortSignal): Promise<void> {
    if (running < opts.maxConcurrentSplits) {
      running++
      return Promise.resolve()
    }
    return new Promise<void>((resolve, reject) => {
      const start = (): void => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = (): void => {
        const at = waiting.indexOf(start)
        if (at !== -1) waiting.splice(at, 1)
        reject(Object.assign(new Error('The task has been aborted'), { name: 'AbortError' }))
      }
      waiting.push(start)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  /** Hands the slot to the next waiting split, or frees it. */
  function release (): void {
    const next = waiting.shift()
    if (next !== undefined) next()
    else running--
  }

  const queueFull = (): boolean => pending >= opts.maxConcurrentSplits + opts.maxQueuedSplits

  async function submit (task: SplitTask, transferList: Array<ArrayBuffer | MessagePort> | undefined, cancel: AbortSignal): Promise<TaskResult> {
    if (queueFull()) throw overloaded()
    const waiting = stepSlot()
    const timeout = AbortSignal.timeout(budgetMs)
    const signal = AbortSignal.any([timeout, cancel])
    pending++
    try {
      await acquire(signal)
      let result: TaskResult | undefined
      try {
        result = await pool.run({ ...task, waiting } satisfies SplitTask, { signal, transferList: transferList as never }) as TaskResult
        return result
      } finally {
        retire.afterSplit(pool.threads, result?.retire)
        release()
      }
    } catch (err) {
      throw poolError(err, timeout, waiting)
    } finally {
      pending--
    }
  }

  // JSON answers are made whole by the worker and held here until sent: a large answer
  // (a 5 MB document at max_tokens 8 makes about 95 MB of JSON) to a slow reader stays in
  // this process for as long as it reads. Their total is kept under a budget.
  let heldJson = 0
  // NDJSON lines held for clients slower than their splits (see ndjson), in the same memory: at
  // most half of it, so that JSON answers always have the other half; they do not count as
  // answers held when a JSON answer alone is sent.
  let spilledNdjson = 0
  const heldAll = (): number => heldJson + spilledNdjson
  function noRoomForJson (): DocsplitError {
    return Object.assign(new DocsplitError('DOCSPLIT_OVERLOADED',
      `the JSON answers being sent use the memory set aside for them (DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB = ${Math.round(opts.jsonResponseBytes / 2 ** 20)}); retry later, or ask for NDJSON (Accept: application/x-ndjson), which is streamed`),
    retryHint)
  }

  const splitPool: SplitPool = {
    refusal (json) {
      if (queueFull()) return overloaded()
      if (json && heldAll() >= opts.jsonResponseBytes) return noRoomForJson()
      return undefined
    },

    async json (input, options, cancel) {
      // Refused before the split starts while the budget is used up.
      if (heldAll() >= opts.jsonResponseBytes) throw noRoomForJson()
      const result = await submit({ input, options }, undefined, cancel)
      if (!result.ok) throw failureError(result)
      const json = result.json ?? new TextEncoder().encode('{}')
      const bytes = json.byteLength
      // Splits that started together finish one after another: each answer must fit beside
      // those already held, or it is dropped here (one answer alone always goes out).
      if (heldJson > 0 && heldAll() + bytes > opts.jsonResponseBytes) throw noRoomForJson()
      heldJson += bytes
      let released = false
      return {
        json,
        release: () => {
          if (released) return
          released = true
          heldJson -= bytes
        },
      }
    },

    ndjson (input, options, cancel) {
      const { port1, port2 } = new MessageChannel()
      const body = new PassThrough()
      // The client may go away mid-stream: fastify then destroys the body; later lines are dropped.
      body.on('error', () => {})
      const write = (line: string): boolean => body.destroyed || body.write(`${line}\n`)
      // Backpressure: the worker counts the chunk lines it sends in `unsent` and waits while
      // too many are on their way; a line is taken off once the body has room for it. A client
      // slower than the split has its lines wait here instead, in the memory for JSON answers
      // while its half for such lines has room (`spilled` bytes), so that the split ends within
      // its budget and frees its worker; once that half is used up, the client holds the worker
      // back. Released once the body has taken them all ('drain'; after the end, at 'close').
      const unsent = new Int32Array(new SharedArrayBuffer(4))
      let held = 0
      let spilled = 0
      const taken = (size: number): void => {
        Atomics.sub(unsent, 0, size)
        Atomics.notify(unsent, 0)
      }
      const unspill = (): void => {
        spilledNdjson -= spilled
        spilled = 0
      }
      body.on('drain', () => {
        taken(held)
        held = 0
        unspill()
      })
      body.on('close', unspill)
      const writeChunk = (line: string): void => {
        if (write(line)) return taken(line.length)
        const bytes = Buffer.byteLength(line) + 1
        if (body.destroyed || 2 * (spilledNdjson + bytes) > opts.jsonResponseBytes || heldAll() + bytes > opts.jsonResponseBytes) {
          held += line.length
          return
        }
        spilledNdjson += bytes
        spilled += bytes
        taken(line.length)
      }
      return new Promise<Readable>((resolve, reject) => {
        // The header line waits for the first chunk (or the end): a failure before any chunk is
        // then always an ordinary problem response, never a 200 whose stream ends in an error.
        let header: string | undefined
        let started = false
        let finished = false
        const begin = (): void => {
          if (started || header === undefined) return
          started = true
          write(header)
          resolve(body)
        }
        const finish = (line: string | undefined): void => {
          if (finished) return
          finished = true
          port1.close()
          if (line !== undefined) write(line)
          if (!body.destroyed) body.end()
        }
        const fail = (err: DocsplitError): void => {
          if (finished) return
          if (!started) {
            finished = true
            port1.close()
            reject(err)
            return
          }
          const problem = toProblem(err).body
          // Told to the route, which logs the failure's status rather than the 200 sent.
          body.emit('failed', problem.status)
          finish(JSON.stringify({ error: problem }))
        }
        port1.on('message', (message: StreamMessage) => {
          if (finished) return
          if (message.kind === 'start') {
            header = message.line
          } else if (message.kind === 'chunk') {
            begin()
            writeChunk(message.line)
          } else if (message.kind === 'end') {
            begin()
            finish(message.line)
          } else {
            fail(failureError(message.failure))
          }
        })
        // The port closes without an end when the worker dies; why it died (out of memory: a
        // 422) comes with the task's rejection, after the close. A task that ended well but
        // closed its port without an end is an internal error.
        let portClosed = false
        let taskDone = false
        const closedWithoutEnd = (): void => { fail(new DocsplitError('DOCSPLIT_INTERNAL', 'internal error')) }
        port1.on('close', () => {
          portClosed = true
          if (taskDone) closedWithoutEnd()
        })
        submit({ input, options, port: port2, unsent }, [port2], cancel).then(
          // A failed split also sends its error through the port, in order after its chunks:
          // that message decides, not this result, which may arrive before them.
          () => {
            taskDone = true
            if (portClosed) closedWithoutEnd()
          },
          (err: unknown) => { fail(poolError(err, AbortSignal.abort())) },
        )
      })
    },
  }

  app.decorate('splitPool', splitPool)
  // Start every worker (engine and plugins loaded) before the service answers, so the first
  // splits do not spend their budget on start-up, and a plugin that fails in a worker stops the start.
  app.addHook('onReady', async () => {
    const count = opts.maxConcurrentSplits
    const barrier = new Int32Array(new SharedArrayBuffer(4))
    const results = await Promise.all(Array.from({ length: count }, () => pool.run({ warmup: { barrier, count } }) as Promise<TaskResult>))
      .catch((err: unknown) => {
        // A plugin that loads large tables can need more than the heap limit before any split.
        if ((err as { code?: string }).code !== 'ERR_WORKER_OUT_OF_MEMORY') throw err
        throw new DocsplitError('DOCSPLIT_INVALID_OPTION',
          `the workers ran out of memory while loading the engine and plugins: DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB = ${opts.workerMaxMemoryMb} is too small for them; raise it`)
      })
    const failed = results.find((r): r is TaskFailure => !r.ok)
    if (failed !== undefined) throw failureError(failed)
  })
  app.addHook('onClose', async () => { await pool.destroy() })
}

export default fp(poolPlugin, { name: 'docsplit-pool', fastify: '5.x' })
