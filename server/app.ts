/**
 * `build(opts)` makes the HTTP service as a fastify instance without listening (tests and
 * `start.ts` use it). Shared services are fastify-plugin wrapped (pool, problem, rate limit,
 * access log); each route file is an encapsulated plugin.
 */
import { isUtf8 } from 'node:buffer'
import Fastify, { LogController, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import type { TSchema } from 'typebox'
import { listParsers, loadPlugins, VERSION } from '../index.js'
import { Problem } from '../core/schema.js'
import { responseSchemas } from '../core/chunk-fields.js'
import { defaultConfig, type ServerConfig } from './env.js'
import { httpCodes } from './problem.js'
import { splitOptions, SPLIT_PREFIX } from './schemas.js'
import accessLog from './plugins/access-log.js'
import drain from './plugins/drain.js'
import stalledConnections from './plugins/stalled-connections.js'
import { DRAIN_EXTRA_SECONDS } from './shutdown-times.js'
import pool from './plugins/pool.js'
import protocol from './plugins/protocol.js'
import admission from './plugins/admission.js'
import problem, { clientErrorHandler, frameworkErrors } from './plugins/problem.js'
import rateLimit from './plugins/rate-limit.js'
import splitText from './routes/split-text.js'
import splitFile from './routes/split-file.js'
import health from './routes/health.js'
import version from './routes/version.js'
import docs from './routes/docs.js'
import { DocsplitError, errorTable } from '../core/errors.js'
import { firstInvalidUtf8 } from '../core/decode.js'
import { unknownOptionError } from '../core/options.js'

export interface BuildOptions extends Partial<ServerConfig> {
  /** Where log lines go (default: stdout). Tests pass a stream to read them. */
  logStream?: NodeJS.WritableStream
}

/** Plugin modules already loaded in this process: the registry refuses a second registration. */
const loaded = new Set<string>()

/** Records modules the caller already loaded into this process (`docsplit serve --plugin`). */
export function markPluginsLoaded (modules: readonly string[]): void {
  for (const m of modules) loaded.add(m)
}

async function loadOnce (modules: string[]): Promise<void> {
  const fresh = modules.filter((m) => !loaded.has(m))
  await loadPlugins(fresh)
  for (const m of fresh) loaded.add(m)
}

/** The whole request (headers and body) must arrive within this long: 408 after it. */
const REQUEST_TIMEOUT_MS = 54_000

/**
 * DOCSPLIT_TRUST_PROXY as a hop count: the client is the address that many hops back, the
 * socket's peer being the first (as Express and proxy-addr count), whoever the peer is. Only
 * for a service that clients reach through those proxies alone.
 */
function trustHops (hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops
}

/** The errors table as an OpenAPI description (every code, status and problem type). */
function errorsDescription (): string {
  const rows = httpCodes.map((code) => `| \`${code}\` | ${errorTable[code].status} | ${errorTable[code].title} | ${errorTable[code].description} |`)
  return [
    'Split documents into chunks under a token budget (`docsplit.chunk.v1`).',
    '',
    'Errors are RFC 9457 `application/problem+json` bodies `{type, title, status, detail, code}`; `type` is `urn:docsplit:error:<code>`.',
    '',
    // Folded: open, it is some two screens that the docs page shows before the routes.
    `<details><summary>Every error code (${rows.length}), its status and meaning</summary>`,
    '',
    '| code | status | title | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    '</details>',
  ].join('\n')
}

/**
 * The refusal of valid JSON that the JSON parser (secure-json-parse) refuses as malformed for a
 * `__proto__` member: at the top, an unknown option as any other; deeper, refused by name.
 * Undefined for JSON that is malformed indeed.
 */
function protoRefusal (text: string, names: readonly string[]): DocsplitError | undefined {
  let body: unknown
  try {
    // The parser reads past a byte order mark; JSON.parse does not.
    body = JSON.parse(text.replace(/^\uFEFF/, ''))
  } catch {
    return undefined
  }
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && Object.hasOwn(body, '__proto__')) return unknownOptionError('__proto__', names)
  return new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'a JSON member named "__proto__" is refused, at any depth of the body')
}

