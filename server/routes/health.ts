/** GET /health and /docsplit/api/health: answers while every worker is busy (splits run off-thread). */
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { VERSION } from '../../index.js'
import { plainErrorResponses } from '../schemas.js'

export const Health = Type.Object({
  status: Type.Literal('ok'),
  version: Type.String({ description: 'Engine version.' }),
})

export default async function health (app: FastifyInstance): Promise<void> {
  const schema = {
    summary: 'Liveness and readiness',
    tags: ['service'],
    response: { 200: Health, ...plainErrorResponses() },
  }
  const body = JSON.stringify({ status: 'ok', version: VERSION })
  for (const url of ['/health', '/docsplit/api/health']) {
    // One operationId per path, as OpenAPI requires, for client generators.
    app.get(url, { schema: { ...schema, operationId: url === '/health' ? 'health' : 'apiHealth' } }, async (_request, reply) => reply.type('application/json; charset=utf-8').send(body))
  }
}
