/**
 * Token counting on other cores. Worker threads load the same gpt-tokenizer encoding module
 * (by its resolved URL, so they find it wherever the main thread did) with the same repairs
 * (bpe-core.ts), and count batches of texts. A count is a pure function of the text, so where
 * it was made never changes the output.
 *
 * The workers are plain JavaScript given as a string (no build step, same under tsx and in
 * dist/), started on the first large input, holding the process open only while they count,
 * and replaced by counting on the main thread if anything about them fails.
 */
import { availableParallelism } from 'node:os'
import { Worker, isMainThread } from 'node:worker_threads'

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const loading = import(workerData.urls.encoding).then(async (mod) => {
  // Without it (run from TypeScript sources, where a worker cannot load .ts) counts are as exact.
  try { (await import(workerData.urls.fixes)).installFixes(mod) } catch {}
  return mod
})
const AS_TEXT = { disallowedSpecial: new Set() }
parentPort.on('message', async ({ id, text, lengths }) => {
  try {
    const mod = await loading
    const counts = new Int32Array(lengths.length)
    let at = 0
    for (let i = 0; i < lengths.length; i++) {
      const n = lengths[i]
      counts[i] = n === 0 ? 0 : mod.countTokens(text.slice(at, at + n), AS_TEXT)
      at += n
    }
    parentPort.postMessage({ id, counts }, [counts.buffer])
  } catch {
    parentPort.postMessage({ id, counts: null })
  }
})
`

/** What a worker loads: the encoding module, and bpe-core.ts. */
export interface WorkerUrls { encoding: string, fixes: string }

interface Job {
  resolve: (counts: Int32Array | null) => void
}

/** An idle worker ends after this long (its tables are tens of MB); the next batch starts one. */
const IDLE_MS = 10_000

class CountWorker {
  private readonly worker: Worker
  private readonly jobs = new Map<number, Job>()
  private nextId = 0
  private idle: NodeJS.Timeout | undefined
  /** It failed: the pool stops using workers and the main thread counts alone. */
  broken = false
  /** It ended after idling: the pool starts new ones when needed. */
  retired = false

  constructor (urls: WorkerUrls) {
    this.worker = new Worker(WORKER, { eval: true, workerData: { urls } })
    this.worker.on('message', ({ id, counts }: { id: number, counts: Int32Array | null }) => {
      const job = this.jobs.get(id)
      this.jobs.delete(id)
      if (this.jobs.size === 0) this.rest()
      if (counts === null) this.broken = true
      job?.resolve(counts)
    })
    const fail = (): void => {
      if (this.retired) return
      this.broken = true
      for (const job of this.jobs.values()) job.resolve(null)
      this.jobs.clear()
    }
    this.worker.on('error', fail)
    this.worker.on('exit', fail)
    // Idle, it must not keep the process alive; busy, it must (the main thread awaits it).
    // After the listeners: a 'message' listener refs the worker's port again.
    this.rest()
  }

  private rest (): void {
    this.worker.unref()
    this.idle = setTimeout(() => {
      this.retired = true
      void this.worker.terminate()
    }, IDLE_MS)
    this.idle.unref()
  }

  get pending (): number {
    return this.jobs.size
  }

  count (texts: string[]): Promise<Int32Array | null> {
    const lengths = new Int32Array(texts.length)
    for (let i = 0; i < texts.length; i++) lengths[i] = texts[i]!.length
    const id = this.nextId++
    return new Promise((resolve) => {
      if (this.jobs.size === 0) {
        clearTimeout(this.idle)
        this.worker.ref()
      }
      this.jobs.set(id, { resolve })
      this.worker.postMessage({ id, text: texts.join(''), lengths }, [lengths.buffer])
    })
  }
}

export class CountPool {
  private workers: CountWorker[] | undefined

  constructor (private readonly moduleUrls: () => WorkerUrls, private readonly size: number) {}

  /** Whether this process may count on other cores: more than one, and not inside a worker. */
  static usable (): boolean {
    return isMainThread && availableParallelism() > 1
  }

  /**
   * The counts of `texts`, made on the least busy worker; undefined when no worker can. No
   * texts: only starts the workers (they load the encoding while the caller goes on).
   */
  async countMany (texts: string[]): Promise<Int32Array | undefined> {
    const live = this.live()
    if (texts.length === 0 || live.length === 0) return undefined
    const worker = live.reduce((a, b) => (b.pending < a.pending ? b : a))
    return (await worker.count(texts)) ?? undefined
  }

  /** The workers that can count, started (or restarted after idling) here. */
  private live (): CountWorker[] {
    if (this.workers?.some((w) => w.broken) === true) return []
    if (this.workers === undefined || this.workers.every((w) => w.retired)) {
      try {
        const urls = this.moduleUrls()
        this.workers = Array.from({ length: this.size }, () => new CountWorker(urls))
      } catch {
        this.workers = []
      }
    }
    return this.workers.filter((w) => !w.retired)
  }
}
