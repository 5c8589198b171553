/**
 * Start-up settings: every DOCSPLIT_WEB_* variable and HOST/PORT validated with a message that
 * names the variable and its range; a bad value or a bad plugin makes the process exit
 * non-zero; a good start listens, and SIGTERM lets the in-flight split finish, refuses new
 * requests and exits 0.
 */
import t, { type Test } from 'tap'
import { createServer, type AddressInfo } from 'node:net'
import { isDocsplitError } from '../../index.js'
import { defaultConfig, loadEnv } from '../../server/env.js'
import { TEXT, startChild, startScript, testPlugins, waitFor } from './helpers.js'

const hidePackages = new URL('./fixtures/hide-packages.mjs', import.meta.url).href

const invalid: Array<[string, string, RegExp]> = [
  ['PORT', '70000', /PORT must be an integer from 0 to 65535/],
  ['PORT', 'eighty', /PORT must be an integer from 0 to 65535/],
  ['HOST', 'my host', /HOST must be an IP address or host name/],
  ['DOCSPLIT_WEB_MAX_BODY_BYTES', '0', /DOCSPLIT_WEB_MAX_BODY_BYTES must be an integer from 1024 to 1073741824/],
  ['DOCSPLIT_WEB_MAX_BODY_BYTES', '5MB', /DOCSPLIT_WEB_MAX_BODY_BYTES must be an integer/],
  ['DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS', '0', /DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS must be an integer from 1 to 256/],
  ['DOCSPLIT_WEB_MAX_QUEUED_SPLITS', '-1', /DOCSPLIT_WEB_MAX_QUEUED_SPLITS must be an integer from 0 to 100000/],
  ['DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS', '0', /DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS must be a number from 0.1 to 3600/],
  ['DOCSPLIT_WEB_IDLE_TIMEOUT_SECONDS', '0', /DOCSPLIT_WEB_IDLE_TIMEOUT_SECONDS must be a number from 1 to 3600/],
  ['DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB', '16', /DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB must be an integer from 64 to 65536/],
  ['DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB', '0', /DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB must be an integer from 1 to 65536/],
  ['DOCSPLIT_WEB_RATE_LIMIT_REQUESTS', '0', /DOCSPLIT_WEB_RATE_LIMIT_REQUESTS must be an integer from 1 to 1000000/],
  ['DOCSPLIT_WEB_RATE_LIMIT_WINDOW_SECONDS', '100000', /DOCSPLIT_WEB_RATE_LIMIT_WINDOW_SECONDS must be an integer from 1 to 86400/],
  ['DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS', '5', /DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS must be an integer from 10 to 60000/],
  ['DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL', 'http://127.0.0.1:6379', /DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL \(got "http:\/\/127\.0\.0\.1:6379"\)/],
  ['DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL', 'http://user:pw@x', /DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL \(got "http:\/\/user:\*\*\*@x"\)/],
  ...['redis://user:pw@127.0.0.1:notaport/0', 'redis://user:pw@/0', 'rediss://:pw@127.0.0.1:99999/0', 'redis://u:pw%zz@127.0.0.1/0', 'redis://127.0.0.1:6379/abc', 'redis://127.0.0.1:6379/0/extra']
    .map((url): [string, string, RegExp] => ['DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL', url, /DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL with a host, a port from 1 to 65535 if any, and a database number as its path if any \(got "[^"]*"\)/]),
  ['DOCSPLIT_WEB_LOG_LEVEL', 'loud', /DOCSPLIT_WEB_LOG_LEVEL must be one of "fatal"/],
  ['DOCSPLIT_MAX_INFLATED_BYTES', 'abc', /DOCSPLIT_MAX_INFLATED_BYTES must be an integer from 1024 to 2147483647/],
  ['DOCSPLIT_MAX_INFLATED_BYTES', '512', /DOCSPLIT_MAX_INFLATED_BYTES must be an integer from 1024 to 2147483647/],
  ['DOCSPLIT_COUNT_THREADS', '99', /DOCSPLIT_COUNT_THREADS must be an integer from 0 to 8 \(got "99"\)/],
  ['DOCSPLIT_TRUST_PROXY', 'maybe', /DOCSPLIT_TRUST_PROXY must be "off", "on", a hop count/],
  ['DOCSPLIT_TRUST_PROXY', '99', /DOCSPLIT_TRUST_PROXY must be/],
  ['DOCSPLIT_BUILD_COMMIT', 'not a commit!', /DOCSPLIT_BUILD_COMMIT must be up to 64 letters/],
  ['DOCSPLIT_WEB_MAX_BODY', '1', /unknown variable DOCSPLIT_WEB_MAX_BODY; accepted: .*"DOCSPLIT_WEB_MAX_BODY_BYTES"/],
]

t.test('loadEnv: defaults', async (t) => {
  t.same(loadEnv({}), defaultConfig)
  t.equal(defaultConfig.maxBodyBytes, 5 * 1024 * 1024)
  t.equal(defaultConfig.maxConcurrentSplits, 2)
  t.equal(defaultConfig.maxQueuedSplits, 64)
  t.equal(defaultConfig.jsonResponseMemoryMb, 512)
  t.equal(loadEnv({ DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB: '64' }).jsonResponseMemoryMb, 64)
  t.equal(defaultConfig.splitTimeoutSeconds, 30)
  t.equal(defaultConfig.rateLimitRequests, 60)
  t.equal(defaultConfig.rateLimitWindowSeconds, 60)
  t.equal(defaultConfig.rateLimitRedisTimeoutMs, 500)
  t.equal(loadEnv({ DOCSPLIT_WEB_RATE_LIMIT_REDIS_TIMEOUT_MS: '2000' }).rateLimitRedisTimeoutMs, 2000)
  t.equal(defaultConfig.host, '127.0.0.1')
  t.equal(defaultConfig.port, 8000)
  t.equal(defaultConfig.trustProxy, false)
})

t.test('loadEnv: valid values', async (t) => {
  const config = loadEnv({
    HOST: '0.0.0.0', PORT: '0', DOCSPLIT_WEB_MAX_BODY_BYTES: '2048', DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS: '1.5',
    DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL: 'redis://127.0.0.1:6379/0', DOCSPLIT_BUILD_COMMIT: 'abc123', DOCSPLIT_PLUGINS: 'a, ./b.js',
  })
  t.equal(config.host, '0.0.0.0')
  t.equal(config.port, 0)
  t.equal(config.maxBodyBytes, 2048)
  t.equal(config.splitTimeoutSeconds, 1.5)
  t.equal(config.rateLimitRedisUrl, 'redis://127.0.0.1:6379/0')
  t.equal(config.buildCommit, 'abc123')
  t.doesNotThrow(() => loadEnv({ DOCSPLIT_MAX_INFLATED_BYTES: '1048576' }), 'a valid DOCSPLIT_MAX_INFLATED_BYTES')
  t.same(config.plugins, ['a', './b.js'])
  t.equal(loadEnv({ DOCSPLIT_TRUST_PROXY: 'on' }).trustProxy, true)
  t.equal(loadEnv({ DOCSPLIT_TRUST_PROXY: 'off' }).trustProxy, false)
  t.equal(loadEnv({ DOCSPLIT_TRUST_PROXY: '2' }).trustProxy, 2)
  t.equal(loadEnv({ DOCSPLIT_TRUST_PROXY: '10.0.0.0/8, 127.0.0.1' }).trustProxy, '10.0.0.0/8,127.0.0.1')
})

t.test('loadEnv: each invalid value names the variable and its range', async (t) => {
  for (const [name, value, message] of invalid) {
    try {
      loadEnv({ [name]: value })
      t.fail(`${name}=${value} accepted`)
    } catch (error) {
      t.ok(isDocsplitError(error), `${name}=${value}: a DocsplitError`)
      t.match((error as Error).message, message, `${name}=${value}`)
    }
  }
})

t.test('loadEnv: a Redis URL refused is shown, with its password masked', async (t) => {
  const message = (url: string): string => {
    try {
      loadEnv({ DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL: url })
      return ''
    } catch (error) {
      return (error as Error).message
    }
  }
  t.match(message('http://x'), /\(got "http:\/\/x"\)$/, 'the value refused')
  t.match(message('http://user:pw@host:6379/0'), /\(got "http:\/\/user:\*\*\*@host:6379\/0"\)$/, 'the user kept, the password masked')
  t.match(message('http://pw@host'), /\(got "http:\/\/\*\*\*@host"\)$/, 'user info without a colon masked whole')
  t.match(message('redis:/:p/w@d@host'), /\(got "redis:\*\*\*@host"\)$/, 'no "://": masked from the first colon to the last @')
  t.match(message('http://host?db=1&password=pw'), /\(got "http:\/\/host\?db=1&password=\*\*\*"\)$/, 'a password in the query masked')
  for (const url of ['http://user:pw@host', 'http://pw@host', 'redis:/:p/w@d@host', 'http://host?password=pw', `http://user:pw@${'h'.repeat(80)}`]) {
    t.notMatch(message(url), /pw|p\/w/, `${url.slice(0, 30)}: no password shown`)
  }
  t.match(message(`http://${'h'.repeat(80)}`), new RegExp(`\\(got "http://${'h'.repeat(57)}\\.\\.\\."\\)$`), 'a long value: its first 64 characters')
})

// Every value's message is checked in-process above (loadEnv); all take the same way out of the
// process, so a few stand for them here (each start costs a second or more of CPU).
const exiting = invalid.filter(([name, value]) => (name === 'PORT' && value === 'eighty') || name === 'DOCSPLIT_WEB_MAX_BODY' || value === 'http://user:pw@x')

t.test('the process exits non-zero on an invalid value, naming it', async (t) => {
  t.equal(exiting.length, 3)
  await Promise.all(exiting.map(async ([name, value, message]) => {
    const child = startChild(process.execPath, ['--import', 'tsx', startScript], { [name]: value, PORT: name === 'PORT' ? value : '0' })
    const code = await child.exited
    t.not(code, 0, `${name}=${value}: exit code ${String(code)}`)
    t.match(child.stderr(), message, `${name}=${value}: message`)
    t.notMatch(child.stderr(), /\n\s+at /, 'no stack trace')
  }))
})

t.test('the process exits non-zero when a plugin cannot load', async (t) => {
  const child = startChild(process.execPath, ['--import', 'tsx', startScript], { PORT: '0', DOCSPLIT_PLUGINS: './no/such/plugin.mjs' })
  t.not(await child.exited, 0)
  t.match(child.stderr(), /plugin module "\.\/no\/such\/plugin\.mjs" was not found/)
})

t.test('workers that run out of memory while loading their plugins: the start fails naming the setting', async (t) => {
  const heavy = new URL('./fixtures/heavy-plugin.mjs', import.meta.url).pathname
  const child = startChild(process.execPath, ['--import', 'tsx', startScript], { PORT: '0', DOCSPLIT_PLUGINS: heavy, DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB: '64', DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS: '1' })
  t.equal(await child.exited, 2, 'exit 2: a setting that is not valid')
  t.match(child.stderr(), /the workers ran out of memory while loading the engine and plugins: DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB = 64 is too small for them; raise it/)
  t.notMatch(child.stderr(), /\n\s+at /, 'no stack trace')
})

t.test('without the web extra, the start fails with a message naming it', async (t) => {
  const child = startChild(process.execPath, ['--import', 'tsx', '--import', hidePackages, startScript], { PORT: '0', HIDE_PACKAGES: 'fastify,@fastify/' })
  t.not(await child.exited, 0)
  t.match(child.stderr(), /docsplit serve needs the web extra: npm install fastify/)
})

t.test('a Redis URL without ioredis: the start fails with a message naming it', async (t) => {
  const child = startChild(process.execPath, ['--import', 'tsx', '--import', hidePackages, startScript], { PORT: '0', HIDE_PACKAGES: 'ioredis', DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL: 'redis://127.0.0.1:1' })
  t.not(await child.exited, 0)
  t.match(child.stderr(), /^DOCSPLIT_WEB_RATE_LIMIT_REDIS_URL is set but ioredis is not installed: npm install ioredis/m)
})

t.test('a port in use or a host not of this machine: the start fails naming PORT or HOST', async (t) => {
  const busy = createServer()
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { busy.close() })
  const port = String((busy.address() as AddressInfo).port)
  const inUse = startChild(process.execPath, ['--import', 'tsx', startScript], { HOST: '127.0.0.1', PORT: port })
  t.not(await inUse.exited, 0)
  t.match(inUse.stderr(), new RegExp(`^cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use; set PORT to a free one`, 'm'))
  const foreign = startChild(process.execPath, ['--import', 'tsx', startScript], { HOST: '192.0.2.1', PORT: '0' })
  t.not(await foreign.exited, 0)
  t.match(foreign.stderr(), /^cannot listen on 192\.0\.2\.1:0: HOST is not an address of this machine \(EADDRNOTAVAIL\)/m)
})

/** The service in a process of its own with one worker and the spin plugin; killed at the end. */
async function startOneWorker (t: Test): Promise<{ child: ReturnType<typeof startChild>, url: string }> {
  const child = startChild(process.execPath, ['--import', 'tsx', startScript], {
    HOST: '127.0.0.1', PORT: '0', DOCSPLIT_PLUGINS: testPlugins().join(','), DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS: '1', DOCSPLIT_WEB_LOG_LEVEL: 'warn',
  })
  t.teardown(() => { if (child.process.exitCode === null) child.process.kill('SIGKILL') })
  await waitFor(() => /listening http/.test(child.stdout()), 90_000, 'the server to listen')
  return { child, url: /listening (http\S+)/.exec(child.stdout())![1]! }
}

t.test('SIGTERM: the in-flight split finishes, new requests are refused, exit 0', async (t) => {
  const { child, url } = await startOneWorker(t)
  t.equal((await fetch(`${url}/health`)).status, 200)
  const inFlight = fetch(url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'slow', input_format: 'spin', spin_ms: 2000 }) })
  await new Promise((resolve) => setTimeout(resolve, 500))
  child.process.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 300))
  const late = await fetch(`${url}/health`).then((r) => r.status, () => 'refused')
  t.ok(late === 'refused' || late === 503, `a new request is refused (${String(late)})`)
  // A supervisor and a process group may both pass SIGTERM on: the second one keeps draining.
  child.process.kill('SIGTERM')
  const res = await inFlight
  t.equal(res.status, 200, 'the in-flight split completed, a second SIGTERM notwithstanding')
  t.equal(((await res.json()) as { chunk_count: number }).chunk_count, 1)
  t.equal(await child.exited, 0, 'exit code 0')
})

t.test('Ctrl-C twice: the second SIGINT leaves at once, with 130', async (t) => {
  const { child, url } = await startOneWorker(t)
  const inFlight = fetch(url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'slow', input_format: 'spin', spin_ms: 5000 }) }).catch(() => 'cut off')
  await new Promise((resolve) => setTimeout(resolve, 500))
  child.process.kill('SIGINT')
  await new Promise((resolve) => setTimeout(resolve, 300))
  child.process.kill('SIGINT')
  t.equal(await child.exited, 130, 'exit code 130')
  t.equal(await inFlight, 'cut off', 'the split in flight is cut off')
})
