/**
 * The one error handler and not-found handler: every failure leaves as problem+json.
 * Schema validation failures get the same codes the engine would give (an out-of-range
 * `max_tokens` is DOCSPLIT_INVALID_BUDGET through every front), with a message built from the
 * schema, never from the request.
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TSchema } from 'typebox'
import { DocsplitError, isDocsplitError, type ErrorCode } from '../../core/errors.js'
import { describeSchema, mustBe, unknownOptionError } from '../../core/options.js'
import { tokenizerByName } from '../../core/registry.js'
import { didYouMean } from '../../core/suggest.js'
import { toProblem, type ProblemReply } from '../problem.js'
import { logPath, noteRoutePath, noteSocketAnswer, requestLine } from './access-log.js'

export interface ProblemPluginOptions {
  /** The split options by name (for messages on validation failures). */
  options: Record<string, TSchema>
  /** The body limit: after a refusal, up to 4 times this much of the rest is read and dropped. */
  maxBodyBytes: number
}

/** How long a refusal waits for the rest of the body before it answers anyway. */
const LINGER_MS = 5_000

/**
 * Reads and drops what is left of a refused body (up to `limit` bytes, for at most LINGER_MS),
 * so that a client still sending reads the answer instead of a reset connection (nginx's
 * "lingering close"); Node's fetch got EPIPE for about half the bodies just over the limit.
 */
function discardRest (req: IncomingMessage, limit: number): Promise<void> {
  if (req.complete || req.destroyed) return Promise.resolve()
  const declared = Number(req.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve()
  return new Promise((resolve) => {
    let seen = 0
    const done = (): void => {
      clearTimeout(timer)
      req.off('data', onData)
      req.off('end', done)
      req.off('close', done)
      req.off('error', done)
      resolve()
    }
    const onData = (data: Buffer): void => {
      seen += data.length
      if (seen > limit) done()
    }
    const timer = setTimeout(done, LINGER_MS)
    // A form refused mid-body (a second file, a field given twice) is still piped into the
    // form parser, whose backpressure can hold the request paused for good (busboy waits on
    // a part nobody reads): the rest comes here instead, dropped, not parsed.
    req.unpipe()
    req.on('data', onData)
    req.once('end', done)
    req.once('close', done)
    req.once('error', done)
    req.resume()
  })
}

interface AjvError { keyword: string, instancePath: string, params: Record<string, unknown> }

const codeForOption: Record<string, ErrorCode> = {
  max_tokens: 'DOCSPLIT_INVALID_BUDGET',
  overlap_tokens: 'DOCSPLIT_INVALID_BUDGET',
  input_format: 'DOCSPLIT_UNSUPPORTED_FORMAT',
  splitter: 'DOCSPLIT_UNKNOWN_SPLITTER',
  tokenizer: 'DOCSPLIT_UNKNOWN_TOKENIZER',
  encoding: 'DOCSPLIT_UNSUPPORTED_ENCODING',
}

/** The DocsplitError a body validation failure stands for; `body`, the request's, for a likely meant name. */
export function validationError (errors: AjvError[], options: Record<string, TSchema>, body?: unknown): DocsplitError {
  const first = errors[0]
  const names = ['text', ...Object.keys(options)]
  if (first === undefined) return new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'The request body does not match the documented schema.')
  if (first.keyword === 'additionalProperties') {
    return unknownOptionError(String(first.params.additionalProperty ?? '').slice(0, 64), names)
  }
  const name = first.keyword === 'required'
    ? String(first.params.missingProperty ?? '')
    : first.instancePath.split('/')[1] ?? ''
  if (name === '' || name === 'text') {
    return new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'The body must be a JSON object with a string member "text" (the document) and split options; see /openapi.json.')
  }
  const schema = options[name]
  if (schema === undefined) return new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'The request body does not match the documented schema.')
  // As the library: a name that is not known (a string) is the option's own code; a value that
  // is no name at all (`"tokenizer": 5`) an invalid option. Anything wrong with a budget is a budget error.
  const code = codeForOption[name] !== undefined && (first.keyword !== 'type' || codeForOption[name] === 'DOCSPLIT_INVALID_BUDGET') ? codeForOption[name] : 'DOCSPLIT_INVALID_OPTION'
  // A name not in the list (a format, a splitter, a tokenizer): the one likely meant, as the library says.
  const given = (body as Record<string, unknown> | null | undefined)?.[name]
  // A tokenizer: the registry's own message, which names model prefixes where 64 names would not leave room.
  if (name === 'tokenizer' && typeof given === 'string') {
    try {
      tokenizerByName(given)
    } catch (error) {
      if (isDocsplitError(error)) return error
    }
  }
  const allowed = first.params.allowedValues
  if (first.keyword === 'enum' && typeof given === 'string' && Array.isArray(allowed)) {
    const meant = didYouMean(given, allowed.map(String))
    if (meant !== '') return new DocsplitError(code, `${name} ${JSON.stringify(given.slice(0, 64))} is not known${meant}; it must be ${describeSchema(schema)}`)
  }
  return new DocsplitError(code, mustBe(name, schema, given))
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const

export function sendProblem (reply: FastifyReply, problem: ProblemReply): FastifyReply {
  for (const [name, value] of Object.entries(problem.headers)) reply.header(name, value)
  return reply.code(problem.body.status).type('application/problem+json').send(JSON.stringify(problem.body))
}

