/**
 * Promises that start the work they wait for when they are awaited. A stream's `start` and
 * `summary` settle only as its chunks are read; a caller that awaited one before reading (to
 * log the format first) waited on nothing that ran, and Node, with nothing left to do, ended
 * the process quietly, exit code 0, nothing split.
 */

/** A promise that calls `begin` (once) when anyone calls its then, catch or finally. */
class BeginsWhenAwaited<T> extends Promise<T> {
  begin: (() => void) | undefined

  // What then() returns is a plain promise: it begins nothing.
  static override get [Symbol.species] (): PromiseConstructor {
    return Promise
  }

  override then<A = T, B = never> (onFulfilled?: ((value: T) => A | PromiseLike<A>) | null, onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    const begin = this.begin
    this.begin = undefined
    begin?.()
    return super.then(onFulfilled, onRejected)
  }
}

/**
 * `promise`, as a promise that runs `begin` on the next turn of the event loop once awaited (so
 * a caller that awaits it and then reads the stream in the same turn begins nothing).
 * `await` calls the then of a promise of a subclass, not of a plain one.
 */
export function beginsWhenAwaited<T> (promise: Promise<T>, begin: () => void): Promise<T> {
  const awaited = new BeginsWhenAwaited<T>((resolve, reject) => { promise.then(resolve, reject) })
  // Settled unread, it must not count as an unhandled rejection; Promise.prototype.then, not
  // the override, so that this handler begins nothing.
  Promise.prototype.then.call(awaited, undefined, () => {})
  awaited.begin = () => { setImmediate(begin) }
  return awaited
}
