/**
 * The stalled-connections rule against clients that read steadily but slowly, through real
 * sockets: once an answer fills the kernel's send buffer, the kernel takes nothing more from
 * the service until the client has read a third of it, for longer than the idle time; such a
 * client gets its whole answer (Linux: its send queue shrinks), while one that reads less than
 * the minimum rate counts as idle.
 */
import { existsSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import Fastify from 'fastify'
import t, { type Test } from 'tap'
import stalledConnections, { readsEnough } from '../../server/plugins/stalled-connections.js'

const IDLE_MS = 1000
const ANSWER = Buffer.alloc(6_000_000, 'a')

/** A service with the rule and Node's socket timeout at the idle time, as server/app.ts sets them. */
async function answering (minReadRate?: number, keepAliveTimeout?: number): Promise<{ port: number, closedAt: () => number | undefined, close: () => Promise<void> }> {
  const app = Fastify({ connectionTimeout: IDLE_MS, ...(keepAliveTimeout !== undefined ? { keepAliveTimeout } : {}) })
  let closedAt: number | undefined
  app.server.on('connection', (socket: Socket) => { socket.on('close', () => { closedAt = performance.now() }) })
  await app.register(stalledConnections, { idleMs: IDLE_MS, ...(minReadRate !== undefined ? { minReadRate } : {}) })
  app.get('/answer', async (_request, reply) => reply.type('application/octet-stream').send(ANSWER))
  app.get('/short', async () => 'short')
  // Answered before any route or hook runs, as fastify answers a path that does not decode.
  app.server.prependListener('request', (request, response) => {
    if (request.url === '/early') response.end('early')
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  return { port: (app.server.address() as { port: number }).port, closedAt: () => closedAt, close: async () => { await app.close() } }
}

/**
 * Reads the answer at `bytesPerSecond` until it is whole, the connection closes (and the
 * kernel's buffers, which a closed connection still delivers, are read) or `stop()`: the bytes
 * of its body read, when the first came, and how long it took.
 */
async function readAt (port: number, bytesPerSecond: number, stop = (): boolean => false): Promise<{ body: number, first: number, seconds: number }> {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  socket.write('GET /answer HTTP/1.1\r\nHost: x\r\n\r\n')
  await new Promise((resolve) => socket.once('readable', resolve))
  const first = performance.now()
  let head = -1
  let got = 0
  const parts: Buffer[] = []
  let closed = false
  socket.on('close', () => { closed = true })
  const tickMs = 50
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      for (let want = Math.round(bytesPerSecond * tickMs / 1000); want > 0;) {
        const data = socket.read(Math.min(want, socket.readableLength)) as Buffer | null
        if (data === null) break
        want -= data.length
        got += data.length
        if (head === -1) {
          parts.push(data)
          const start = Buffer.concat(parts).indexOf('\r\n\r\n')
          if (start !== -1) head = start + 4
        }
      }
      if ((closed && socket.readableLength === 0) || (head !== -1 && got - head >= ANSWER.length) || stop()) {
        clearInterval(timer)
        resolve()
      }
    }, tickMs)
  })
  socket.destroy()
  return { body: head === -1 ? 0 : got - head, first, seconds: (performance.now() - first) / 1000 }
}

const linux = existsSync('/proc/self/net/tcp') ? false : 'no /proc/self/net/tcp (not Linux): only what the kernel takes is seen'

t.test('a client reading 400 KB/s gets the whole answer though the kernel takes nothing for longer than twice the idle time', { skip: linux }, async (t) => {
  const service = await answering()
  t.teardown(service.close)
  // A third of a 4 MB send buffer takes over 3 s at this rate: Node's timer (twice the idle
  // time of the kernel taking nothing) cut such a client off mid-answer.
  const { body, seconds } = await readAt(service.port, 400_000)
  t.equal(body, ANSWER.length, `every byte arrived, in ${seconds.toFixed(1)} s`)
})

t.test('a client that reads less than the minimum rate is idle: cut off after about the idle time', { skip: linux }, async (t) => {
  // The same reader, against a minimum rate above its own.
  const service = await answering(4_000_000)
  t.teardown(service.close)
  const { body, first } = await readAt(service.port, 400_000, () => service.closedAt() !== undefined)
  t.ok(body < ANSWER.length, `cut off at ${body} of ${ANSWER.length} bytes`)
  const seconds = (service.closedAt()! - first) / 1000
  t.ok(seconds < 5 * IDLE_MS / 1000, `closed by the service ${seconds.toFixed(1)} s after the answer began, not once it was whole (about 15 s at this rate)`)
})

