/**
 * Requests that Node's HTTP server would refuse on its own, with a bare answer that no hook
 * sees and no log line records: an `Expect` other than `100-continue` (417) and an HTTP/1.1
 * request without `Host` (400). Both are let through to fastify (app.ts turns off Node's
 * `requireHostHeader`) and refused here instead, as problem+json, logged like any request,
 * after the rest of their body is read and dropped (the error handler).
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { DocsplitError } from '../../core/errors.js'

async function protocol (app: FastifyInstance): Promise<void> {
  /** Requests whose Expect Node does not meet (it decides: 100-continue in any case, HTTP/1.1). */
  const unmet = new WeakSet<IncomingMessage>()
  // Node emits this instead of 'request' (and answers a bare 417 when nobody listens).
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    unmet.add(request)
    app.server.emit('request', request, response)
  })
  app.addHook('onRequest', async (request, reply) => {
    const raw = request.raw
    if (unmet.has(raw)) {
      throw new DocsplitError('DOCSPLIT_EXPECTATION_FAILED', 'the only Expect the service meets is 100-continue; send the request without the header')
    }
    // RFC 9112 3.2: a server must answer 400 to an HTTP/1.1 request without Host.
    if (raw.headers.host === undefined && raw.httpVersionMajor === 1 && raw.httpVersionMinor >= 1) {
      reply.header('connection', 'close')
      throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'an HTTP/1.1 request needs a Host header')
    }
  })
}

export default fp(protocol, { name: 'docsplit-protocol', fastify: '5.x' })