export async function build (opts: BuildOptions = {}): Promise<FastifyInstance> {
  const { logStream, ...given } = opts
  const config: ServerConfig = { ...defaultConfig, ...given }
  await loadOnce(config.plugins)
  const options: Record<string, TSchema> = splitOptions()
  const idleMs = Math.round((config.splitTimeoutSeconds + config.idleTimeoutSeconds) * 1000)

  // Nothing about a request or an error reaches the log by accident.
  const serializers = {
    req: () => ({}),
    res: () => ({}),
    err: (err: { code?: unknown }) => ({ code: typeof err?.code === 'string' ? err.code : undefined }),
  }
  const app = Fastify({
    logger: {
      level: config.logLevel,
      base: null,
      ...(logStream !== undefined ? { stream: logStream } : {}),
      serializers: serializers as never,
    },
    // Request lines come from access-log.ts only (fastify's own carry the client address).
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: false,
    // Worker start-up (engine and plugins) happens in an onReady hook: give it room.
    pluginTimeout: 120_000,
    bodyLimit: config.maxBodyBytes,
    // A client must finish sending its request within a minute (a body sent a byte a second
    // would otherwise hold a connection forever; fastify's default is no limit). Node checks
    // every 5 s (its default, 30 s, gave the 408 after up to 90 s), so 54 s gives it within
    // 54-59 s: before the idle rule (60 s by default) closes a client that stopped sending,
    // unanswered. Node's headersTimeout (60 s) must be set too: fastify sets requestTimeout
    // after the server is made, and a body that stopped kept the 60 s limit.
    requestTimeout: REQUEST_TIMEOUT_MS,
    // A request without Host is refused by protocol.ts instead: Node's own 400 has no body and no log line.
    http: { connectionsCheckingInterval: 5_000, headersTimeout: REQUEST_TIMEOUT_MS, requireHostHeader: false },
    // A connection on which nothing moves is closed: a client that stops reading its answer
    // would otherwise pin it in memory for as long as it likes. The longest legitimate silence
    // is a split's budget (queue wait included), during which nothing is sent. Node's timeout
    // covers a connection between requests; stalled-connections.ts one that carries a request.
    connectionTimeout: idleMs,
    // What fails before routing (a path that does not decode, HTTP that Node refuses) is a
    // problem+json like everything else, without the client's URL or fastify's own body.
    frameworkErrors,
    clientErrorHandler,
    // A hop count is a function: fastify 5.12 takes a number as "trust nothing".
    trustProxy: typeof config.trustProxy === 'number' ? trustHops(config.trustProxy) : config.trustProxy,
    ajv: {
      // Types are checked, not coerced ({"text": 5} is a 400, not "5"); unknown members are
      // refused, not dropped; defaults are left to the engine, as in the library and the CLI.
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false },
    },
  }) as unknown as FastifyInstance

  // JSON must be UTF-8 (RFC 8259): fastify would decode bad bytes to U+FFFD and split the
  // altered text; refuse them as the file endpoint does, with the byte offset.
  const parseJson = app.getDefaultJsonParser('error', 'ignore')
  const bodyNames = ['text', ...Object.keys(options)]
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer
    if (!isUtf8(bytes)) {
      const at = Math.max(0, firstInvalidUtf8(bytes, true))
      done(new DocsplitError('DOCSPLIT_INVALID_UTF8', `the request body is not valid UTF-8 at byte ${at}; JSON must be UTF-8`), undefined)
      return
    }
    const text = bytes.toString('utf8')
    parseJson(request, text, (err, body) => {
      done(err !== null ? protoRefusal(text, bodyNames) ?? err : null, body)
    })
  })

  // Requests in flight at SIGTERM get every second their split may take, and a few more to
  // finish their upload or answer; start.ts exits 1 if something still holds the process after that.
  await app.register(drain, { graceMs: (config.splitTimeoutSeconds + DRAIN_EXTRA_SECONDS) * 1000 })
  await app.register(accessLog)
  await app.register(stalledConnections, { idleMs })
  await app.register(protocol)
  await app.register(problem, { options, maxBodyBytes: config.maxBodyBytes })
  // Chunk with the fields the registered parsers declare (xlsx's `sheet`, ...).
  const { chunk, response } = responseSchemas(listParsers())
  for (const schema of [chunk, response, Problem]) app.addSchema(schema)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'docsplit', version: VERSION, description: errorsDescription() },
      tags: [{ name: 'split', description: 'Split documents' }, { name: 'service', description: 'Health and version' }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  })
  await app.register(pool, {
    maxConcurrentSplits: config.maxConcurrentSplits,
    maxQueuedSplits: config.maxQueuedSplits,
    splitTimeoutSeconds: config.splitTimeoutSeconds,
    workerMaxMemoryMb: config.workerMaxMemoryMb,
    jsonResponseBytes: config.jsonResponseMemoryMb * 1024 * 1024,
    plugins: config.plugins,
  })
  await app.register(admission, { prefix: SPLIT_PREFIX })
  await app.register(rateLimit, {
    max: config.rateLimitRequests,
    windowSeconds: config.rateLimitWindowSeconds,
    redisUrl: config.rateLimitRedisUrl,
    redisTimeoutMs: config.rateLimitRedisTimeoutMs,
    prefix: SPLIT_PREFIX,
  })
  await app.register(splitText, { options, maxBodyBytes: config.maxBodyBytes })
  await app.register(splitFile, { options, maxBodyBytes: config.maxBodyBytes })
  await app.register(health)
  await app.register(version, { buildCommit: config.buildCommit })
  await app.register(docs)
  return app
}
