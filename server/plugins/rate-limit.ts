/**
 * Rate limit for the split routes only (health, version, docs and their assets are never
 * limited): DOCSPLIT_WEB_RATE_LIMIT_REQUESTS per client address and window, one bucket shared by
 * both split routes, 429 with Retry-After and RateLimit-* headers.
 *
 * With DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL the count is shared between instances through Redis.
 * If Redis goes away the service keeps answering and counts locally (logged once); when Redis
 * is back it shares again (logged once). A Redis that keeps the connection but stops answering
 * (hung, stopped, cut off by the network) counts as gone after COMMAND_TIMEOUT_MS: the
 * connection is dropped and made again, and requests count locally until it answers.
 */
import { createRequire } from 'node:module'
import fp from 'fastify-plugin'
import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { DocsplitError } from '../../core/errors.js'
import type { RetryHint } from '../problem.js'

export interface RateLimitOptions {
  max: number
  windowSeconds: number
  redisUrl: string | undefined
  /** Route URL prefix that is limited. */
  prefix: string
}

type IncrCallback = (error: Error | null, result?: { current: number, ttl: number }) => void

interface Store {
  incr (key: string, callback: IncrCallback, timeWindow: number, max: number): void
  child (routeOptions: unknown): Store
}

/** How long a request waits for Redis's count before counting locally. */
const COMMAND_TIMEOUT_MS = 500

type StoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, ...rest: unknown[]) => Store

const require = createRequire(import.meta.url)
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as StoreCtor
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as StoreCtor

interface RedisLike {
  status: string
  on (event: string, listener: (...args: unknown[]) => void): unknown
  quit (): Promise<unknown>
  disconnect (reconnect?: boolean): void
}

/** Redis when it answers, this instance's own count when it does not. */
function sharedStore (redis: RedisLike, log: FastifyInstance['log']): new () => Store {
  const remote = new RedisStore(false, false, redis, 'docsplit-rl-')
  const local = new LocalStore(false, false, 10_000)
  let degraded = false
  const degrade = (): void => {
    if (degraded) return
    degraded = true
    log.warn({ code: 'DOCSPLIT_RATE_LIMIT_LOCAL' }, 'rate limit: Redis unavailable, counting per instance until it is back')
  }
  redis.on('ready', () => {
    if (!degraded) return
    degraded = false
    log.info({ code: 'DOCSPLIT_RATE_LIMIT_SHARED' }, 'rate limit: Redis is back, sharing the limit again')
  })
  // ioredis reports every failed reconnect as an error event; the fallback logs once instead.
  redis.on('error', () => {})
  const store: Store = {
    incr (key, callback, timeWindow, max) {
      if (redis.status !== 'ready') {
        degrade()
        local.incr(key, callback, timeWindow, max)
        return
      }
      remote.incr(key, (error, result) => {
        if (error === null) {
          callback(null, result)
          return
        }
        degrade()
        // Connected but silent (the command timed out): reconnect, and count locally until it
        // is ready. (A Redis that answers with an error stays connected: it is not silent.)
        if (redis.status === 'ready' && error.message === 'Command timed out') redis.disconnect(true)
        local.incr(key, callback, timeWindow, max)
      }, timeWindow, max)
    },
    child () { return store },
  }
  return class { constructor () { return store } } as unknown as new () => Store
}

async function rateLimitPlugin (app: FastifyInstance, opts: RateLimitOptions): Promise<void> {
  let store: (new () => Store) | undefined
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
      connectTimeout: 2000,
      commandTimeout: COMMAND_TIMEOUT_MS,
      retryStrategy: (times: number) => Math.min(times * 200, 2000),
    }) as unknown as RedisLike
    store = sharedStore(redis, app.log)
  }
  const limited = (request: FastifyRequest): boolean => (request.routeOptions.url ?? '').startsWith(opts.prefix)
  await app.register(rateLimit, {
    global: true,
    max: opts.max,
    timeWindow: opts.windowSeconds * 1000,
    enableDraftSpec: true,
    allowList: (request) => !limited(request),
    // The plugin's own key, except that a client gone right after its headers has no address
    // any more (request.ip is undefined and normalizeIP would throw a TypeError).
    keyGenerator: (request) => {
      const ip = request.ip as string | undefined
      return ip === undefined ? '(gone)' : normalizeIP(ip)
    },
    ...(store !== undefined ? { store: store as never } : {}),
    errorResponseBuilder: (_request, context) => Object.assign(
      new DocsplitError('DOCSPLIT_RATE_LIMITED',
        `more than ${opts.max} split requests in ${opts.windowSeconds} s from this client; retry in ${context.after}`),
      { retryAfterSeconds: Math.ceil(context.ttl / 1000) } satisfies RetryHint),
  })
  if (redis !== undefined) {
    const client = redis
    app.addHook('onClose', async () => { await client.quit().catch(() => { client.disconnect() }) })
  }
}

export default fp(rateLimitPlugin, { name: 'docsplit-rate-limit', fastify: '5.x' })
