/**
 * The plugin step a split awaits (`the ini parser's create()`), in shared memory: the worker
 * writes it as it changes, and the pool reads it when the split runs past its budget, to say
 * what the split was waiting for rather than to ask for a smaller document. The worker may be
 * stopped at any moment, so it is plain shared memory, not a message: length first, then the
 * UTF-16 code units.
 */

/** Code units kept of a step's name. */
const STEP_UNITS = 200

/** Room for one step's name. */
export function stepSlot (): Uint16Array {
  return new Uint16Array(new SharedArrayBuffer(2 * (1 + STEP_UNITS)))
}

/** Writes `step` (undefined: none pending) into `slot`. */
export function writeStep (slot: Uint16Array, step: string | undefined): void {
  const length = Math.min(step?.length ?? 0, STEP_UNITS)
  Atomics.store(slot, 0, 0)
  for (let i = 0; i < length; i++) slot[1 + i] = step!.charCodeAt(i)
  Atomics.store(slot, 0, length)
}

/** The step in `slot`, or undefined when none is pending. */
export function readStep (slot: Uint16Array): string | undefined {
  const length = Math.min(Atomics.load(slot, 0), STEP_UNITS)
  return length === 0 ? undefined : String.fromCharCode(...slot.subarray(1, 1 + length))
}
