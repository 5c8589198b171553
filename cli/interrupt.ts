/**
 * Ctrl-C (SIGINT) and SIGTERM while chunks go out as JSON lines: the output stops after a whole
 * line, then the process ends by the signal, as it would have at once. Killed at once, it cut
 * its last line short (9 of 10 runs of `timeout 60 docsplit split big.log --jsonl | jq`): a write
 * to a pipe goes out in pieces the size of the pipe's free room.
 */
import { constants } from 'node:os'
import { setImmediate } from 'node:timers/promises'

/** How long the output may take to reach a line's end before the signal ends the process anyway (a reader that stopped reading). */
const STOP_WITHIN_MS = 2000

export interface Interrupt {
  /** At the end of the split: waits for the signal's end if one came, else stops listening. */
  settle: () => Promise<void>
}

/** Listens for SIGINT and SIGTERM; on the first, runs `stop` (which ends the output at a line's end), then ends by the signal. A second ends at once. */
export function onInterrupt (stop: () => Promise<void>): Interrupt {
  let ending: Promise<never> | undefined
  const remove = (): void => {
    process.off('SIGINT', handler)
    process.off('SIGTERM', handler)
  }
  const raise = (signal: NodeJS.Signals): void => {
    remove()
    process.kill(process.pid, signal)
    // Should the signal not end it (a listener someone else added), the shell's code for it.
    setTimeout(() => { process.exit(128 + constants.signals[signal]) }, 1000)
  }
  function handler (signal: NodeJS.Signals): void {
    if (ending !== undefined) return raise(signal)
    ending = new Promise<never>(() => {
      const deadline = setTimeout(() => { raise(signal) }, STOP_WITHIN_MS)
      void stop().catch(() => {}).finally(() => {
        clearTimeout(deadline)
        raise(signal)
      })
    })
  }
  process.on('SIGINT', handler)
  process.on('SIGTERM', handler)
  return {
    async settle () {
      // A signal that came in the split's last stretch may still wait for its turn of the loop.
      await setImmediate()
      if (ending !== undefined) return await ending
      remove()
    },
  }
}
