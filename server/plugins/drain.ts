/**
 * Shutdown without cutting anyone off: once draining (SIGTERM, or app.close()), new requests get
 * 503 with `Connection: close`, while every request already received runs to its last byte: an
 * upload still arriving, its split, and an answer still being read (a JSON answer can be twenty
 * times its document). Only past the deadline are the connections left closed by force.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Socket } from 'node:net'
import { DocsplitError } from '../../core/errors.js'
import type { RetryHint } from '../problem.js'

export interface DrainOptions {
  /** How long the requests in flight may take to finish once draining starts. */
  graceMs: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Refuse new requests from now on (503), while in-flight ones finish. */
    startDraining: () => void
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function drain (app: FastifyInstance, opts: DrainOptions): Promise<void> {
  let draining = false
  /** Requests received and not yet answered in full (or given up by their client). */
  let inFlight = 0
  /**
   * The requests of each connection not yet answered in full: the connection's one 'close'
   * listener ends them all (one listener per request would pass Node's warning limit of ten on a
   * pipelined connection).
   */
  const pending = new WeakMap<Socket, Set<() => void>>()
  const endAll = (socket: Socket): void => {
    const finishes = pending.get(socket)
    pending.delete(socket)
    for (const finish of finishes ?? []) finish()
  }
  const watch = (socket: Socket): Set<() => void> => {
    const finishes = new Set<() => void>()
    pending.set(socket, finishes)
    socket.once('close', () => { endAll(socket) })
    return finishes
  }
  const startDraining = (): void => {
    draining = true
    app.server.closeIdleConnections()
  }
  app.decorate('startDraining', startDraining)
  app.addHook('onRequest', async (request, reply) => {
    if (draining) {
      reply.header('connection', 'close')
      throw Object.assign(new DocsplitError('DOCSPLIT_OVERLOADED', 'the service is shutting down; retry on another instance'), { retryAfterSeconds: 1 } satisfies RetryHint)
    }
    const socket = request.raw.socket as Socket | null
    // Gone already: no answer will be written, nor waited for.
    if (socket === null || socket.destroyed) return
    inFlight++
    // The answer's 'close' comes once it is written in full or the connection is gone; but an
    // answer queued behind another on a pipelined connection has no socket yet, and gets no
    // 'close' when the connection goes: the connection's own 'close' ends it then.
    const finishes = pending.get(socket) ?? watch(socket)
    const finish = (): void => {
      if (!finishes.delete(finish)) return
      inFlight--
      reply.raw.off('close', finish)
    }
    finishes.add(finish)
    reply.raw.once('close', finish)
  })
  app.addHook('onSend', async (_request, reply) => {
    if (draining) reply.header('connection', 'close')
  })
  app.addHook('preClose', async () => {
    startDraining()
    const deadline = Date.now() + opts.graceMs
    while (inFlight > 0 && Date.now() < deadline) {
      // A connection whose answer went out with Connection: close ends here, not at the client.
      app.server.closeIdleConnections()
      await sleep(50)
    }
    // What is left (a client that never finished, a half-open connection) is closed.
    app.server.closeAllConnections()
  })
}

export default fp(drain, { name: 'docsplit-drain' })
