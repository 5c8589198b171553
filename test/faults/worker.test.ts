/**
 * Worker faults, on the built service with a test plugin (test/faults/fixtures/fault-plugin.mjs,
 * loaded through DOCSPLIT_PLUGINS): a worker that throws, exits (process.exit in the thread) or
 * dies of an uncaught exception mid-split is replaced; the request gets a 500 problem body with
 * a fixed detail (no message, path, stack or input leaked); the next request succeeds; the log
 * holds the error class only.
 */
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { TEXT, FILE, healthProber, startService } from '../hostile/helpers.js'

const plugin = fileURLToPath(new URL('./fixtures/fault-plugin.mjs', import.meta.url))
const CANARY = 'canary-wren-4471'

const post = (url: string, body: unknown): Promise<Response> =>
  fetch(url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

t.test('a worker that throws, exits or dies mid-split is replaced', async (t) => {
  // One worker: the request after a fault can only succeed on a replacement.
  const service = await startService({ DOCSPLIT_PLUGINS: plugin, DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS: '1', DOCSPLIT_WEB_RATE_LIMIT_REQUESTS: '100000' })
  t.teardown(async () => { await service.stop() })
  const health = healthProber(service.url)
  const normal = async (what: string): Promise<void> => {
    const res = await post(service.url, { text: `an ordinary document after ${what}`, input_format: 'fault', max_tokens: 64 })
    t.equal(res.status, 200, `the next request succeeds after ${what}`)
    await res.arrayBuffer()
    const md = await post(service.url, { text: '# after\n\na markdown split on the same pool', max_tokens: 64 })
    t.equal(md.status, 200, 'and a built-in format too')
    await md.arrayBuffer()
  }
  await normal('start')
  for (const magic of ['THROW-IN-WORKER', 'EXIT-IN-WORKER', 'ASYNC-THROW', 'EXIT-IN-WORKER', 'THROW-IN-WORKER']) {
    await t.test(magic, async (t) => {
      const res = await post(service.url, { text: `${magic} ${CANARY}`, input_format: 'fault', filename: `${CANARY}.fault` })
      const text = await res.text()
      if (magic === 'ASYNC-THROW' && res.status === 200) {
        t.pass('the split finished before the thread died (the uncaught error came after the answer)')
      } else {
        t.equal(res.status, 500, 'a 500')
        t.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/)
        const body = JSON.parse(text) as { code: string, detail: string, type: string, title: string, status: number }
        t.equal(body.code, 'DOCSPLIT_INTERNAL')
        t.equal(body.status, 500)
        t.same(Object.keys(body).sort(), ['code', 'detail', 'status', 'title', 'type'], 'only the problem members')
        t.notMatch(text, new RegExp(`${CANARY}|/srv/|secret|fault\\.ts|\\bat \\S+:\\d+|exit code|process\\.exit|Error:`), 'no input, path, stack or error text in the body')
      }
      await normal(magic)
    })
  }
  // The file endpoint goes through the same pool.
  const form = new FormData()
  form.append('file', new Blob([`EXIT-IN-WORKER ${CANARY}`]), 'x.fault')
  const res = await fetch(service.url + FILE, { method: 'POST', body: form })
  t.equal(res.status, 500, 'file endpoint: a worker exit is a 500 too')
  t.notMatch(await res.text(), CANARY)
  await normal('a file upload that killed its worker')

  const probe = await health.stop()
  t.same(probe.failures, [], '/health answered 200 throughout')
  t.equal(service.process.exitCode, null, 'the service process stays up')
  const log = service.stdout() + service.stderr()
  t.notMatch(log, CANARY, 'no input or file name in the log')
  t.notMatch(log, /\/srv\/secret|\n\s+at /, 'no path or stack in the log')
  const internal = log.split('\n').filter((l) => /"code":"DOCSPLIT_INTERNAL"/.test(l))
  t.ok(internal.length >= 4, `each fault logged with its code (${internal.length} lines)`)
})
