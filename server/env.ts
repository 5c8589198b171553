/**
 * The service's settings, read once at start from the environment. One TypeBox schema per
 * variable gives the default, the accepted range and the description (README Limits table).
 * An invalid value stops the start with a message that names the variable and what it accepts.
 */
import { isIP } from 'node:net'
import { Type, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { describeSchema } from '../core/options.js'
import { DocsplitError, listValues } from '../core/errors.js'
import { DEFAULT_MAX_INFLATED_BYTES, MAX_INFLATED_BYTES, MIN_INFLATED_BYTES } from '../plugins/formats/xlsx/limits.js'
import { countThreads } from '../plugins/tokenizers/tiktoken/count-threads.js'

const MiB = 1024 * 1024

/** Defaults, also written into the schemas below. */
const DEFAULTS = {
  HOST: '127.0.0.1',
  PORT: 8000,
  DOCSPLIT_WEB_MAX_BODY_BYTES: 5 * MiB,
  DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS: 2,
  DOCSPLIT_WEB_MAX_QUEUED_SPLITS: 64,
  DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS: 30,
  DOCSPLIT_WEB_IDLE_TIMEOUT_SECONDS: 30,
  DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB: 2048,
  DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB: 512,
  DOCSPLIT_WEB_RATE_LIMIT_REQUESTS: 60,
  DOCSPLIT_WEB_RATE_LIMIT_WINDOW_SECONDS: 60,
  DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS: 500,
  DOCSPLIT_WEB_LOG_LEVEL: 'info',
} as const

/** Every variable the service reads, with its schema. Integers and numbers are parsed from text. */
export const envSchema = {
  HOST: Type.String({ minLength: 1, maxLength: 255, default: DEFAULTS.HOST, description: 'Address to listen on. Use `0.0.0.0` in a container.' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: DEFAULTS.PORT, description: 'Port to listen on (0: any free port).' }),
  DOCSPLIT_WEB_MAX_BODY_BYTES: Type.Integer({ minimum: 1024, maximum: 1024 * MiB, default: DEFAULTS.DOCSPLIT_WEB_MAX_BODY_BYTES, description: 'Largest JSON body or uploaded file, in bytes. Past it: 413, sent once the rest of the body (up to 4x this size, 5 s at most) is read and dropped, so that a client still sending gets the answer, not a reset connection.' }),
  DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS: Type.Integer({ minimum: 1, maximum: 256, default: DEFAULTS.DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS, description: 'Worker threads: splits that run at the same time.' }),
  DOCSPLIT_WEB_MAX_QUEUED_SPLITS: Type.Integer({ minimum: 0, maximum: 100_000, default: DEFAULTS.DOCSPLIT_WEB_MAX_QUEUED_SPLITS, description: 'Splits that may wait for a worker. Past it: 503 with Retry-After, decided as the request\'s headers arrive (its body is read and dropped, not parsed), and not counted by the rate limit.' }),
  DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS: Type.Number({ minimum: 0.1, maximum: 3600, default: DEFAULTS.DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS, description: 'Budget of one split, queue wait included. Past it the worker is stopped and replaced: 503.' }),
  DOCSPLIT_WEB_IDLE_TIMEOUT_SECONDS: Type.Number({ minimum: 1, maximum: 3600, default: DEFAULTS.DOCSPLIT_WEB_IDLE_TIMEOUT_SECONDS, description: 'A connection on which nothing moves (no request bytes arrive, the client takes no response bytes, or on Linux reads under 1 KB/s of what the kernel holds) for the split budget plus this long is closed: a client that stops reading its answer is cut off and the answer freed.' }),
  DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB: Type.Integer({ minimum: 64, maximum: 65536, default: DEFAULTS.DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB, description: 'Heap limit of each worker thread. A split past it: 422 DOCSPLIT_LIMIT_EXCEEDED; so is a JSON answer of more than an eighth of it (256 MB at most: ask for NDJSON, which is streamed). Workers that cannot load the engine and plugins within it stop the start (exit 2).' }),
  DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB: Type.Integer({ minimum: 1, maximum: 65536, default: DEFAULTS.DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB, description: 'Memory for JSON answers on their way to clients, all requests together (the whole answer is held until sent). While this much is held, a split request that wants JSON gets 503 DOCSPLIT_OVERLOADED with Retry-After, before or after its split. NDJSON answers are streamed: only the lines that wait for a client slower than its split are held here, in half of it at most (then the client holds its split back).' }),
  DOCSPLIT_WEB_RATE_LIMIT_REQUESTS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: DEFAULTS.DOCSPLIT_WEB_RATE_LIMIT_REQUESTS, description: 'Split requests per client and window. Past it: 429 with Retry-After. Health, version and docs are never limited.' }),
  DOCSPLIT_WEB_RATE_LIMIT_WINDOW_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: DEFAULTS.DOCSPLIT_WEB_RATE_LIMIT_WINDOW_SECONDS, description: 'Length of the rate-limit window.' }),
  DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL: Type.String({ pattern: '^rediss?://', maxLength: 2048, description: 'Share the rate limit between instances through Redis (`redis://host:6379/0`). Unset: each instance counts alone. A database that Redis refuses (it has 16, 0 to 15, by default) stops the start; refused on a reconnect, the instance counts alone, never in another database.' }),
  DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS: Type.Integer({ minimum: 10, maximum: 60_000, default: DEFAULTS.DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS, description: 'How long a request waits for Redis\'s count (with DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL). Past it, Redis counts as gone: the request and the next ones count per instance (logged once) while the connection is made again. Raise it for a distant or busy Redis.' }),
  DOCSPLIT_WEB_LOG_LEVEL: Type.String({ enum: ['fatal', 'error', 'warn', 'info', 'debug', 'silent'], default: DEFAULTS.DOCSPLIT_WEB_LOG_LEVEL, description: 'Log level. Request lines are `info`; `debug` adds lines of the web framework\'s plugins (a request id and a step, such as `starting multipart parsing`), outside the one line per request.' }),
  DOCSPLIT_MAX_INFLATED_BYTES: Type.Integer({ minimum: MIN_INFLATED_BYTES, maximum: MAX_INFLATED_BYTES, default: DEFAULT_MAX_INFLATED_BYTES, description: 'Largest size an XLSX upload may inflate to (all its zip entries together), in bytes. Past it: 422 DOCSPLIT_LIMIT_EXCEEDED, before any parsing. Also read by the library and the CLI.' }),
  DOCSPLIT_TRUST_PROXY: Type.String({ default: 'off', description: 'Trust `X-Forwarded-For` for the client address (rate limiting): `off`, `on`, a hop count (1-32: the client is the address that many hops back, whoever sent it, so only where clients reach the service through those proxies alone), or a comma-separated list of proxy addresses or CIDRs.' }),
  DOCSPLIT_BUILD_COMMIT: Type.String({ pattern: '^[0-9A-Za-z._-]{1,64}$', description: 'Commit the service was built from, shown by /version.' }),
  DOCSPLIT_PLUGINS: Type.String({ maxLength: 4096, description: 'Comma-separated plugin modules to load at start: package names (resolved from the current directory, then from docsplit\'s own dependencies) or paths (`./x.js`, `/abs/x.js`).' }),
} as const satisfies Record<string, TSchema>