t.test('between requests, the keep-alive timeout closes an idle connection again', async (t) => {
  // The rule turns Node's socket timeout off while a request is on the connection; Node arms
  // its keep-alive timeout once the answer is handed over.
  const service = await answering(undefined, 300)
  t.teardown(service.close)
  const socket = connect(service.port, '127.0.0.1')
  socket.on('error', () => {})
  socket.write('GET /short HTTP/1.1\r\nHost: x\r\n\r\n')
  const answered = await new Promise<number>((resolve) => socket.once('data', () => { resolve(performance.now()) }))
  await new Promise((resolve) => socket.once('close', resolve))
  const seconds = (performance.now() - answered) / 1000
  t.ok(seconds < 5, `closed ${seconds.toFixed(1)} s after the answer (keep-alive timeout 0.3 s, and about a second more)`)
})

t.test('the send-queue rule: a queue must shrink by the minimum rate since its first reading; older readings say nothing', async (t) => {
  const watch = { since: 0, queued: undefined as number | undefined, queuedAt: 0 }
  t.notOk(readsEnough(watch, 100_000, 10, 1000), 'the first reading is the baseline')
  t.notOk(readsEnough(watch, 99_500, 1010, 1000), '500 B in a second: under 1 KB/s')
  t.notOk(readsEnough(watch, 98_100, 2010, 1000), '1,900 B in two seconds: still under, counted from the baseline')
  t.ok(readsEnough(watch, 97_000, 3010, 1000), '3,000 B in three seconds')
  t.equal(watch.since, 3010, 'counted from that reading')
  t.notOk(readsEnough(watch, 10, 3000, 1000), 'a reading taken before then says nothing')
  t.equal(watch.queued, undefined, 'and sets no baseline')
  t.notOk(readsEnough(watch, 50_000, 4000, 1000))
  t.notOk(readsEnough(watch, 60_000, 5000, 1000), 'a queue that grew (the kernel took more) starts again')
  t.equal(watch.queued, 60_000)
  t.ok(readsEnough(watch, 58_000, 6000, 1000))
})

/** A client that never reads; closed at the test's end. */
function silentClient (t: Test, port: number): Socket {
  const socket = connect(port, '127.0.0.1')
  socket.on('error', () => {})
  socket.pause()
  t.teardown(() => { socket.destroy() })
  return socket
}

/** Waits up to `ms` for the service to close its connection: how long after `start` it did (Infinity: it did not). */
async function closedAfter (service: { closedAt: () => number | undefined }, start: number, ms: number): Promise<number> {
  while (service.closedAt() === undefined && performance.now() - start < ms) await new Promise((resolve) => setTimeout(resolve, 50))
  const closed = service.closedAt()
  return closed === undefined ? Infinity : closed - start
}

t.test('blank lines from a client that reads nothing do not keep its answer', async (t) => {
  const service = await answering()
  t.teardown(service.close)
  const socket = silentClient(t, service.port)
  socket.write('GET /answer HTTP/1.1\r\nHost: x\r\n\r\n')
  const start = performance.now()
  // HTTP allows blank lines before a request: they start none, so no request timeout runs.
  const blank = setInterval(() => { if (!socket.destroyed) socket.write('\r\n') }, 200)
  t.teardown(() => { clearInterval(blank) })
  const ms = await closedAfter(service, start, 20_000)
  t.ok(ms < 5 * IDLE_MS, `closed by the service ${(ms / 1000).toFixed(1)} s after the request`)
})

t.test('answers sent before fastify\'s hooks, pipelined behind a watched one, are watched too', async (t) => {
  const service = await answering()
  t.teardown(service.close)
  const socket = silentClient(t, service.port)
  const start = performance.now()
  // Written while the service still reads them: once the client's and the kernel's buffers
  // are full, an unwatched answer waits behind the watched one, and Node arms no timer.
  for (let i = 0; i < 20 && !socket.destroyed; i++) {
    socket.write('GET /short HTTP/1.1\r\nHost: x\r\n\r\n' + 'GET /early HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(2000))
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const ms = await closedAfter(service, start, 30_000)
  t.ok(ms < 15_000, `closed by the service ${(ms / 1000).toFixed(1)} s after the client stopped reading`)
})
