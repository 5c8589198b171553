/**
 * Closes a connection on which nothing has moved for `idleMs` (the split budget plus
 * DOCSPLIT_WEB_IDLE_TIMEOUT_SECONDS) while an answer is due on it: no request bytes arrived and
 * the client took no answer bytes (once answer bytes wait for it, only what it takes counts).
 * Closing it ends the request as a 499, cancels its split and frees its answer.
 *
 * Node's socket timeout (fastify's connectionTimeout) cannot do this: it counts only what the
 * kernel takes from the service, and once an answer fills the send buffer the kernel takes
 * more only after the client has read a third of it (a client reading 120 KB/s with 4 s
 * allowed was cut off mid-answer); and when it expires with a write partly taken it waits the
 * whole time again (net.Socket#_onTimeout), so a client that stopped was cut off after twice
 * the time. So it is off while answers are due on the connection (Node arms its keep-alive
 * timeout once the last is handed over, and the connection timeout when the next request
 * begins). Every answer Node makes is watched, those fastify sends before its hooks too (a path
 * that does not decode): pipelined behind a watched one, they held a connection with no timer
 * at all. Here what the client takes is watched directly, and, where Linux tells it, what it
 * reads of what the kernel holds (see send-queues.ts): a queue that shrinks by at least
 * MIN_READ_RATE is a client that reads. A trickle under that (a segment now and then) is idle:
 * it would otherwise hold the connection and its answer for as long as it likes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { SendQueueReader, connectionKey, type SendQueues } from './send-queues.js'

export interface StalledConnectionsOptions {
  /** How long nothing may move on a connection that carries a request. */
  idleMs: number
  /** Bytes a second a client must read of what the kernel holds for its reading to count (default MIN_READ_RATE). */
  minReadRate?: number
}

/** The slowest reading that counts as reading: 1 KB/s (Apache's mod_reqtimeout asks 500 B/s of a request body). */
export const MIN_READ_RATE = 1000

/** What the send-queue rule keeps of a connection. */
export interface QueueWatch {
  /** When something last moved on the connection, or the client last read enough of its send queue. */
  since: number
  /** The send queue at the first reading taken since `since`, and when that reading was taken. */
  queued: number | undefined
  queuedAt: number
}

interface Watch extends QueueWatch {
  /** The answers due on the connection (pipelined requests queue theirs): watched until all are handed over. */
  answers: Set<ServerResponse>
  /** What had moved when last looked at (see `moved`). */
  mark: string
}

/** Nothing else has moved for this part of the allowed time: the kernel's send queue is read. */
const QUEUE_AFTER = 1 / 4

/**
 * Whether a reading of the kernel's send queue (`queued` bytes, read at `at`) shows the client
 * reading at least `rate` bytes a second since the first reading after `watch.since`; if so,
 * `since` moves to the reading. Readings taken before `since` say nothing of what followed;
 * a queue that grew (the kernel took more) starts the count again.
 */
export function readsEnough (watch: QueueWatch, queued: number | undefined, at: number, rate: number): boolean {
  if (at < watch.since) return false
  if (queued === undefined || watch.queued === undefined || queued > watch.queued) {
    watch.queued = queued
    watch.queuedAt = at
    return false
  }
  if (queued === watch.queued || watch.queued - queued < rate * (at - watch.queuedAt) / 1000) return false
  watch.since = at
  watch.queued = undefined
  return true
}

/**
 * What has moved on a socket: bytes of writes the kernel took whole (`bytesWritten` counts
 * what is still buffered, `writableLength` takes it off again); what libuv still holds of the
 * write in progress, which shrinks as the client reads part of it; and bytes received, unless
 * answer bytes wait for the kernel: then only the client's reading moves (a client that sent a
 * blank line every few seconds and read nothing held a 35 MB answer for good). The service's
 * own writes into a full buffer change none of these.
 */
function moved (socket: Socket): string {
  const taken = `${(socket.bytesWritten ?? 0) - socket.writableLength} ${heldByLibuv(socket)}`
  return waitsForKernel(socket) ? taken : `${socket.bytesRead} ${taken}`
}

/** What libuv holds of the write in progress (0 when it holds none or does not say). */
function heldByLibuv (socket: Socket): number {
  const queued = (socket as unknown as { _handle?: { writeQueueSize?: unknown } | null })._handle?.writeQueueSize
  return typeof queued === 'number' ? queued : 0
}

/** Whether the service has answer bytes that the kernel has not taken yet. */
function waitsForKernel (socket: Socket): boolean {
  return socket.writableLength > 0 || heldByLibuv(socket) > 0
}

async function stalledConnections (app: FastifyInstance, opts: StalledConnectionsOptions): Promise<void> {
  const watched = new Map<Socket, Watch>()
  const minReadRate = opts.minReadRate ?? MIN_READ_RATE
  // Looked at often enough to close within a twentieth of the time after it (at most a second).
  const everyMs = Math.min(1000, Math.max(50, Math.round(opts.idleMs / 20)))
  let timer: NodeJS.Timeout | undefined
  const stop = (): void => {
    clearInterval(timer)
    timer = undefined
  }
  const queueReader = new SendQueueReader()
  const look = (): void => {
    const now = performance.now()
    /** The send queues, asked once a look when some connection needs them (null: not yet). */
    let reading: SendQueues | undefined | null = null
    for (const [socket, watch] of watched) {
      // Answers handed over in full. (Looked at here: a 'close' listener per answer would pass
      // Node's warning limit of ten on the response.)
      for (const res of watch.answers) if (res.writableFinished) watch.answers.delete(res)
      if (watch.answers.size === 0 || socket.destroyed) {
        watched.delete(socket)
        continue
      }
      const mark = moved(socket)
      if (mark !== watch.mark) {
        watch.mark = mark
        watch.since = now
        watch.queued = undefined
        continue
      }
      if (now - watch.since >= opts.idleMs * QUEUE_AFTER && waitsForKernel(socket)) {
        // A client that reads what the kernel holds is not idle, though the kernel takes
        // nothing more from the service until it has read a third of its buffer. (Not asked
        // of a connection whose split is still running: nothing of it waits.)
        if (reading === null) reading = queueReader.current()
        const { localPort, remotePort } = socket
        const queued = reading === undefined || localPort === undefined || remotePort === undefined ? undefined : reading.queues.get(connectionKey(localPort, remotePort))
        if (reading !== undefined) readsEnough(watch, queued !== undefined && queued >= 0 ? queued : undefined, reading.at, minReadRate)
      }
      if (now - watch.since >= opts.idleMs) {
        watched.delete(socket)
        socket.destroy()
      }
    }
    if (watched.size === 0) stop()
  }
  // Before fastify's own listener, so every answer is watched: those it sends before its hooks
  // run too. (Injected requests, light-my-request's, never reach the server.)
  app.server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket
    if (!(socket instanceof Socket)) return
    // Node's timer is off while this watch covers the connection (see the top of this file).
    socket.setTimeout(0)
    const watch = watched.get(socket)
    if (watch !== undefined) watch.answers.add(response)
    else watched.set(socket, { answers: new Set([response]), mark: moved(socket), since: performance.now(), queued: undefined, queuedAt: 0 })
    if (timer === undefined) {
      timer = setInterval(look, everyMs)
      timer.unref()
    }
  })
  app.addHook('onClose', async () => { stop() })
}

export default fp(stalledConnections, { name: 'docsplit-stalled-connections', fastify: '5.x' })
