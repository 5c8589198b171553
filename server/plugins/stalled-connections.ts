/**
 * Closes a connection on which nothing has moved for `idleMs` (the split budget plus
 * DOCSPLIT_WEB_IDLE_TIMEOUT_SECONDS) while a request is on it: no request bytes arrived and the
 * client took no answer bytes. Closing it ends the request as a 499, cancels its split and
 * frees its answer.
 *
 * Node's socket timeout (fastify's connectionTimeout) cannot do this: it counts only what the
 * kernel takes from the service, and once an answer fills the send buffer the kernel takes
 * more only after the client has read a third of it (a client reading 120 KB/s with 4 s
 * allowed was cut off mid-answer); and when it expires with a write partly taken it waits the
 * whole time again (net.Socket#_onTimeout), so a client that stopped was cut off after twice
 * the time. So it is off while a request is on the connection (Node arms its keep-alive
 * timeout once the answer is handed over, and the connection timeout when the next request
 * begins). Here what the client takes is watched directly, and, where Linux tells it, what it
 * reads of what the kernel holds (see send-queues.ts): a queue that shrinks by at least
 * MIN_READ_RATE is a client that reads. A trickle under that (a segment now and then) is idle:
 * it would otherwise hold the connection and its answer for as long as it likes.
 */
import type { ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { SendQueueReader, connectionKey } from './send-queues.js'

export interface StalledConnectionsOptions {
  /** How long nothing may move on a connection that carries a request. */
  idleMs: number
  /** Bytes a second a client must read of what the kernel holds for its reading to count (default MIN_READ_RATE). */
  minReadRate?: number
}

/** The slowest reading that counts as reading: 1 KB/s (Apache's mod_reqtimeout asks 500 B/s of a request body). */
export const MIN_READ_RATE = 1000

interface Watch {
  socket: Socket
  /** What had moved when last looked at (see `moved`). */
  mark: string
  /** When `mark` last changed, or the client last read enough of the kernel's send queue. */
  since: number
  /** The kernel's send queue when first looked at since `since` (once nothing else moved for a while), and when. */
  queued: number | undefined
  queuedAt: number
}

/** Nothing else has moved for this part of the allowed time: the kernel's send queue is read. */
const QUEUE_AFTER = 1 / 4

/**
 * What has moved on a socket: bytes received; bytes of writes the kernel took whole
 * (`bytesWritten` counts what is still buffered, `writableLength` takes it off again); and
 * what libuv still holds of the write in progress, which shrinks as the client reads part of it.
 * The service's own writes into a full buffer change none of these.
 */
function moved (socket: Socket): string {
  return `${socket.bytesRead} ${(socket.bytesWritten ?? 0) - socket.writableLength} ${heldByLibuv(socket)}`
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
  const watched = new Map<ServerResponse, Watch>()
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
    let queues: Map<string, number> | undefined | null = null
    for (const [res, watch] of watched) {
      // Answered in full, or gone. (Looked at here: a 'close' listener per answer would pass
      // Node's warning limit of ten on the response.)
      if (res.writableFinished || watch.socket.destroyed) {
        watched.delete(res)
        continue
      }
      const mark = moved(watch.socket)
      if (mark !== watch.mark) {
        watch.mark = mark
        watch.since = now
        watch.queued = undefined
        continue
      }
      if (now - watch.since >= opts.idleMs * QUEUE_AFTER && waitsForKernel(watch.socket)) {
        // A client that reads what the kernel holds is not idle, though the kernel takes
        // nothing more from the service until it has read a third of its buffer. (Not asked
        // of a connection whose split is still running: nothing of it waits.)
        if (queues === null) queues = queueReader.current()
        const { localPort, remotePort } = watch.socket
        const queued = localPort === undefined || remotePort === undefined ? undefined : queues?.get(connectionKey(localPort, remotePort))
        const known = queued !== undefined && queued >= 0 ? queued : undefined
        if (known === undefined || watch.queued === undefined || known > watch.queued) {
          watch.queued = known
          watch.queuedAt = now
        } else if (known < watch.queued && watch.queued - known >= minReadRate * (now - watch.queuedAt) / 1000) {
          watch.since = now
          watch.queued = undefined
        }
      }
      if (now - watch.since >= opts.idleMs) {
        watched.delete(res)
        watch.socket.destroy()
      }
    }
    if (watched.size === 0) stop()
  }
  app.addHook('onRequest', async (request, reply) => {
    const socket = request.raw.socket
    // Injected requests (light-my-request) have no real socket to watch.
    if (!(socket instanceof Socket)) return
    // Node's timer is off while this watch covers the request (see the top of this file).
    socket.setTimeout(0)
    watched.set(reply.raw, { socket, mark: moved(socket), since: performance.now(), queued: undefined, queuedAt: 0 })
    if (timer === undefined) {
      timer = setInterval(look, everyMs)
      timer.unref()
    }
  })
  app.addHook('onClose', async () => { stop() })
}

export default fp(stalledConnections, { name: 'docsplit-stalled-connections', fastify: '5.x' })
