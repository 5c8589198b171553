/**
 * The library's split functions over the pipeline's batches: `split` (the whole response),
 * `splitStream` (chunks one by one, with `start` and `summary` promises) and `splitBatches`
 * (chunks a batch at a time, for the CLI).
 */
import type { AbortSignalLike, SplitControl } from './abort.js'
import { abortedError } from './abort.js'
import { beginsWhenAwaited } from './awaited.js'
import { DocsplitError, isDocsplitError } from './errors.js'
import type { SplitInput } from './input.js'
import { run, type SplitOptions, type SplitStart } from './pipeline.js'
import { pluginFailure } from './plugin-calls.js'
import type { Chunk, SplitResponse, SplitSummary } from './schema.js'

/** Chunks as they are made; `start` resolves before the first, `summary` after the last. */
export interface ChunkStream extends AsyncIterable<Chunk> {
  readonly start: Promise<SplitStart>
  readonly summary: Promise<SplitSummary>
}

/** Splits and yields chunks as they are made (constant memory on streaming formats). */
export function splitStream (input: SplitInput, options: SplitOptions = {}, control: SplitControl = {}): ChunkStream {
  return chunkStream(input, options, false, control.signal)
}

/** Chunks in the batches they are made in (one per input piece); `start` and `summary` as for ChunkStream. */
export interface ChunkBatches extends AsyncIterable<Chunk[]> {
  readonly start: Promise<SplitStart>
  readonly summary: Promise<SplitSummary>
}

/**
 * splitStream by batches, for a caller that handles many chunks at a time (the CLI): one await
 * a batch instead of one a chunk. With `idsLater`, every chunk's `id` is left empty for the
 * caller to give elsewhere (chunkId of chunk-id.ts, on another thread). Not part of the public API.
 */
export function splitBatches (input: SplitInput, options: SplitOptions = {}, idsLater = false, signal?: AbortSignalLike): ChunkBatches {
  const { start, summary, done, failed } = sidePromises()
  return { start, summary, [Symbol.asyncIterator]: once(() => batchesOf(run(input, options, done.start, idsLater, signal), done.summary, failed)) }
}

/**
 * A stream whose `start` (or `summary`) awaited before its chunks are read begins the split
 * itself: up to the first batch of chunks for `start`, to the end for `summary` (its chunks then
 * wait in memory for the reader).
 */
function chunkStream (input: SplitInput, options: SplitOptions, idsLater: boolean, signal?: AbortSignalLike): ChunkStream {
  const { start, summary, done, failed } = sidePromises()
  let chunks: ChunksAhead | undefined
  let read = false
  const open = (): ChunksAhead => (chunks ??= chunksOf(run(input, options, done.start, idsLater, signal), done.summary, failed, signal))
  const ahead = (all: boolean) => (): void => { if (!read) open().ahead(all) }
  return {
    start: beginsWhenAwaited(start, ahead(false)),
    summary: beginsWhenAwaited(summary, ahead(true)),
    [Symbol.asyncIterator]: once(() => {
      read = true
      return open()
    }),
  }
}

/**
 * A stream is iterated once: a second pass would read a consumed input again (no chunks) or a
 * string twice, and two at once would settle `summary` with one pass's counts.
 */
function once<T> (iterate: () => AsyncIterator<T>): () => AsyncIterator<T> {
  let used = false
  return () => {
    if (used) {
      const error = new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'a split stream is iterated once; call splitStream again for another pass')
      return { next: async () => { throw error } }
    }
    used = true
    return iterate()
  }
}

/** The `start` and `summary` promises of a stream, and how to settle them. */
function sidePromises (): {
  start: Promise<SplitStart>
  summary: Promise<SplitSummary>
  done: { start: (s: SplitStart) => void, summary: (s: SplitSummary) => void }
  failed: (e: DocsplitError) => void
} {
  let resolveStart!: (s: SplitStart) => void
  let rejectStart!: (e: unknown) => void
  let resolveSummary!: (s: SplitSummary) => void
  let rejectSummary!: (e: unknown) => void
  const start = new Promise<SplitStart>((resolve, reject) => { resolveStart = resolve; rejectStart = reject })
  const summary = new Promise<SplitSummary>((resolve, reject) => { resolveSummary = resolve; rejectSummary = reject })
  // Callers that only iterate must not see unhandled rejections from the side promises.
  start.catch(() => {})
  summary.catch(() => {})
  const failed = (e: DocsplitError): void => {
    rejectStart(e)
    rejectSummary(e)
  }
  return { start, summary, done: { start: resolveStart, summary: resolveSummary }, failed }
}