export type TrustProxy = boolean | number | string

/** The validated settings, as the app uses them. */
export interface ServerConfig {
  host: string
  port: number
  maxBodyBytes: number
  maxConcurrentSplits: number
  maxQueuedSplits: number
  splitTimeoutSeconds: number
  idleTimeoutSeconds: number
  workerMaxMemoryMb: number
  jsonResponseMemoryMb: number
  rateLimitRequests: number
  rateLimitWindowSeconds: number
  rateLimitRedisUrl: string | undefined
  rateLimitRedisTimeoutMs: number
  logLevel: string
  trustProxy: TrustProxy
  buildCommit: string | undefined
  plugins: string[]
}

export const defaultConfig: ServerConfig = {
  host: DEFAULTS.HOST,
  port: DEFAULTS.PORT,
  maxBodyBytes: DEFAULTS.DOCSPLIT_WEB_MAX_BODY_BYTES,
  maxConcurrentSplits: DEFAULTS.DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS,
  maxQueuedSplits: DEFAULTS.DOCSPLIT_WEB_MAX_QUEUED_SPLITS,
  splitTimeoutSeconds: DEFAULTS.DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS,
  idleTimeoutSeconds: DEFAULTS.DOCSPLIT_WEB_IDLE_TIMEOUT_SECONDS,
  workerMaxMemoryMb: DEFAULTS.DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB,
  jsonResponseMemoryMb: DEFAULTS.DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB,
  rateLimitRequests: DEFAULTS.DOCSPLIT_WEB_RATE_LIMIT_REQUESTS,
  rateLimitWindowSeconds: DEFAULTS.DOCSPLIT_WEB_RATE_LIMIT_WINDOW_SECONDS,
  rateLimitRedisUrl: undefined,
  rateLimitRedisTimeoutMs: DEFAULTS.DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS,
  logLevel: DEFAULTS.DOCSPLIT_WEB_LOG_LEVEL,
  trustProxy: false,
  buildCommit: undefined,
  plugins: [],
}

