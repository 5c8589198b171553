/**
 * Refuses a split request the pool cannot take (queue full; a JSON answer while the JSON
 * answer memory is used up) with 503 DOCSPLIT_OVERLOADED as soon as its headers arrive, before
 * its body is read and parsed. Refused only after its body, each such request cost as much as
 * a split's upload: clients that retry at once then held the event loop, and splits that had a
 * worker waited for it (200s per second fell sevenfold).
 *
 * The hook runs before the rate limit's (a route hook, after every app hook), so these 503s use
 * none of the client's allowance. The body is read and dropped by the error handler, as for
 * every refusal made before it. A request let through here may still find the queue full once
 * its body is in: the pool checks again, and the rate limit gives that request back.
 */
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { wantsNdjson } from '../split-reply.js'

export interface AdmissionOptions {
  /** Route URL prefix of the split routes. */
  prefix: string
}

async function admission (app: FastifyInstance, opts: AdmissionOptions): Promise<void> {
  app.addHook('onRequest', async (request) => {
    if (!(request.routeOptions.url ?? '').startsWith(opts.prefix)) return
    const refusal = app.splitPool.refusal(!wantsNdjson(request.headers.accept))
    if (refusal !== undefined) throw refusal
  })
}

export default fp(admission, { name: 'docsplit-admission', fastify: '5.x', dependencies: ['docsplit-pool'] })
