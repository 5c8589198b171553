/**
 * Worker-thread entry (piscina): runs one split off the main event loop, so a split past its
 * budget can be stopped for real (the thread is terminated) and health probes answer while
 * splits run. Results travel back serialized: the main thread sends the JSON as is.
 *
 * For NDJSON the task carries a MessagePort; the header, each chunk (as soon as the engine
 * makes it) and the trailer or error go through that one port, in order.
 */
import { resourceLimits, workerData } from 'node:worker_threads'
import { Piscina } from 'piscina'
import type { MessagePort } from 'node:worker_threads'
import { watchPluginSteps } from '../core/plugin-calls.js'
import { responseOpening } from '../core/schema.js'
import { DocsplitError, isDocsplitError, loadPlugins, splitStream } from '../index.js'
import { retireIfGrown } from './retire.js'
import { writeStep } from './waiting-step.js'

export interface SplitTask {
  /**
   * Only load the engine and plugins (at start, so the first split does not wait for it). The
   * barrier holds each warm-up task until all have arrived, so each lands on its own worker.
   */
  warmup?: { barrier: Int32Array, count: number }
  input: string | Uint8Array
  options: Record<string, unknown>
  /** Present for streamed (NDJSON) responses. */
  port?: MessagePort
  /** With `port`: the size of the chunk lines sent that the main thread has not passed on yet. */
  unsent?: Int32Array
  /** Where this worker keeps the plugin step the split awaits (waiting-step.ts), shared with the pool. */
  waiting?: Uint16Array
}

/** How far (in UTF-16 code units of chunk lines) a stream may run ahead of its client. */
const STREAM_WINDOW = 1024 * 1024

type WaitAsync = (buffer: Int32Array, index: number, value: number) => { async: boolean, value: Promise<string> | string }

/** Waits until the lines on their way to the client are under the window, then counts `size`. */
async function room (unsent: Int32Array, size: number): Promise<void> {
  const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync
  for (let n = Atomics.load(unsent, 0); n >= STREAM_WINDOW; n = Atomics.load(unsent, 0)) {
    const wait = waitAsync(unsent, 0, n)
    if (wait.async) await wait.value
  }
  Atomics.add(unsent, 0, size)
}

/**
 * A failure the client may see: a DocsplitError's code and message, or DOCSPLIT_INTERNAL (with
 * the part that failed, for the log).
 */
export interface TaskFailure { ok: false, code: string, message: string, part?: string }
/** `retire`: this worker's thread id, when it asks to be replaced now that its answer is in (retire.ts). */
export type TaskResult = ({ ok: true, json?: Uint8Array } | TaskFailure) & { retire?: number }

export type StreamMessage =
  | { kind: 'start', line: string }
  | { kind: 'chunk', line: string }
  | { kind: 'end', line: string }
  | { kind: 'error', failure: TaskFailure }

let ready: Promise<unknown> | undefined

/** The running split's `waiting`: one split runs at a time on a worker. */
let waiting: Uint16Array | undefined
watchPluginSteps((step) => { if (waiting !== undefined) writeStep(waiting, step) })

/**
 * Running from TypeScript sources (tests under tsx): a worker thread on Node 20 gets tsx's
 * require hook but not its import hooks, so the engine's lazy `import()`s of .ts files would
 * fail. Register them here. The compiled service (dist/, .js) never takes this path.
 */
async function sourceHooks (): Promise<void> {
  if (!import.meta.url.endsWith('.ts')) return
  const tsx = 'tsx/esm/api'
  const { register } = await import(tsx) as { register: () => unknown }
  register()
}

/** Loads the same external plugins as the main thread, once per worker. */
function init (): Promise<unknown> {
  const plugins = (workerData as { plugins?: string[] } | undefined)?.plugins ?? []
  ready ??= sourceHooks().then(() => plugins.length > 0 ? loadPlugins(plugins) : undefined)
  return ready
}

function failure (err: unknown): TaskFailure {
  if (isDocsplitError(err) && err.code !== 'DOCSPLIT_INTERNAL') return { ok: false, code: err.code, message: err.message }
  // Unknown errors may quote the input or name server files: only the class goes back (for
  // the log), the class of the cause when the engine wrapped it.
  const inner = isDocsplitError(err) && err.cause !== undefined ? err.cause : err
  const name = inner instanceof Error ? inner.constructor.name : typeof inner
  const part = isDocsplitError(err) ? err.part : undefined
  return { ok: false, code: 'DOCSPLIT_INTERNAL', message: name, ...(part !== undefined ? { part } : {}) }
}

