/**
 * A shared rate limit through a real redis-server: two service instances hold one limit; when
 * Redis goes away the service keeps answering, counts locally and logs it once; when Redis is
 * back the instances share the limit again. Skipped when redis-server is not installed
 * (Debian: apt-get install redis-server).
 */
import { existsSync } from 'node:fs'
import t from 'tap'
import { TEXT, freePort, postJson, rawPost, serve, startChild, startScript, waitFor, type Child, type Served } from './helpers.js'

const redisBinary = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p))

async function startRedis (port: number, password?: string, args: string[] = []): Promise<Child> {
  const child = startChild(redisBinary!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning', ...(password !== undefined ? ['--requirepass', password] : []), ...args])
  await waitFor(async () => {
    try {
      const { Redis } = await import('ioredis')
      const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null, password })
      probe.on('error', () => {})
      await probe.connect()
      const pong = await probe.ping()
      probe.disconnect()
      return pong === 'PONG'
    } catch {
      return false
    }
  }, 15_000, 'redis-server to answer')
  return child
}

async function stopRedis (child: Child): Promise<void> {
  if (child.process.exitCode !== null) return
  child.process.kill('SIGTERM')
  await child.exited
}

const split = async (s: Served, n: number): Promise<number> => {
  const res = await postJson(s.url + TEXT, { text: `request ${n}` })
  await res.arrayBuffer()
  return res.status
}

t.test('two instances share one limit through Redis, and survive Redis going away', { skip: redisBinary === undefined ? 'redis-server not installed (apt-get install redis-server): shared rate limit not tested' : false }, async (t) => {
  const port = await freePort()
  let redis = await startRedis(port)
  t.teardown(async () => { await stopRedis(redis) })
  const options = { maxConcurrentSplits: 1, rateLimitRequests: 3, rateLimitWindowSeconds: 60, rateLimitRedisUrl: `redis://127.0.0.1:${port}` }
  const a = await serve(options)
  t.teardown(a.close)
  const b = await serve(options)
  t.teardown(b.close)

  t.same([await split(a, 1), await split(b, 2), await split(a, 3)], [200, 200, 200], 'three requests across both instances')
  t.equal(await split(b, 4), 429, 'the fourth, on the other instance, is limited: one shared count')
  t.equal(await split(a, 5), 429)

  await stopRedis(redis)
  const local = [await split(a, 6), await split(a, 7), await split(a, 8), await split(a, 9)]
  t.same(local, [200, 200, 200, 429], 'without Redis the instance answers and limits on its own')
  t.equal(await split(b, 9), 200, 'the other instance counts on its own too')
  const degraded = a.logs.filter((l) => /Redis unavailable/.test(l))
  t.equal(degraded.length, 1, 'logged once')
  t.match(degraded[0], /"level":40/, 'as a warning')
  t.match(degraded[0], /Redis unavailable \((connection lost|[A-Z][A-Z_]+)\)/, 'with what happened, an error code at most')
  t.notMatch(degraded.join('\n'), /127\.0\.0\.1|redis:\/\//, 'without address')

  redis = await startRedis(port)
  await waitFor(() => a.logs.some((l) => /Redis is back/.test(l)) && b.logs.some((l) => /Redis is back/.test(l)), 20_000, 'both instances to reconnect')
  t.same([await split(b, 10), await split(a, 11), await split(b, 12)], [200, 200, 200], 'a fresh shared count')
  t.equal(await split(a, 13), 429, 'shared again across instances')
})

t.test('a refused password is told from an outage, at start, without the password', { skip: redisBinary === undefined ? 'redis-server not installed' : false }, async (t) => {
  const port = await freePort()
  const redis = await startRedis(port, 'right-password')
  t.teardown(async () => { await stopRedis(redis) })
  const s = await serve({ maxConcurrentSplits: 1, rateLimitRequests: 3, rateLimitWindowSeconds: 60, rateLimitRedisUrl: `redis://:wrong-password@127.0.0.1:${port}` })
  t.teardown(s.close)
  await waitFor(() => s.logs.some((l) => /Redis unavailable/.test(l)), 10_000, 'the failure to be logged before any request')
  const line = s.logs.find((l) => /Redis unavailable/.test(l))!
  t.match(line, /authentication failed \(WRONGPASS\): check the user and password in DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL/, 'a configuration error, named')
  t.match(line, /"level":50/, 'logged as an error, not as a passing outage')
  t.notMatch(s.logs.filter((l) => !/Server listening/.test(l)).join('\n'), /wrong-password|127\.0\.0\.1/, 'without the password or address')
  t.equal(await split(s, 1), 200, 'the service answers meanwhile, counting on its own')
  t.equal(s.logs.filter((l) => /Redis unavailable/.test(l)).length, 1, 'logged once')
})

t.test('a split refused for a full queue once its body is in gives its count back in Redis', { skip: redisBinary === undefined ? 'redis-server not installed' : false }, async (t) => {
  const port = await freePort()
  const redis = await startRedis(port)
  t.teardown(async () => { await stopRedis(redis) })
  const s = await serve({ maxConcurrentSplits: 1, maxQueuedSplits: 0, splitTimeoutSeconds: 120, rateLimitRequests: 10, rateLimitWindowSeconds: 600, rateLimitRedisUrl: `redis://127.0.0.1:${port}` })
  t.teardown(s.close)
  // Let in (and counted) while the worker is free; its body comes once a split holds the worker.
  const late = rawPost(s.url, 13)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const gone = new AbortController()
  fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'long', input_format: 'spin', spin_ms: 600_000 }), signal: gone.signal }).catch(() => {})
  await new Promise((resolve) => setTimeout(resolve, 500))
  late.send('{"text":"ok"}')
  t.equal((await late.answer).status, 503)
  gone.abort()
  await new Promise((resolve) => setTimeout(resolve, 300))
  const next = await postJson(s.url + TEXT, { text: 'next' })
  t.equal(next.status, 200)
  t.equal(next.headers.get('ratelimit-remaining'), '8', 'the busy split and this one counted, the refused one given back')
})

