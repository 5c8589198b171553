/**
 * What both split routes do once they have the input and options: run the split in the pool
 * and answer with the response JSON, or with NDJSON when the client asks for it. A client that
 * goes away cancels its split, freeing the worker.
 */
import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { DocsplitError } from '../core/errors.js'
import { noteStreamFailure } from './plugins/access-log.js'

export const NDJSON = 'application/x-ndjson'

const SLICE = 64 * 1024

/**
 * A long body as a stream of slices (views, not copies). Each slice the client takes counts as
 * activity on the connection, so a client that reads slowly is not cut off as idle (a single
 * write of the whole body counts only once all of it is taken).
 */
export function sliced (bytes: Uint8Array): Readable {
  let at = 0
  return new Readable({
    read () {
      if (at >= bytes.length) {
        this.push(null)
        return
      }
      const end = Math.min(bytes.length, at + SLICE)
      this.push(Buffer.from(bytes.buffer, bytes.byteOffset + at, end - at))
      at = end
    },
  })
}

/**
 * Both split routes, before the body is read (preParsing: after the rate limit's onRequest, so
 * these refusals count and carry its headers). Options go in the body: one in the query string
 * would be dropped without a word (`?max_tokens=8` split at 512), so a query parameter named as
 * an option is refused (others, such as a gateway's key, are left alone). A compressed body
 * (any Content-Encoding but identity) is refused too: it would be read as the document.
 */
export function refuseQueryOptionsAndEncoding (request: FastifyRequest, optionNames: ReadonlySet<string>): void {
  const query = request.query
  if (query !== null && typeof query === 'object' && Object.keys(query).some((name) => optionNames.has(name.toLowerCase()))) {
    throw new DocsplitError('DOCSPLIT_INVALID_REQUEST',
      'split options go in the body (JSON members, or form fields of the file upload), not in the query string')
  }
  const header = request.headers['content-encoding']
  if (header === undefined) return
  const codings = header.split(',').map((s) => s.trim().toLowerCase()).filter((s) => s !== '')
  if (codings.every((c) => c === 'identity')) return
  throw new DocsplitError('DOCSPLIT_UNSUPPORTED_MEDIA_TYPE',
    'compressed request bodies are not supported (Content-Encoding other than identity): send the body uncompressed')
}

/**
 * True when the Accept header prefers NDJSON: it lists application/x-ndjson with a q-value
 * above 0 and at least as high as JSON's (from application/json, else application/*, else
 * any type: the most specific match). On a tie NDJSON wins, as a client that names it asks
 * for it; a header that does not name it gets JSON.
 */
export function wantsNdjson (accept: string | undefined): boolean {
  if (accept === undefined) return false
  const quality: Record<string, number> = {}
  for (const item of accept.split(',')) {
    const [type, ...params] = item.split(';').map((s) => s.trim().toLowerCase())
    if (type === undefined || type === '') continue
    const q = params.find((p) => /^q\s*=/.test(p))
    const value = q === undefined ? 1 : Number(q.slice(q.indexOf('=') + 1).trim())
    const weight = Number.isFinite(value) && value >= 0 && value <= 1 ? value : 1
    // A type listed twice keeps its highest weight.
    quality[type] = Math.max(quality[type] ?? 0, weight)
  }
  const ndjson = quality[NDJSON] ?? 0
  const json = quality['application/json'] ?? quality['application/*'] ?? quality['*/*'] ?? 0
  return ndjson > 0 && ndjson >= json
}

export async function sendSplit (
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  input: string | Uint8Array,
  options: Record<string, unknown>,
): Promise<FastifyReply> {
  const cancel = new AbortController()
  reply.raw.once('close', () => {
    if (reply.raw.writableFinished) return
    cancel.abort()
    // Make sure the connection is released even if the client left it half-open.
    reply.raw.destroy()
  })
  if (wantsNdjson(request.headers.accept)) {
    const body = await app.splitPool.ndjson(input, options, cancel.signal)
    body.once('failed', (status: number) => { noteStreamFailure(reply.raw, status) })
    return reply.type(NDJSON).send(body)
  }
  const held = await app.splitPool.json(input, options, cancel.signal)
  // The answer counts against DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB until it is sent or the
  // connection closes ('close' follows 'finish' too); a client already gone releases it now.
  if (reply.raw.destroyed || reply.raw.closed) held.release()
  else reply.raw.once('close', held.release)
  const { json } = held
  reply.type('application/json; charset=utf-8')
  if (json.length <= SLICE) return reply.send(Buffer.from(json.buffer, json.byteOffset, json.length))
  return reply.header('content-length', json.length).send(sliced(json))
}