type EnvName = keyof typeof envSchema

const SHOWN_CHARS = 64

function invalid (name: string, accepted: string, raw: string): never {
  // The value is echoed when printable, its first characters only: it came from the operator,
  // not a client.
  const cut = raw.length <= SHOWN_CHARS ? raw : `${raw.slice(0, SHOWN_CHARS)}...`
  const shown = /^[\x20-\x7e]*$/.test(raw) ? ` (got "${cut}")` : ''
  throw new DocsplitError('DOCSPLIT_INVALID_OPTION', `${name} must be ${accepted}${shown}`)
}

/**
 * Stops the start over DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL, as for any invalid setting, with its
 * password masked: for what only Redis can tell too (a database it does not have).
 */
export function invalidRedisUrl (url: string, accepted: string): never {
  invalid('DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL', accepted, maskPassword(url))
}

/**
 * A URL as a message may show it: the password of its user info (`user:password@`; all of the
 * user info when it has no `:`, as some write the password alone there) and a `password=` in
 * its query (ioredis reads options from the query) become `***`. Masks from the last `@`, so
 * a password with an unescaped `/` or `@` is hidden too.
 */
export function maskPassword (url: string): string {
  const scheme = url.indexOf('://')
  const start = scheme === -1 ? 0 : scheme + 3
  const at = url.lastIndexOf('@')
  let out = url
  if (at >= start) {
    const info = url.slice(start, at)
    const colon = info.indexOf(':')
    out = `${url.slice(0, start)}${colon === -1 ? '***' : `${info.slice(0, colon)}:***`}${url.slice(at)}`
  }
  return out.replace(/([?&]pass(?:word)?=)[^&#]*/gi, '$1***')
}

/** Parses one variable against its schema; numbers must be written as plain decimals. */
function read (env: NodeJS.ProcessEnv, name: EnvName): unknown {
  const schema = envSchema[name] as TSchema & { type?: string, default?: unknown }
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return schema.default
  const text = raw.trim()
  let value: unknown = text
  if (schema.type === 'integer') value = /^\d+$/.test(text) ? Number(text) : Number.NaN
  if (schema.type === 'number') value = /^\d+(\.\d+)?$/.test(text) ? Number(text) : Number.NaN
  if (!Value.Check(schema, value)) {
    const accepted = name === 'DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL'
      ? 'a redis:// or rediss:// URL'
      : name === 'DOCSPLIT_BUILD_COMMIT' ? 'up to 64 letters, digits, ".", "_" or "-"' : describeSchema(schema)
    invalid(name, accepted, name === 'DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL' ? maskPassword(raw) : raw)
  }
  if (name === 'DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL' && !isRedisUrl(text)) {
    invalid(name, 'a redis:// or rediss:// URL with a host, a port from 1 to 65535 if any, and a database number as its path if any', maskPassword(raw))
  }
  return value
}

/**
 * Whether ioredis can take the URL: a host, a valid port, a percent-encoded user info and a
 * path that is a database number. A port of letters or out of range stopped the start with an
 * internal error (exit 1), and a path such as `/abc` was taken without a word.
 */
function isRedisUrl (text: string): boolean {
  let url: URL
  try {
    url = new URL(text)
    decodeURIComponent(url.username)
    decodeURIComponent(url.password)
  } catch {
    return false
  }
  return url.hostname !== '' && /^\/?\d*$/.test(url.pathname)
}

const TRUST_ACCEPTED = '"off", "on", a hop count from 1 to 32, or a comma-separated list of IP addresses or CIDRs'

function parseTrustProxy (raw: string): TrustProxy {
  const text = raw.trim().toLowerCase()
  if (['off', 'false', 'no', '0', ''].includes(text)) return false
  if (['on', 'true', 'yes'].includes(text)) return true
  if (/^\d+$/.test(text)) {
    const hops = Number(text)
    if (hops >= 1 && hops <= 32) return hops
    invalid('DOCSPLIT_TRUST_PROXY', TRUST_ACCEPTED, raw)
  }
  const items = text.split(',').map((s) => s.trim())
  for (const item of items) {
    const [address, bits, extra] = item.split('/')
    const family = isIP(address ?? '')
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32))
    if (family === 0 || !bitsOk || extra !== undefined) invalid('DOCSPLIT_TRUST_PROXY', TRUST_ACCEPTED, raw)
  }
  return items.join(',')
}

