/**
 * Rate limit for the split routes only (health, version, docs and their assets are never
 * limited): DOCSPLIT_WEB_RATE_LIMIT_REQUESTS per client address and window, one bucket shared by
 * both split routes, 429 with Retry-After and RateLimit-* headers.
 *
 * With DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL the count is shared between instances through Redis.
 * If Redis goes away the service keeps answering and counts locally (logged once); when Redis
 * is back it shares again (logged once). A Redis that keeps the connection but stops answering
 * (hung, stopped, cut off by the network) counts as gone after redisTimeoutMs: the
 * connection is dropped and made again, and requests count locally until it answers.
 * A Redis that refuses the URL's database is never counted in: ioredis would carry on in
 * database 0, among another application's keys. At start that stops the start, as an invalid
 * setting does; later, the instance counts alone and says why.
 */
import { createRequire } from 'node:module'
import fp from 'fastify-plugin'
import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { DocsplitError } from '../../core/errors.js'
import { invalidRedisUrl } from '../env.js'
import type { RetryHint } from '../problem.js'

export interface RateLimitOptions {
  max: number
  windowSeconds: number
  redisUrl: string | undefined
  /** How long a request waits for Redis's count (DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS). */
  redisTimeoutMs: number
  /** Route URL prefix that is limited. */
  prefix: string
}

type IncrCallback = (error: Error | null, result?: { current: number, ttl: number }) => void

interface Store {
  incr (key: string, callback: IncrCallback, timeWindow: number, max: number): void
  child (routeOptions: unknown): Store
}

/** A store that can also give back one counted request (a 503: the service's fault, not the client's). */
interface RefundingStore extends Store {
  refund (key: string): void
}

/** How long a connection to Redis may take to open. */
const CONNECT_TIMEOUT_MS = 2000

type StoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, ...rest: unknown[]) => Store

const require = createRequire(import.meta.url)
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as StoreCtor
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as StoreCtor

interface RedisLike {
  status: string
  options: { db?: number }
  on (event: string, listener: (...args: unknown[]) => void): unknown
  quit (): Promise<unknown>
  disconnect (reconnect?: boolean): void
  eval (script: string, keys: number, ...args: string[]): Promise<unknown>
}

const REDIS_PREFIX = 'docsplit-rl-'
/** Takes one off a count that is there (an expired key is left alone: its window is over). */
const REFUND_SCRIPT = "local n = tonumber(redis.call('GET', KEYS[1]) or '0') if n > 0 then return redis.call('DECR', KEYS[1]) end return 0"

/** The window of one key in LocalStore (its own shape; package-lock pins the version). */
interface LocalEntry { current: number, iterationStartMs: number }

/** This instance's own count (the rate-limit plugin's LocalStore), which can give one back. */
function localStore (windowMs: number, size: number): RefundingStore {
  const local = new LocalStore(false, false, size) as Store & { lru?: { get (key: string): LocalEntry | undefined } }
  return {
    incr: (key, callback, timeWindow, max) => { local.incr(key, callback, timeWindow, max) },
    child () { return this },
    refund (key) {
      const entry = local.lru?.get(key)
      // Only within the window that counted it: LocalStore starts a new one at its end.
      if (entry !== undefined && entry.current > 0 && Date.now() < entry.iterationStartMs + windowMs) entry.current--
    },
  }
}

/**
 * Whether `error` is Redis refusing the URL's database (its SELECT failed: `ERR DB index is out
 * of range`, or NOPERM for the user). ioredis reports it, then uses the connection anyway, in
 * database 0. A SELECT refused for want of a login (NOAUTH) is the AUTH's failure, told as such.
 */
function refusedDatabase (error: unknown): boolean {
  const e = error as { command?: { name?: unknown }, message?: unknown } | null
  return e?.command?.name === 'select' && typeof e.message === 'string' && !/^(NOAUTH|WRONGPASS)\b/.test(e.message)
}

/** Redis's refusal of database `db`, with what to check (its reply's name only, as for other failures). */
function databaseRefusal (db: number, error: unknown): string {
  const message = String((error as { message?: unknown }).message)
  if (/DB index is out of range/i.test(message)) {
    return `Redis refused database ${db} (ERR DB index is out of range): a Redis has 16 databases, 0 to 15, unless its "databases" setting says otherwise`
  }
  const reply = /^[A-Z]+\b/.exec(message)?.[0] ?? 'refused'
  return `Redis refused database ${db} (${reply})${reply === 'NOPERM' ? ': the user may not select it' : ''}`
}

/** The reason logged when a Redis that answered drops its connection (killed, restarted, network). */
const CONNECTION_LOST = 'connection lost'

/**
 * Why Redis failed, in words an operator acts on: a refused password or database is a mistake in
 * the URL, not an outage. Only error codes and Redis's own reply names: never a host, user or password.
 */
