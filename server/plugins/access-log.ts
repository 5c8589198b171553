/**
 * One log line per request with exactly: method, path (no query string), status and duration.
 * The status is the one sent, except for a client gone before the answer (499) and a stream
 * that failed after its 200 (the error's status).
 * fastify's own request logging is off (it logs the client address and more), and the line is
 * written on the root logger so no request id or header rides along.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'

const MAX_PATH = 256

/** Method and path of a line for an answer to no request that Node could read (a malformed one). */
const UNKNOWN = '(unknown)'

/**
 * Answers written straight to a socket by the client error handler (408 when a body arrives too
 * slowly, 400 for a bad chunk): the request's reply never finishes, so its line takes the
 * status from here, not 499.
 */
const socketAnswers = new WeakMap<object, number>()

/** Per connection: the response of its latest request, from the moment Node hands it over. */
const latest = new WeakMap<object, ServerResponse>()

/** Per connection: since when it waits for a request (accepted, or its last line written). */
const waitingSince = new WeakMap<object, number>()

/**
 * Records the status the client error handler wrote on `socket`, outside fastify. A request
 * under way on it is logged with that status when it closes (its client having left mid-request,
 * as 499). With none (the request was never read: a malformed request line or header, headers
 * too large or too slow), the line is written here, its method and path unknown, timed from
 * when the connection began to wait for it. Without `log` (a test), nothing is written.
 */
export function noteSocketAnswer (log: FastifyBaseLogger | undefined, socket: object, status: number, clientLeft = false): void {
  const response = latest.get(socket)
  if (response !== undefined && !response.writableEnded) {
    if (!clientLeft) socketAnswers.set(socket, status)
    return
  }
  if (log !== undefined) socketRequestLine(log, socket, UNKNOWN, UNKNOWN, status)
}

/**
 * Writes the line of a request answered on its socket outside fastify (a CONNECT, which Node
 * hands over without a response), timed from when the connection began to wait for it.
 */
export function socketRequestLine (log: FastifyBaseLogger, socket: object, method: string, path: string, status: number): void {
  const since = waitingSince.get(socket)
  requestLine(log, method, path, status, since === undefined ? 0 : performance.now() - since)
}

/**
 * Resolves once the answer to the latest request read on `socket` is written (or its connection
 * gone): at once when none is due. Answers to pipelined requests are written in order.
 */
export function answered (socket: object): Promise<void> {
  const response = latest.get(socket)
  if (response === undefined || response.writableFinished || response.destroyed) return Promise.resolve()
  return new Promise((resolve) => {
    response.once('finish', resolve)
    response.once('close', resolve)
  })
}

/** Records the path of a known route answered 405 (it has no route for this method). */
const routeOf405 = new WeakMap<FastifyRequest, string>()

/** Records that `request` was for `path`, a route that takes other methods: logged as it is. */
export function noteRoutePath (request: FastifyRequest, path: string): void {
  routeOf405.set(request, path)
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

/**
 * The request path when it matched a route (or a route answered 405); an unmatched path is not
 * logged (it is client text).
 */
function routePath (request: FastifyRequest): string {
  if (request.routeOptions.url !== undefined) return logPath(request.raw.url ?? '')
  return routeOf405.get(request) ?? '(no route)'
}

/** Writes the one line of a request on the root logger `log` (no request id rides along). */
export function requestLine (log: FastifyBaseLogger, method: string, path: string, status: number, ms: number): void {
  log.info({ method, path, status, duration_ms: Math.round(ms * 10) / 10 }, 'request')
}

async function accessLogPlugin (app: FastifyInstance): Promise<void> {
  const line = (request: FastifyRequest, status: number, ms: number): void => {
    requestLine(app.log, request.method, routePath(request), status, ms)
    const socket = request.raw.socket
    if (socket !== null && socket !== undefined) waitingSince.set(socket, performance.now())
  }
  // Answers that Node's parser refuses come with no request: what they are logged with.
  app.server.on('connection', (socket: object) => { waitingSince.set(socket, performance.now()) })
  // Before fastify's own listener: a request refused mid-body (a bad chunk) in the same packet
  // as its headers reaches the client error handler before fastify's first hook has run.
  app.server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => { latest.set(request.socket, response) })
  app.addHook('onRequest', async (request, reply) => {
    // A client that goes away before the answer gets no onResponse: log it as 499 (nginx's
    // "client closed request"), unless an answer was written on its socket directly (408).
    const start = performance.now()
    const socket = request.raw.socket
    reply.raw.once('close', () => {
      if (reply.raw.writableFinished) return
      const written = socket === null || socket === undefined ? undefined : socketAnswers.get(socket)
      line(request, written ?? 499, performance.now() - start)
    })
  })
  app.addHook('onResponse', async (request, reply) => {
    line(request, streamFailures.get(reply.raw) ?? reply.statusCode, reply.elapsedTime)
  })
}

export default fp(accessLogPlugin, { name: 'docsplit-access-log', fastify: '5.x' })
