/**
 * Replacing a worker that has grown. Memory outside the JavaScript heap never shrinks in a
 * worker: tree-sitter's WebAssembly memory stays at the size of the largest code parse (4 MB
 * of minified JavaScript left a worker 290-370 MB larger for good), and
 * DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB limits the JavaScript heap only. A worker that ends a split
 * with more than RETIRE_EXTERNAL_MB of such memory writes its thread id into a shared slot
 * before it answers; the load balancer gives it no further split, and the pool terminates it
 * once the answer is in (piscina starts a fresh one). The slot is shared memory because piscina
 * hands the next split out before the answer of the last one reaches us.
 */
import { threadId } from 'node:worker_threads'
import type { Piscina } from 'piscina'

type LoadBalancer = NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>

/**
 * External memory (WebAssembly, buffers) past which a worker is replaced after its split. A
 * worker with all 17 grammars loaded holds about 63 MB; a 1.7 MB bundle took it to 122 MB and
 * 3.8 MB of minified JavaScript to 176 MB, which 192 let it keep (+262 MB RSS for good).
 */
export const RETIRE_EXTERNAL_MB = 128

/**
 * Worker side: ask to be replaced when this thread holds too much memory outside its heap.
 * Returns the thread id to put in the answer, or undefined.
 */
export function retireIfGrown (slots: Int32Array | undefined, limitMb = RETIRE_EXTERNAL_MB): number | undefined {
  if (slots === undefined || process.memoryUsage().external < limitMb * 1024 * 1024) return undefined
  for (let i = 0; i < slots.length; i++) {
    const held = Atomics.compareExchange(slots, i, 0, threadId)
    if (held === 0 || held === threadId) return threadId
  }
  return undefined
}

interface Thread { threadId: number, terminate: () => Promise<number> }

export interface Retirements {
  /** One slot per worker, shared with the workers (workerData). */
  slots: Int32Array
  /** Gives a split to an idle worker that has not asked to be replaced. */
  balancer: LoadBalancer
  /**
   * After each split, with all the pool's threads: frees the slots of workers that are gone
   * (stopped past their budget, or ended otherwise) and, when the answer names its worker (`id`),
   * terminates it, freeing its slot once it has exited. Never another worker that has asked but
   * whose answer is still on its way.
   */
  afterSplit: (threads: readonly Thread[], id: number | undefined) => void
}

export function retirements (workers: number): Retirements {
  const slots = new Int32Array(new SharedArrayBuffer(4 * workers))
  const asked = (id: number): boolean => {
    for (let i = 0; i < slots.length; i++) if (Atomics.load(slots, i) === id) return true
    return false
  }
  const terminating = new Set<number>()
  const free = (id: number): void => {
    for (let i = 0; i < slots.length; i++) Atomics.compareExchange(slots, i, id, 0)
    terminating.delete(id)
  }
  return {
    slots,
    // The balancer is shown only the workers piscina counts as ready: one still starting is
    // missing from its list, so the list cannot tell that a worker is gone (freeing the slot
    // of one that was only starting gave it a split, and it was terminated in the middle).
    balancer: (_task, workers) => {
      // A thread that has exited reads -1: never give it a split.
      for (const w of workers) if (w.currentUsage === 0 && !w.terminating && w.id > 0 && !asked(w.id)) return w
      return null
    },
    afterSplit: (threads, id) => {
      // pool.threads holds every worker, starting or ready, until it has exited.
      for (let i = 0; i < slots.length; i++) {
        const held = Atomics.load(slots, i)
        if (held !== 0 && !terminating.has(held) && !threads.some((t) => t.threadId === held)) free(held)
      }
      if (id === undefined || terminating.has(id)) return
      const thread = threads.find((t) => t.threadId === id)
      if (thread === undefined) return
      terminating.add(id)
      thread.terminate().catch(() => {}).finally(() => { free(id) })
    },
  }
}
