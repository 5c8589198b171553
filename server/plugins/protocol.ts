/**
 * Requests that Node's HTTP server would refuse on its own, with a bare answer that no hook
 * sees and no log line records: an `Expect` other than `100-continue` (417) and an HTTP/1.1
 * request without `Host` (400). Both are let through to fastify (app.ts turns off Node's
 * `requireHostHeader`) and refused here instead, as problem+json, logged like any request,
 * after the rest of their body is read and dropped (the error handler). So are a second Host
 * header and an invalid one, which Node lets through (RFC 9112 3.2 asks for a 400). A CONNECT,
 * whose socket Node would destroy unanswered, is answered 404 and logged here.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { DocsplitError } from '../../core/errors.js'
import { toProblem } from '../problem.js'
import { answered, socketRequestLine } from './access-log.js'
import { rawProblemResponse } from './problem.js'

/**
 * A Host value (RFC 3986 `host [":" port]`), loosely: a reg-name or IPv4 address (letters,
 * digits and the characters a name may hold), or an IP literal in brackets; empty is allowed.
 */
const HOST = /^(?:\[[\w:.%~-]+\]|[\w.~%!$&'()*+,;=-]*)(?::\d*)?$/

async function protocol (app: FastifyInstance): Promise<void> {
  /** Requests whose Expect Node does not meet (it decides: 100-continue in any case, HTTP/1.1). */
  const unmet = new WeakSet<IncomingMessage>()
  // Node emits this instead of 'request' (and answers a bare 417 when nobody listens).
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    unmet.add(request)
    app.server.emit('request', request, response)
  })
  // Node hands a CONNECT to 'connect' listeners, with its socket and no response, and with none
  // destroys the socket unanswered. The service is no proxy: a 404 as for any target it has no
  // route for, logged as a request, and the connection closes (what follows would be a tunnel).
  app.server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => {})
    // Requests pipelined before it get their answers first.
    void answered(socket).then(() => {
      const problem = toProblem(new DocsplitError('DOCSPLIT_NOT_FOUND', 'CONNECT is not served: the service is no proxy; see /docs for its routes'))
      socketRequestLine(app.log, socket, 'CONNECT', '(no route)', problem.body.status)
      socket.end(rawProblemResponse(problem), () => { socket.destroy() })
    })
  })
  app.addHook('onRequest', async (request, reply) => {
    const raw = request.raw
    if (unmet.has(raw)) {
      throw new DocsplitError('DOCSPLIT_EXPECTATION_FAILED', 'the only Expect the service meets is 100-continue; send the request without the header')
    }
    // RFC 9112 3.2: a server must answer 400 to an HTTP/1.1 request without Host, and to any
    // request with more than one Host or an invalid one.
    if (raw.headers.host === undefined && raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1) {
      reply.header('connection', 'close')
      throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'an HTTP/1.1 request needs a Host header')
    }
    // Node keeps the first of several Host headers: count them in the raw list.
    if (raw.rawHeaders.filter((name, i) => i % 2 === 0 && name.toLowerCase() === 'host').length > 1) {
      reply.header('connection', 'close')
      throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'a request may have only one Host header')
    }
    if (raw.headers.host !== undefined && !HOST.test(raw.headers.host)) {
      reply.header('connection', 'close')
      throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'the Host header must be host[:port]: a name, an IPv4 address or an IPv6 address in brackets, and an optional numeric port')
    }
  })
}

export default fp(protocol, { name: 'docsplit-protocol', fastify: '5.x' })