async function streamTo (port: MessagePort, task: SplitTask): Promise<void> {
  const stream = splitStream(task.input, task.options)
  const iterator = stream[Symbol.asyncIterator]()
  // Asking for the first chunk starts the work; start resolves before that chunk arrives.
  const first = iterator.next()
  first.catch(() => {})
  stream.summary.catch(() => {})
  const start = await stream.start
  // Written once the first chunk is made (the pool sends it then): what a parser adds to the
  // metadata as it starts (code's `syntax_aware`) is in it by then, as in the JSON answer.
  let header = false
  const sendHeader = (): void => {
    if (header) return
    header = true
    port.postMessage({ kind: 'start', line: JSON.stringify(start) } satisfies StreamMessage)
  }
  for (let step = await first; step.done !== true; step = await iterator.next()) {
    sendHeader()
    const line = JSON.stringify(step.value)
    if (task.unsent !== undefined) await room(task.unsent, line.length)
    port.postMessage({ kind: 'chunk', line } satisfies StreamMessage)
  }
  const summary = await stream.summary
  sendHeader()
  const { document, reference_definitions: refs, chunk_count: count } = summary
  port.postMessage({ kind: 'end', line: JSON.stringify({ document, reference_definitions: refs, chunk_count: count }) } satisfies StreamMessage)
}

/**
 * The longest JSON answer, in characters: an eighth of the worker's heap (its parts and their
 * join, two bytes a character at worst, stay within half of it), and never near V8's longest
 * string. A 5 MB document of nested XML at max_tokens 8 makes some 450 MB of JSON: built whole
 * with its chunks, the worker reached its heap limit inside V8's collector, which aborts the
 * whole process rather than the worker.
 */
const MAX_JSON_CHARS = Math.min(256 * 2 ** 20, ((resourceLimits.maxOldGenerationSizeMb ?? 2048) * 2 ** 20) / 8)

/**
 * The JSON answer, byte for byte `JSON.stringify` of `split()`'s response in UTF-8, built a chunk
 * at a time so that the chunks themselves are not all held, and refused past MAX_JSON_CHARS.
 * Encoded here and moved to the main thread (not copied): a 118 MB answer given as a string
 * held the main thread's event loop, and so /health, 0.6-0.9 s while it was copied, measured
 * and encoded there.
 */
async function jsonAnswer (task: SplitTask): Promise<Uint8Array> {
  const stream = splitStream(task.input, task.options)
  // Rejects too when the answer is refused part-way (awaited below otherwise).
  stream.summary.catch(() => {})
  const lines: string[] = []
  let size = 0
  for await (const chunk of stream) {
    const line = JSON.stringify(chunk)
    size += line.length + 1
    if (size > MAX_JSON_CHARS) {
      throw new DocsplitError('DOCSPLIT_LIMIT_EXCEEDED', `the JSON answer would be larger than ${Math.round(MAX_JSON_CHARS / 2 ** 20)} MB (an eighth of DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB); ask for NDJSON (Accept: application/x-ndjson), which is streamed, or split with a larger max_tokens`)
    }
    lines.push(line)
  }
  return new TextEncoder().encode(`${responseOpening(await stream.summary)}${lines.join(',')}]}`)
}

export default async function run (task: SplitTask): Promise<TaskResult> {
  const attempted = await attempt(task)
  const retire = retireIfGrown((workerData as { retire?: Int32Array } | undefined)?.retire)
  const result = retire === undefined ? attempted : { ...attempted, retire }
  // The answer's bytes are transferred with the result (Piscina.move of a transferable).
  if (!result.ok || result.json === undefined) return result
  const movable = { [Piscina.transferableSymbol]: result.json.buffer, [Piscina.valueSymbol]: result }
  return Piscina.move(movable as unknown as Parameters<typeof Piscina.move>[0]) as unknown as TaskResult
}

async function attempt (task: SplitTask): Promise<TaskResult> {
  waiting = task.waiting
  try {
    await init()
    if (task.warmup !== undefined) {
      const { barrier, count } = task.warmup
      Atomics.add(barrier, 0, 1)
      Atomics.notify(barrier, 0)
      const deadline = Date.now() + 60_000
      for (let seen = Atomics.load(barrier, 0); seen < count && Date.now() < deadline; seen = Atomics.load(barrier, 0)) {
        Atomics.wait(barrier, 0, seen, 100)
      }
      return { ok: true }
    }
    if (task.port === undefined) return { ok: true, json: await jsonAnswer(task) }
    await streamTo(task.port, task)
    return { ok: true }
  } catch (err) {
    const result = failure(err)
    task.port?.postMessage({ kind: 'error', failure: result } satisfies StreamMessage)
    return result
  } finally {
    waiting = undefined
    task.port?.close()
  }
}
