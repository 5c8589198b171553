/**
 * Worker replacement (server/retire.ts): a worker that asked to be replaced gets no further
 * split and is terminated once its answer is in; its slot is freed when it is gone. The whole
 * path with a real grown worker (4 MB of minified JavaScript through tree-sitter) is in
 * test/hostile/http.test.ts, whose RSS check failed without it.
 */
import t from 'tap'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Piscina } from 'piscina'
import { retireIfGrown, retirements } from '../../server/retire.js'

const worker = (id: number, currentUsage = 0, terminating = false): any => ({ id, currentUsage, terminating, isRunningAbortableTask: false })

t.test('a worker that asked is given no split; only the worker an answer names is terminated; a gone worker frees its slot', async (t) => {
  const r = retirements(2)
  const task: any = { isAbortable: true }
  t.equal(r.balancer(task, [worker(7), worker(8)])?.id, 7, 'the first idle worker')
  Atomics.store(r.slots, 0, 7)
  t.equal(r.balancer(task, [worker(7), worker(8)])?.id, 8, 'not the one that asked')
  t.equal(r.balancer(task, [worker(7), worker(8, 1)]), null, 'none: the split waits for a fresh worker')
  t.equal(r.balancer(task, [worker(7), worker(8, 0, true)]), null, 'nor one being terminated')
  // piscina shows the balancer its ready workers only: one missing from the list may be alive
  t.equal(r.balancer(task, [worker(8)])?.id, 8)
  t.equal(r.balancer(task, [worker(7), worker(8, 1)]), null, 'a worker missing from the balancer\'s list keeps its slot')
  const terminated: number[] = []
  const exits: Array<() => void> = []
  const thread = (threadId: number): { threadId: number, terminate: () => Promise<number> } => ({
    threadId,
    terminate: async () => { terminated.push(threadId); await new Promise<void>((resolve) => exits.push(resolve)); return 1 },
  })
  Atomics.store(r.slots, 1, 8)
  r.afterSplit([thread(7), thread(8)], 7)
  r.afterSplit([thread(7), thread(8)], 7)
  t.same(terminated, [7], 'only the worker the answer names, once')
  r.afterSplit([thread(8), thread(9)], undefined)
  t.same([...r.slots], [7, 8], 'slots held until their workers have exited')
  exits[0]()
  await new Promise((resolve) => setImmediate(resolve))
  t.same([...r.slots], [0, 8], '7 has exited: its slot is free')
  r.afterSplit([thread(9), thread(10)], undefined)
  t.same([...r.slots], [0, 0], '8 ended without being terminated (stopped past its budget): its slot is free once a split is over')
  t.same(terminated, [7], 'and it is not terminated again')
})

t.test('a worker asks only past the limit, and only where there are slots', async (t) => {
  t.equal(retireIfGrown(undefined, 0), undefined, 'no slots (the library, the CLI): never')
  const slots = new Int32Array(new SharedArrayBuffer(8))
  t.equal(retireIfGrown(slots, 1024 * 1024), undefined, 'under the limit: no')
  t.same([...slots], [0, 0])
})

const built = existsSync(fileURLToPath(new URL('../../dist/server/retire.js', import.meta.url)))

t.test('with real piscina workers: every retirement replaces its worker, and no split fails for another\'s', { skip: built ? false : 'dist/ is not built: run npm run build (npm test does)' }, async (t) => {
  const r = retirements(2)
  const pool = new Piscina({
    filename: fileURLToPath(new URL('./fixtures/retiring-worker.mjs', import.meta.url)),
    minThreads: 2, maxThreads: 2, concurrentTasksPerWorker: 1, atomics: 'disabled', workerData: { retire: r.slots }, loadBalancer: r.balancer,
  })
  t.teardown(async () => { await pool.destroy() })
  const run = async (waitMs: number): Promise<number> => {
    const result = await pool.run({ waitMs }) as { thread: number, retire?: number }
    r.afterSplit(pool.threads, result.retire)
    return result.thread
  }
  const threads: number[] = []
  // one after another: each on a fresh worker, far more times than there are slots
  for (let i = 0; i < 8; i++) threads.push(await run(0))
  t.equal(new Set(threads).size, 8, `8 splits on 8 workers (${threads.join(', ')})`)
  // side by side, short and long: none is cut off by the other's retirement
  const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => run(i % 2 === 0 ? 0 : 50)))
  t.same(results.filter((x) => x.status === 'rejected'), [], 'no split failed')
})