/** The keys of database `db` of the Redis on `port`. */
async function keysIn (port: number, db: number): Promise<string[]> {
  const { Redis } = await import('ioredis')
  const probe = new Redis(port, '127.0.0.1', { db, maxRetriesPerRequest: 0, retryStrategy: () => null })
  try {
    return await probe.keys('*')
  } finally {
    probe.disconnect()
  }
}

t.test('a database Redis refuses stops the start, as an invalid setting, with the password masked', { skip: redisBinary === undefined ? 'redis-server not installed' : false }, async (t) => {
  const port = await freePort()
  const redis = await startRedis(port, 'right-password')
  t.teardown(async () => { await stopRedis(redis) })
  // ioredis reported the refused SELECT, then counted in database 0, among another application's keys.
  const child = startChild(process.execPath, ['--import', 'tsx', startScript], {
    PORT: '0', DOCSPLIT_PLUGINS: '', DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL: `redis://:right-password@127.0.0.1:${port}/99`,
  })
  t.teardown(() => { child.process.kill() })
  await waitFor(() => child.process.exitCode !== null || /^listening/m.test(child.stdout()), 60_000, 'the start to end')
  if (/^listening/m.test(child.stdout())) {
    t.fail('never listened')
    child.process.kill()
  }
  t.equal(await child.exited, 2, 'exit 2: a setting that is not valid')
  t.match(child.stderr(), /DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL must be a URL naming a database that Redis has: Redis refused database 99 \(ERR DB index is out of range\): a Redis has 16 databases, 0 to 15/, 'the variable named, with what Redis said')
  t.match(child.stderr(), `(got "redis://:***@127.0.0.1:${port}/99")`, 'the URL, its password masked')
  t.notMatch(child.stderr() + child.stdout(), /right-password/, 'never the password')
  t.notMatch(child.stdout(), /Redis unavailable/, 'no log of counting alone: the start fails instead')
})

t.test('a database refused on a reconnect: the instance counts alone, says why, and never writes to database 0', { skip: redisBinary === undefined ? 'redis-server not installed' : false }, async (t) => {
  const port = await freePort()
  let redis = await startRedis(port)
  t.teardown(async () => { await stopRedis(redis) })
  const s = await serve({ maxConcurrentSplits: 1, rateLimitRequests: 3, rateLimitWindowSeconds: 60, rateLimitRedisUrl: `redis://127.0.0.1:${port}/12` })
  t.teardown(s.close)
  t.equal(await split(s, 1), 200, 'Redis has database 12')
  t.same(await keysIn(port, 12), ['docsplit-rl-127.0.0.1'], 'counted in the URL\'s database')

  // The same Redis back with fewer databases (a configuration changed on a restart).
  await stopRedis(redis)
  redis = await startRedis(port, undefined, ['--databases', '4'])
  await waitFor(() => s.logs.some((l) => /Redis refused database 12/.test(l)), 15_000, 'the refusal to be logged')
  const statuses = [await split(s, 2), await split(s, 3), await split(s, 4), await split(s, 5)]
  t.same(statuses, [200, 200, 200, 429], 'counted by the instance alone')
  t.same(await keysIn(port, 0), [], 'nothing written to database 0')
  const refused = s.logs.filter((l) => /Redis refused database 12/.test(l))
  t.equal(refused.length, 1, 'logged once')
  t.match(refused[0], /"level":50/, 'as an error')
  t.match(refused[0], /ERR DB index is out of range\): a Redis has 16 databases, 0 to 15, unless its \\"databases\\" setting says otherwise; check the database in DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL/, 'with what to check')
  t.notOk(s.logs.some((l) => /Redis is back/.test(l)), 'not told as back while the database is refused')

  // With the database there again, the instance shares again, in its database.
  await stopRedis(redis)
  redis = await startRedis(port)
  await waitFor(() => s.logs.some((l) => /Redis is back/.test(l)), 15_000, 'the instance to share again')
  t.equal(await split(s, 6), 200, 'counted in Redis')
  t.same(await keysIn(port, 12), ['docsplit-rl-127.0.0.1'], 'counted in the URL\'s database again')
  t.same(await keysIn(port, 0), [], 'and still nothing in database 0')
})

t.test('a Redis not there at start: the start goes on, and counting is shared once it comes, in the URL\'s database', { skip: redisBinary === undefined ? 'redis-server not installed' : false }, async (t) => {
  const port = await freePort()
  const s = await serve({ maxConcurrentSplits: 1, rateLimitRequests: 3, rateLimitWindowSeconds: 60, rateLimitRedisUrl: `redis://127.0.0.1:${port}/5` })
  t.teardown(s.close)
  t.match(s.logs.find((l) => /Redis unavailable/.test(l)), /"level":40.*Redis unavailable \(ECONNREFUSED\)/, 'an outage, as a warning: no database to check yet')
  t.equal(await split(s, 1), 200, 'answers, counting alone')
  const redis = await startRedis(port)
  t.teardown(async () => { await stopRedis(redis) })
  await waitFor(() => s.logs.some((l) => /Redis is back/.test(l)), 15_000, 'the instance to share')
  t.equal(await split(s, 2), 200, 'counted in Redis')
  t.same(await keysIn(port, 5), ['docsplit-rl-127.0.0.1'], 'counted in database 5')
  t.same(await keysIn(port, 0), [], 'not in database 0')
})
