/**
 * One log line per request with exactly: method, path (no query string), status and duration.
 * The status is the one sent, except for a client gone before the answer (499) and a stream
 * that failed after its 200 (the error's status).
 * fastify's own request logging is off (it logs the client address and more), and the line is
 * written on the root logger so no request id or header rides along.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'

const MAX_PATH = 256

/**
 * Answers written straight to a socket by the client error handler (408 when a body arrives too
 * slowly): the request's reply never finishes, so its line takes the status from here, not 499.
 */
const socketAnswers = new WeakMap<object, number>()

/** Records the status written on `socket` outside fastify's reply. */
export function noteSocketAnswer (socket: object, status: number): void {
  socketAnswers.set(socket, status)
}

/**
 * NDJSON answers that went out as 200 and ended with an `{"error": ...}` line (a timeout deep in
 * a document): logged with that error's status, so a log of statuses shows the failure.
 */
const streamFailures = new WeakMap<object, number>()

/** Records that the answer on `response` (a reply's raw response) failed mid-stream with `status`. */
export function noteStreamFailure (response: object, status: number): void {
  streamFailures.set(response, status)
}

/**
 * The path without query string or fragment, cut to a fixed length. An absolute-form target
 * (`GET http://user:pass@host/path`) keeps only its path: the rest is client text.
 */
export function logPath (url: string): string {
  let path = url.split(/[?#]/, 1)[0] ?? ''
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname
    } catch {
      path = '(invalid)'
    }
  }
  return path.length > MAX_PATH ? `${path.slice(0, MAX_PATH)}...` : path
}

/** The route's path, or the request path when it matched a route; an unmatched path is not logged (it is client text). */
function routePath (request: FastifyRequest): string {
  return request.routeOptions.url === undefined ? '(no route)' : logPath(request.raw.url ?? '')
}

/** Writes the one line of a request on the root logger `log` (no request id rides along). */
export function requestLine (log: FastifyInstance['log'], method: string, path: string, status: number, ms: number): void {
  log.info({ method, path, status, duration_ms: Math.round(ms * 10) / 10 }, 'request')
}

async function accessLogPlugin (app: FastifyInstance): Promise<void> {
  const line = (method: string, path: string, status: number, ms: number): void => { requestLine(app.log, method, path, status, ms) }
  app.addHook('onRequest', async (request, reply) => {
    // A client that goes away before the answer gets no onResponse: log it as 499 (nginx's
    // "client closed request"), unless an answer was written on its socket directly (408).
    const start = performance.now()
    const socket = request.raw.socket
    reply.raw.once('close', () => {
      if (reply.raw.writableFinished) return
      const written = socket === null || socket === undefined ? undefined : socketAnswers.get(socket)
      line(request.method, routePath(request), written ?? 499, performance.now() - start)
    })
  })
  app.addHook('onResponse', async (request, reply) => {
    line(request.method, routePath(request), streamFailures.get(reply.raw) ?? reply.statusCode, reply.elapsedTime)
  })
}

export default fp(accessLogPlugin, { name: 'docsplit-access-log', fastify: '5.x' })
