/**
 * Worker replacement (server/retire.ts): a worker that asked to be replaced gets no further
 * split and is terminated once its answer is in; its slot is freed when it is gone. The whole
 * path with a real grown worker (4 MB of minified JavaScript through tree-sitter) is in
 * test/hostile/http.test.ts, whose RSS check failed without it.
 */
import t from 'tap'
import { retireIfGrown, retirements } from '../../server/retire.js'

const worker = (id: number, currentUsage = 0, terminating = false): any => ({ id, currentUsage, terminating, isRunningAbortableTask: false })

t.test('a worker that asked is given no split, is terminated, and frees its slot when gone', async (t) => {
  const r = retirements(2)
  const task: any = { isAbortable: true }
  t.equal(r.balancer(task, [worker(7), worker(8)])?.id, 7, 'the first idle worker')
  Atomics.store(r.slots, 0, 7)
  t.equal(r.balancer(task, [worker(7), worker(8)])?.id, 8, 'not the one that asked')
  t.equal(r.balancer(task, [worker(7), worker(8, 1)]), null, 'none: the split waits for a fresh worker')
  t.equal(r.balancer(task, [worker(8, 0, true)]), null, 'nor one being terminated')
  const terminated: number[] = []
  const thread = (threadId: number): { threadId: number, terminate: () => Promise<number> } => ({ threadId, terminate: async () => { terminated.push(threadId); return 0 } })
  r.sweep([thread(7), thread(8)])
  t.same(terminated, [7], 'only the worker that asked is terminated')
  r.gone(7)
  t.same([...r.slots], [0, 0], 'its slot is free')
  t.equal(r.balancer(task, [worker(7), worker(8)])?.id, 7)
})

t.test('a worker asks only past the limit, and only where there are slots', async (t) => {
  t.equal(retireIfGrown(undefined, 0), false, 'no slots (the library, the CLI): never')
  const slots = new Int32Array(new SharedArrayBuffer(8))
  t.equal(retireIfGrown(slots, 1024 * 1024), false, 'under the limit: no')
  t.same([...slots], [0, 0])
})
