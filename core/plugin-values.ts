/** What a plugin returns, checked where the engine and the conformance kit take it. */

/** A count: a whole number of at least 0. */
export const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0

/** A promise (or any thenable), where a plugin returned one. */
export const isPromise = (value: unknown): value is Promise<unknown> => typeof (value as { then?: unknown } | null)?.then === 'function'

/** A promise a plugin returned where none belongs: its rejection is not left unhandled (it would end the process). */
export function silence (value: unknown): void {
  if (isPromise(value)) value.then(undefined, () => {})
}

/** A value's type in words, for a message: `an object`, `a function`, `null`. */
export const typeInWords = (value: unknown): string => value === null ? 'null' : `${/^[aeiou]/.test(typeof value) ? 'an' : 'a'} ${typeof value}`