export function redisFailure (error: unknown, db: number, timeoutMs: number): { reason: string, misconfigured: boolean } {
  const e = error as { code?: unknown, message?: unknown } | null
  const message = typeof e?.message === 'string' ? e.message : ''
  if (refusedDatabase(error)) return { reason: `${databaseRefusal(db, error)}; check the database in DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL`, misconfigured: true }
  const reply = /^(WRONGPASS|NOAUTH|NOPERM)\b/.exec(message)?.[1]
  if (reply !== undefined) return { reason: `authentication failed (${reply}): check the user and password in DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL`, misconfigured: true }
  const code = typeof e?.code === 'string' && /^[A-Z0-9_]{1,40}$/.test(e.code) ? e.code : undefined
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { reason: `host not found (${code}): check the host in DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL`, misconfigured: true }
  if (message === 'Command timed out') return { reason: `no answer within ${timeoutMs} ms`, misconfigured: false }
  // ioredis fails the commands in flight with this when the connection drops under them: the
  // same outage its 'close' event tells, a moment later.
  if (message === 'Connection is closed.') return { reason: CONNECTION_LOST, misconfigured: false }
  return { reason: code ?? /^[A-Z]+\b/.exec(message)?.[0] ?? (error instanceof Error ? error.name : 'unknown error'), misconfigured: false }
}

interface SharedStore {
  store: RefundingStore
  /**
   * Settles once the first connection is set up or has failed (within the connect and command
   * timeouts together): with
   * Redis's refusal of the URL's database, in words, if that is how it failed; else undefined.
   */
  refusedAtStart: Promise<string | undefined>
}

/** Redis when it answers in the URL's database, this instance's own count otherwise. */
function sharedStore (redis: RedisLike, log: FastifyInstance['log'], windowMs: number, timeoutMs: number): SharedStore {
  const remote = new RedisStore(false, false, redis, REDIS_PREFIX)
  const local = localStore(windowMs, 10_000)
  const db = redis.options.db ?? 0
  let degraded = false
  let toldMisconfigured = false
  /** Why the last connection or command failed; whether Redis ever answered. */
  let lastError: unknown
  let wasReady = false
  /** This connection's SELECT was refused: it is in database 0, where nothing may be counted. */
  let wrongDatabase = false
  const degrade = (error: unknown = lastError): void => {
    const { reason, misconfigured } = error === undefined ? { reason: wasReady ? CONNECTION_LOST : 'not connected yet', misconfigured: false } : redisFailure(error, db, timeoutMs)
    // Once per outage; a mistake in the URL found during one (on a reconnect) is told too.
    if (degraded && (!misconfigured || toldMisconfigured)) return
    degraded = true
    toldMisconfigured = misconfigured
    log[misconfigured ? 'error' : 'warn']({ code: 'DOCSPLIT_RATE_LIMIT_LOCAL' }, `rate limit: Redis unavailable (${reason}), counting per instance until it is back`)
  }
  let reportStart: ((refusal: string | undefined) => void) | undefined
  const refusedAtStart = new Promise<string | undefined>((resolve) => {
    // Database 0 is where a connection starts: no SELECT is sent, none can be refused.
    if (db === 0) return resolve(undefined)
    const timer = setTimeout(() => { reportStart?.(undefined) }, CONNECT_TIMEOUT_MS + timeoutMs)
    timer.unref()
    reportStart = (refusal) => {
      clearTimeout(timer)
      reportStart = undefined
      resolve(refusal)
    }
  })
  const shared = (): boolean => redis.status === 'ready' && !wrongDatabase
  // A new connection sends its own SELECT (its reply comes after this event).
  redis.on('connect', () => { wrongDatabase = false })
  redis.on('ready', () => {
    if (wrongDatabase) return
    reportStart?.(undefined)
    wasReady = true
    lastError = undefined
    if (!degraded) return
    degraded = false
    toldMisconfigured = false
    log.info({ code: 'DOCSPLIT_RATE_LIMIT_SHARED' }, 'rate limit: Redis is back, sharing the limit again')
  })
  // ioredis reports every failed reconnect as an error event: the fallback is logged once, when
  // the first one comes (at start, for a Redis that is not there or refuses the password).
  redis.on('error', (error) => {
    // What fails on a connection being dropped for its database is no news.
    if (wrongDatabase) return
    lastError = error
    if (refusedDatabase(error)) {
      wrongDatabase = true
      if (reportStart !== undefined) {
        // The start fails instead (the plugin below): no more attempts, nothing to log.
        redis.disconnect()
        return reportStart(databaseRefusal(db, error))
      }
      // Dropped and made again (retryStrategy): the database may be there next time.
      redis.disconnect(true)
    } else {
      // Not there, or a refused password: the start goes on, counting alone (logged here).
      reportStart?.(undefined)
    }
    degrade(error)
  })
  const store: RefundingStore = {
    incr (key, callback, timeWindow, max) {
      if (!shared()) {
        degrade()
        local.incr(key, callback, timeWindow, max)
        return
      }
      remote.incr(key, (error, result) => {
        if (error === null) {
          callback(null, result)
          return
        }
        degrade(error)
        // Connected but silent (the command timed out): reconnect, and count locally until it
        // is ready. (A Redis that answers with an error stays connected: it is not silent.)
        if (shared() && error.message === 'Command timed out') redis.disconnect(true)
        local.incr(key, callback, timeWindow, max)
      }, timeWindow, max)
    },
    child () { return store },
    refund (key) {
      if (!shared()) {
        local.refund(key)
        return
      }
      // A lost refund costs the client one request of its window: not worth a fallback.
      redis.eval(REFUND_SCRIPT, 1, REDIS_PREFIX + key).catch(() => {})
    },
  }
  return { store, refusedAtStart }
}

