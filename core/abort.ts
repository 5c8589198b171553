/**
 * Stopping a split from outside: an AbortSignal given to split() or splitStream(). The split
 * stops between pieces of input (a string is read 1 MiB at a time) and between the steps of a
 * whole-document parse (a single parser call, such as tree-sitter's parse of a file, runs to its
 * end first), also while it waits for input that has not come; chunks already made are not
 * handed out after it.
 */
import { DocsplitError } from './errors.js'

/**
 * What docsplit reads of an AbortSignal: the DOM's and Node's both fit, and a project without
 * either's types still compiles.
 */
export interface AbortSignalLike {
  readonly aborted: boolean
  readonly reason?: unknown
  addEventListener: (type: 'abort', listener: () => void, options?: { once?: boolean }) => void
  removeEventListener: (type: 'abort', listener: () => void) => void
}

/** How a split is controlled from outside while it runs. */
export interface SplitControl {
  /** Aborting it stops the split: it rejects (or the chunk stream throws) with DOCSPLIT_CANCELLED, its `cause` the signal's reason. */
  signal?: AbortSignalLike
}

/**
 * The signal a split was given, checked: null is none, as an option's null is; what is not a
 * signal (`{ signal: 5 }`, from JavaScript) is the caller's mistake, said as such.
 */
export function checkedSignal (signal: unknown): AbortSignalLike | undefined {
  if (signal === undefined || signal === null) return undefined
  const s = signal as Partial<AbortSignalLike>
  if (typeof s.aborted !== 'boolean' || typeof s.addEventListener !== 'function' || typeof s.removeEventListener !== 'function') {
    throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'signal must be an AbortSignal (such as AbortSignal.timeout(30_000)), or left out')
  }
  return signal as AbortSignalLike
}

/** How long a split with a signal runs before it lets the event loop turn (an abort in). */
const TURN_MS = 20

export function abortedError (signal: AbortSignalLike): DocsplitError {
  return new DocsplitError('DOCSPLIT_CANCELLED', 'the split was aborted through its signal', { cause: signal.reason })
}

/** Throws DOCSPLIT_CANCELLED once `signal` is aborted. */
export function stopIfAborted (signal: AbortSignalLike | undefined): void {
  if (signal?.aborted === true) throw abortedError(signal)
}

/**
 * `steps`, stopped by `signal`: checked before each step and raced against the step it waits
 * for, so that an abort ends a wait for input at once. `release` runs as the signal aborts (it
 * lets go of the input); a step still running then stops at its own next check of the signal,
 * and the generator is closed after it.
 */
export async function * abortable<T, R> (steps: AsyncGenerator<T, R>, signal: AbortSignalLike, release: () => void): AsyncGenerator<T, R> {
  let abort!: (error: DocsplitError) => void
  const aborted = new Promise<never>((_resolve, reject) => { abort = reject })
  aborted.catch(() => {})
  const onAbort = (): void => {
    release()
    abort(abortedError(signal))
  }
  signal.addEventListener('abort', onAbort, { once: true })
  let ended = false
  /** A step the signal interrupted, still running. */
  let running = false
  let turned = performance.now()
  try {
    for (;;) {
      stopIfAborted(signal)
      const next = steps.next()
      running = true
      const step = await Promise.race([next, aborted])
      running = false
      if (step.done === true) {
        ended = true
        return step.value
      }
      yield step.value
      // The signal is aborted by a timer or an event: they run once the event loop turns, which
      // a split of text in memory does not otherwise do before its end.
      if (performance.now() - turned > TURN_MS) {
        await new Promise((resolve) => setImmediate(resolve))
        turned = performance.now()
      }
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
    // Behind a step still running, the close waits for it (the caller releases the input).
    if (running) void steps.return(undefined as R).catch(() => {})
    else if (!ended) await steps.return(undefined as R)
  }
}
