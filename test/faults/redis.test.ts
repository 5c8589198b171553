/**
 * Redis killed during a rate-limited run, then restarted, against two built service instances
 * sharing DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL: while Redis is down every request is still
 * answered (200 or 429, never a 5xx or a dropped connection), each instance counts locally and
 * logs that once; when Redis is back the instances share the limit again.
 * Skipped when redis-server is not installed (Debian: apt-get install redis-server).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import * as net from 'node:net'
import t from 'tap'
import { TEXT, sleep, startService, type Service } from '../hostile/helpers.js'

const redisBinary = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((p) => existsSync(p))

function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port
      server.close(() => { resolve(port) })
    })
  })
}

async function startRedis (port: number): Promise<ChildProcess> {
  const child = spawn(redisBinary!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], { stdio: 'ignore' })
  const until = Date.now() + 15_000
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      socket.once('connect', () => { socket.write('PING\r\n') })
      socket.once('data', (d: Buffer) => { socket.destroy(); resolve(d.toString().startsWith('+PONG')) })
      socket.once('error', () => { resolve(false) })
    })
    if (up) return child
    if (Date.now() > until) throw new Error('redis-server did not start')
    await sleep(100)
  }
}

async function stop (child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill(signal)
  await exited
}

const split = async (s: Service, n: number): Promise<number | string> => {
  try {
    const res = await fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: `request ${n}`, max_tokens: 64 }) })
    await res.arrayBuffer()
    return res.status
  } catch (error) {
    return `dropped (${String((error as { cause?: { code?: string } }).cause?.code ?? error)})`
  }
}

t.test('Redis killed and restarted during a rate-limited run', { skip: redisBinary === undefined ? 'redis-server not installed (apt-get install redis-server): shared rate limit under Redis failure not tested' : false }, async (t) => {
  const port = await freePort()
  let redis = await startRedis(port)
  t.teardown(async () => { await stop(redis, 'SIGTERM') })
  // A Redis killed is told at once (the connection drops), not by a timeout: a long one keeps a
  // busy machine's slow answer (over the default 500 ms) from passing for an outage.
  const env = { DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS: '1', DOCSPLIT_WEB_RATE_LIMIT_REQUESTS: '10', DOCSPLIT_WEB_RATE_LIMIT_WINDOW_SECONDS: '600', DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL: `redis://127.0.0.1:${port}`, DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS: '3000' }
  const [a, b] = await Promise.all([startService(env), startService(env)]) as [Service, Service]
  t.teardown(async () => { await Promise.all([a.stop(), b.stop()]) })

  // Shared: 10 requests across both instances, then both are limited.
  const shared: Array<number | string> = []
  for (let i = 0; i < 10; i++) shared.push(await split(i % 2 === 0 ? a : b, i))
  t.same(shared, Array(10).fill(200), 'ten requests across two instances')
  t.same([await split(a, 10), await split(b, 11)], [429, 429], 'the eleventh on either instance is limited: one shared count')

  // A run of requests on both instances while Redis is killed (SIGKILL: a crash, no goodbye).
  const during: Array<number | string> = []
  let running = true
  const load = (async () => {
    for (let n = 0; running; n++) {
      during.push(await split(n % 2 === 0 ? a : b, 100 + n))
      await sleep(20)
    }
  })()
  await sleep(300)
  await stop(redis, 'SIGKILL')
  await sleep(2500)
  running = false
  await load
  t.ok(during.length > 20, `${during.length} requests during the outage`)
  t.same(during.filter((s) => s !== 200 && s !== 429), [], 'every request answered 200 or 429: no 5xx, no dropped connection')
  // Counting locally: each instance has a fresh local window of 10.
  const localA: Array<number | string> = []
  for (let i = 0; i < 12; i++) localA.push(await split(a, 200 + i))
  t.ok(localA.includes(429), 'without Redis the instance still limits, on its own count')
  t.equal(localA.filter((s) => s !== 200 && s !== 429).length, 0, 'and still answers')
  for (const [name, s] of [['a', a], ['b', b]] as const) {
    const lines = s.stdout().split('\n').filter((l) => /Redis unavailable/.test(l))
    t.equal(lines.length, 1, `instance ${name}: the fallback is logged once`)
    t.notMatch(lines.join('\n'), /127\.0\.0\.1|redis:\/\//, 'without address')
    t.match(lines[0], /Redis unavailable \((connection lost|[A-Z][A-Z_]+)\)/, 'with what happened, an error code at most')
  }

  // Redis back (empty: it kept nothing): the instances share one count again.
  redis = await startRedis(port)
  const until = Date.now() + 30_000
  while (!(/Redis is back/.test(a.stdout()) && /Redis is back/.test(b.stdout())) && Date.now() < until) await sleep(200)
  t.match(a.stdout(), /Redis is back/, 'instance a reconnected (logged)')
  t.match(b.stdout(), /Redis is back/, 'instance b reconnected (logged)')
  const again: Array<number | string> = []
  for (let i = 0; i < 10; i++) again.push(await split(i % 2 === 0 ? b : a, 300 + i))
  t.same(again, Array(10).fill(200), 'a fresh shared count of ten across both')
  t.same([await split(a, 400), await split(b, 401)], [429, 429], 'shared again: the eleventh is limited on both')
  t.equal(a.process.exitCode, null, 'instance a stayed up')
  t.equal(b.process.exitCode, null, 'instance b stayed up')
})

t.test('Redis that stops answering (SIGSTOP) but keeps its connections', { skip: redisBinary === undefined ? 'redis-server not installed (apt-get install redis-server): shared rate limit under Redis failure not tested' : false }, async (t) => {
  const port = await freePort()
  const redis = await startRedis(port)
  t.teardown(async () => {
    redis.kill('SIGCONT')
    await stop(redis, 'SIGTERM')
  })
  const env = { DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS: '1', DOCSPLIT_WEB_RATE_LIMIT_REQUESTS: '1000', DOCSPLIT_WEB_RATE_LIMIT_WINDOW_SECONDS: '600', DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL: `redis://127.0.0.1:${port}`, DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS: '300' }
  const s = await startService(env)
  t.teardown(async () => { await s.stop() })
  t.equal(await split(s, 0), 200, 'shared count while Redis answers')
  redis.kill('SIGSTOP')
  const times: number[] = []
  const during: Array<number | string> = []
  for (let i = 0; i < 10; i++) {
    const began = Date.now()
    during.push(await split(s, 1 + i))
    times.push(Date.now() - began)
  }
  t.same(during, Array(10).fill(200), 'every request answered while Redis is silent')
  t.ok(Math.max(...times) < 10_000, `none waits for Redis (slowest ${Math.max(...times)} ms)`)
  const fallback = s.stdout().split('\n').filter((l) => /Redis unavailable/.test(l))
  t.equal(fallback.length, 1, 'the fallback is logged once')
  t.match(fallback[0], /Redis unavailable \(no answer within 300 ms\)/, 'after DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS')
  redis.kill('SIGCONT')
  const until = Date.now() + 30_000
  while (!/Redis is back/.test(s.stdout()) && Date.now() < until) await sleep(200)
  t.match(s.stdout(), /Redis is back/, 'shared again once Redis answers (logged)')
  t.equal(await split(s, 100), 200)
})