async function rateLimitPlugin (app: FastifyInstance, opts: RateLimitOptions): Promise<void> {
  const windowMs = opts.windowSeconds * 1000
  let store: RefundingStore
  let redis: RedisLike | undefined
  if (opts.redisUrl !== undefined) {
    const { Redis } = await import('ioredis').catch((error: unknown) => {
      const code = (error as { code?: string }).code
      if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error
      throw new DocsplitError('DOCSPLIT_EXTRA_UNAVAILABLE', 'DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL is set but ioredis is not installed: npm install ioredis (or leave the variable out for a per-process limit)', { cause: error })
    })
    redis = new Redis(opts.redisUrl, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: opts.redisTimeoutMs,
      retryStrategy: (times: number) => Math.min(times * 200, 2000),
    }) as unknown as RedisLike
    const shared = sharedStore(redis, app.log, windowMs, opts.redisTimeoutMs)
    store = shared.store
    const url = opts.redisUrl
    // A Redis that answers but refuses the URL's database stops the start, as an invalid
    // setting does. One that is not there (yet) does not: the instance counts alone meanwhile.
    app.addHook('onReady', async () => {
      const refusal = await shared.refusedAtStart
      if (refusal !== undefined) invalidRedisUrl(url, `a URL naming a database that Redis has: ${refusal}`)
    })
  } else {
    // The plugin's own default, made here so that it can give requests back.
    store = localStore(windowMs, 5000)
  }
  const limited = (request: FastifyRequest): boolean => (request.routeOptions.url ?? '').startsWith(opts.prefix)
  /** Requests counted, with their key: one refused with 503 DOCSPLIT_OVERLOADED is given back. */
  const counted = new WeakMap<FastifyRequest, string>()
  await app.register(rateLimit, {
    global: true,
    max: opts.max,
    timeWindow: windowMs,
    enableDraftSpec: true,
    // Called with the key just before the count, for limited routes only.
    allowList: (request, key) => {
      if (!limited(request)) return true
      counted.set(request, key)
      return false
    },
    // The plugin's own key, except that a client gone right after its headers has no address
    // any more (request.ip is undefined and normalizeIP would throw a TypeError).
    keyGenerator: (request) => {
      const ip = request.ip as string | undefined
      return ip === undefined ? '(gone)' : normalizeIP(ip)
    },
    store: class { constructor () { return store } } as never,
    errorResponseBuilder: (_request, context) => Object.assign(
      new DocsplitError('DOCSPLIT_RATE_LIMITED',
        `more than ${opts.max} split requests in ${opts.windowSeconds} s from this client; retry in ${context.after}`),
      { retryAfterSeconds: Math.ceil(context.ttl / 1000) } satisfies RetryHint),
  })
  // A split the service could not take (queue full once its body was in, or its JSON answer
  // found no memory: a 503 DOCSPLIT_OVERLOADED that asks to retry) is no request of the
  // client's: its count is given back, and the answer says so. (Refused as its headers
  // arrived, it was never counted: see admission.ts.) A split cancelled by its client is no
  // refusal: it keeps its count.
  app.addHook('onError', async (request, reply, error) => {
    const key = counted.get(request)
    const e = error as { code?: unknown } & RetryHint
    if (key === undefined || e.code !== 'DOCSPLIT_OVERLOADED' || e.retryAfterSeconds === undefined) return
    counted.delete(request)
    store.refund(key)
    const remaining = Number(reply.getHeader('ratelimit-remaining'))
    if (Number.isInteger(remaining)) reply.header('ratelimit-remaining', Math.min(opts.max, remaining + 1))
  })
  if (redis !== undefined) {
    const client = redis
    app.addHook('onClose', async () => { await client.quit().catch(() => { client.disconnect() }) })
  }
}

export default fp(rateLimitPlugin, { name: 'docsplit-rate-limit', fastify: '5.x' })