/** A failure of the split as the stream reports it: a DocsplitError. */
const streamFailure = (error: unknown): DocsplitError => isDocsplitError(error) ? error : pluginFailure(error, 'engine')

/** The error for the summary of a stream stopped before its end. */
const cancelled = (): DocsplitError => new DocsplitError('DOCSPLIT_CANCELLED', 'the split was stopped before its last chunk, so it has no summary')

/** `run`'s batches as they come, with chunksOf's endings: the summary, one error, or a stop. */
async function * batchesOf (batches: AsyncGenerator<Chunk[], SplitSummary>, done: (s: SplitSummary) => void, failed: (e: DocsplitError) => void): AsyncGenerator<Chunk[]> {
  let ended = false
  try {
    for (;;) {
      let step: IteratorResult<Chunk[], SplitSummary>
      try {
        step = await batches.next()
      } catch (error) {
        ended = true
        const failure = streamFailure(error)
        failed(failure)
        throw failure
      }
      if (step.done === true) {
        ended = true
        done(step.value)
        return
      }
      yield step.value
    }
  } finally {
    if (!ended) {
      failed(cancelled())
      await batches.return(undefined as unknown as SplitSummary)
    }
  }
}

interface ChunksAhead extends AsyncIterator<Chunk> {
  /** Reads the next batch (`all`: every batch) before it is asked for. */
  ahead (all: boolean): void
}

/**
 * The chunks of `run`'s batches, one by one, by hand rather than as an async generator: a
 * ready chunk costs one promise; and `run` resumes once a batch, not once a chunk, so V8 never
 * finds that long function hot (optimizing it took 80 ms of CPU in any split of a few MB).
 */
function chunksOf (batches: AsyncGenerator<Chunk[], SplitSummary>, done: (s: SplitSummary) => void, failed: (e: DocsplitError) => void, signal?: AbortSignalLike): ChunksAhead {
  let batch: Chunk[] = []
  let at = 0
  /** Batches read ahead (see ahead), in order, after `batch`; the next one to take. */
  let later: Chunk[][] = []
  let taken = 0
  let ended = false
  let failure: DocsplitError | undefined
  /** The batch being fetched: callers that ask at once wait for the same one, in turn. */
  let fetching: Promise<void> | undefined
  const fetch = async (): Promise<void> => {
    try {
      const step = await batches.next()
      if (step.done === true) {
        ended = true
        done(step.value)
      } else {
        later.push(step.value)
      }
    } catch (error) {
      ended = true
      failure = streamFailure(error)
      failed(failure)
    } finally {
      fetching = undefined
    }
  }
  return {
    ahead (all: boolean): void {
      const read = async (): Promise<void> => {
        do await (fetching ??= fetch())
        while (all && !ended)
      }
      void read()
    },
    async next (): Promise<IteratorResult<Chunk>> {
      // Aborted: the chunks made before it (a whole text's, maybe) are not handed out.
      if (signal?.aborted === true && !ended) {
        ended = true
        const e = abortedError(signal)
        failed(e)
        batch = []
        later = []
        await fetching
        await batches.return(undefined as unknown as SplitSummary)
        throw e
      }
      while (at >= batch.length) {
        if (taken < later.length) {
          batch = later[taken]!
          later[taken++] = []
          at = 0
          if (taken === later.length) {
            later = []
            taken = 0
          }
          continue
        }
        if (failure !== undefined) {
          // Thrown once, as a generator does; after that the stream is done.
          const e = failure
          failure = undefined
          throw e
        }
        if (ended) return { value: undefined, done: true }
        await (fetching ??= fetch())
      }
      return { value: batch[at++]!, done: false }
    },
    async return (): Promise<IteratorResult<Chunk>> {
      if (!ended) {
        // Stopped early (a `break`): the summary will never be known; say so rather than hang.
        ended = true
        failed(cancelled())
      }
      await fetching
      batch = []
      later = []
      await batches.return(undefined as unknown as SplitSummary)
      return { value: undefined, done: true }
    },
  }
}

/** Splits a whole input and returns the `docsplit.chunk.v1` response. */
export async function split (input: SplitInput, options: SplitOptions = {}, control: SplitControl = {}): Promise<SplitResponse> {
  // By batches: no promise per chunk.
  const batches = splitBatches(input, options, false, control.signal)
  const chunks: Chunk[] = []
  for await (const batch of batches) for (const chunk of batch) chunks.push(chunk)
  const summary = await batches.summary
  return { ...summary, chunks }
}