/**
 * Reads and validates every setting. Throws DocsplitError naming the first bad variable, and
 * refuses unknown `DOCSPLIT_WEB_*` names (a typo would otherwise fall back to a default silently).
 */
export function loadEnv (env: NodeJS.ProcessEnv = process.env): ServerConfig {
  const known = Object.keys(envSchema)
  for (const name of Object.keys(env)) {
    if (name.startsWith('DOCSPLIT_WEB_') && !known.includes(name)) {
      throw new DocsplitError('DOCSPLIT_UNKNOWN_OPTION',
        `unknown variable ${name.slice(0, 64)}; accepted: ${listValues(known.filter((k) => k.startsWith('DOCSPLIT_WEB_')))}`)
    }
  }
  const host = read(env, 'HOST') as string
  if (!/^[A-Za-z0-9.:_-]+$/.test(host)) invalid('HOST', 'an IP address or host name', host)
  // Read by the xlsx plugin in each worker, per split: checked here so a bad value stops the
  // start instead of failing every XLSX request.
  read(env, 'DOCSPLIT_MAX_INFLATED_BYTES')
  // Read by the exact tokenizers, which get no counting threads here (splits run in worker
  // threads already): checked so a bad value stops the start, as it stops every CLI split,
  // rather than failing each split with an exact tokenizer as the client's 400.
  countThreads(env.DOCSPLIT_COUNT_THREADS)
  const plugins = String(read(env, 'DOCSPLIT_PLUGINS') ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
  return {
    host,
    port: read(env, 'PORT') as number,
    maxBodyBytes: read(env, 'DOCSPLIT_WEB_MAX_BODY_BYTES') as number,
    maxConcurrentSplits: read(env, 'DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS') as number,
    maxQueuedSplits: read(env, 'DOCSPLIT_WEB_MAX_QUEUED_SPLITS') as number,
    splitTimeoutSeconds: read(env, 'DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS') as number,
    idleTimeoutSeconds: read(env, 'DOCSPLIT_WEB_IDLE_TIMEOUT_SECONDS') as number,
    workerMaxMemoryMb: read(env, 'DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB') as number,
    jsonResponseMemoryMb: read(env, 'DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB') as number,
    rateLimitRequests: read(env, 'DOCSPLIT_WEB_RATE_LIMIT_REQUESTS') as number,
    rateLimitWindowSeconds: read(env, 'DOCSPLIT_WEB_RATE_LIMIT_WINDOW_SECONDS') as number,
    rateLimitRedisUrl: read(env, 'DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL') as string | undefined,
    rateLimitRedisTimeoutMs: read(env, 'DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS') as number,
    logLevel: read(env, 'DOCSPLIT_WEB_LOG_LEVEL') as string,
    trustProxy: parseTrustProxy(env.DOCSPLIT_TRUST_PROXY ?? ''),
    buildCommit: read(env, 'DOCSPLIT_BUILD_COMMIT') as string | undefined,
    plugins,
  }
}
