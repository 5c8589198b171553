/** GET /version and /docsplit/api/version: engine version, and the build commit when known. */
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { VERSION } from '../../index.js'
import { plainErrorResponses } from '../schemas.js'

export const Version = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String({ description: 'Engine version.' }),
  commit: Type.Optional(Type.String({ description: 'Build commit (DOCSPLIT_BUILD_COMMIT); absent when not set.' })),
})

export interface VersionOptions { buildCommit: string | undefined }

export default async function version (app: FastifyInstance, opts: VersionOptions): Promise<void> {
  const schema = {
    summary: 'Version of the running service',
    tags: ['service'],
    response: { 200: Version, ...plainErrorResponses() },
  }
  const body = JSON.stringify({ status: 'ok', version: VERSION, ...(opts.buildCommit !== undefined ? { commit: opts.buildCommit } : {}) })
  for (const url of ['/version', '/docsplit/api/version']) {
    // One operationId per path, as OpenAPI requires, for client generators.
    app.get(url, { schema: { ...schema, operationId: url === '/version' ? 'version' : 'apiVersion' } }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(body))
  }
}