/**
 * fastify's `frameworkErrors`: a path that cannot be decoded (bad percent-encoding) or a
 * parameter past its length, found before routing. The path is client text: not echoed.
 */
export function frameworkErrors (_err: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const sent = sendProblem(reply, toProblem(new DocsplitError('DOCSPLIT_INVALID_REQUEST',
    'The request path is not valid (bad percent-encoding or a segment too long); see /docs for the routes.')))
  // Refused before routing, so before the access log's hooks: its line is written here.
  requestLine(request.server.log, request.method, '(invalid path)', sent.statusCode, Number.isFinite(reply.elapsedTime) ? reply.elapsedTime : 0)
  return sent
}

/** `problem` as a whole HTTP/1.1 response that closes its connection, to write on a socket outside fastify. */
export function rawProblemResponse (problem: ProblemReply): string {
  const body = JSON.stringify(problem.body)
  const status = problem.body.status
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
}

/**
 * fastify's `clientErrorHandler`: what Node's HTTP parser refuses before fastify sees a request
 * (a malformed request line or header, a bad Content-Length, Content-Length with
 * Transfer-Encoding, headers past 16 KiB, a request not received within requestTimeout). The
 * answer is written on the socket as fastify's default would, but as a problem.
 */
export function clientErrorHandler (this: FastifyInstance | undefined, err: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const problem = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
    ? toProblem(new DocsplitError('DOCSPLIT_REQUEST_TIMEOUT', 'The request (headers and body) was not received within a minute.'))
    : err.code === 'HPE_HEADER_OVERFLOW'
      ? toProblem(new DocsplitError('DOCSPLIT_HEADERS_TOO_LARGE', 'The request headers are larger than 16 KiB.'))
      : toProblem(new DocsplitError('DOCSPLIT_INVALID_REQUEST',
        'The request is not valid HTTP/1.1: a malformed request line or header, a bad Content-Length, or both Content-Length and Transfer-Encoding.'))
  if (socket.writable) {
    // Logged with the status written (a request under way too: not as gone, 499), except for a
    // client that ended its connection mid-request: it left.
    noteSocketAnswer(this?.log, socket, problem.body.status, err.code === 'HPE_INVALID_EOF_STATE')
    socket.write(rawProblemResponse(problem))
  }
  socket.destroy()
}

async function problemPlugin (app: FastifyInstance, opts: ProblemPluginOptions): Promise<void> {
  app.setErrorHandler(async (err: FastifyError, request, reply) => {
    const problem = err.validation !== undefined
      ? toProblem(validationError(err.validation as AjvError[], opts.options, request.body))
      : toProblem(err)
    const part = isDocsplitError(err as unknown) ? (err as unknown as DocsplitError).part : undefined
    if (problem.internal) {
      // The class and the part that failed only (a plugin's name: which of several broke):
      // messages and stacks may hold input or paths.
      const errorClass = (err as { errorClass?: unknown }).errorClass
      app.log.error({ code: 'DOCSPLIT_INTERNAL', error_class: typeof errorClass === 'string' ? errorClass : err?.constructor?.name ?? typeof err, ...(part !== undefined ? { part } : {}) }, 'unexpected error')
    } else if (problem.body.code === 'DOCSPLIT_TIMEOUT' && part !== undefined) {
      // A plugin step that took the split's budget (pool.ts): the operator's to look at, not the client's.
      app.log.warn({ code: 'DOCSPLIT_TIMEOUT', part }, 'a plugin step did not finish within the split budget')
    }
    // Refused before its body was read (413, 415, 429, 503 while draining): read and drop the
    // rest first. A client that sends `Connection: close` (nginx's default upstream), or any
    // client while draining, got a reset connection or EPIPE for bodies past what the kernel
    // buffers. Not for a body too slow to arrive (408): waiting for it is what failed.
    if (problem.body.status !== 408) await discardRest(request.raw, 4 * opts.maxBodyBytes)
    return sendProblem(reply, problem)
  })
  /** 404, or 405 with the methods it takes (as HTTP asks) for a known path and another method. */
  const unrouted = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const url = request.url.split('?', 1)[0]!
    const allowed = METHODS.filter((method) => app.hasRoute({ method, url }))
    if (allowed.length > 0) {
      noteRoutePath(request, logPath(url))
      const problem = toProblem(new DocsplitError('DOCSPLIT_METHOD_NOT_ALLOWED', `${url} takes ${allowed.join(', ')}; see /docs`))
      return sendProblem(reply, { ...problem, headers: { ...problem.headers, allow: allowed.join(', ') } })
    }
    return sendProblem(reply, toProblem(Object.assign(new Error('not found'), { statusCode: 404 })))
  }
  // Answered before the body is parsed: a request for no route is a 404 or 405 whatever its
  // body (a malformed or oversized JSON body made it a 400 or 413). The body is read and
  // dropped, within the limit, so the client gets the answer rather than a reset.
  app.addHook('onRequest', async (request, reply) => {
    if (!request.is404) return
    await discardRest(request.raw, 4 * opts.maxBodyBytes)
    return unrouted(request, reply)
  })
  app.setNotFoundHandler(unrouted)
}

export default fp(problemPlugin, { name: 'docsplit-problem', fastify: '5.x' })
