/**
 * Privacy rules, each checked on what the service really does:
 * - request log lines hold exactly method, path (no query string), status and duration;
 * - no header, body, option, file name, client address or error text reaches the log;
 * - multipart uploads stay in memory: nothing is written to the temp directory.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { FILE, TEXT, postFile, postJson, repoRoot, serve } from './helpers.js'

const SECRET = 'opal-heron-5519'

t.test('log lines hold only method, path, status and duration', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1, maxBodyBytes: 2048 })
  t.teardown(s.close)
  const headers = { authorization: `Bearer ${SECRET}`, cookie: `session=${SECRET}`, 'x-forwarded-for': '203.0.113.9', 'user-agent': `agent-${SECRET}` }
  const statuses = [
    await postJson(`${s.url}${TEXT}?token=${SECRET}`, { text: `# ${SECRET}\n\nbody ${SECRET}`, max_tokens: 64, filename: `${SECRET}.md` }, headers),
    await postJson(s.url + TEXT, { text: `${SECRET} `.repeat(400) }, headers),
    await postJson(s.url + TEXT, { text: SECRET, max_tokens: 1 }, headers),
    await postJson(s.url + TEXT, { text: SECRET, input_format: 'spin', spin_crash: true }, headers),
    await postJson(s.url + TEXT, `{"text": "${SECRET}`, headers),
    await postFile(s.url + FILE, `${SECRET}\n`, `${SECRET}.txt`, { max_tokens: '32' }, headers),
    await postFile(s.url + FILE, `${SECRET}\n`.repeat(300), `${SECRET}.txt`, {}, headers),
    await fetch(`${s.url}/health?${SECRET}=1`, { headers }),
    await fetch(`${s.url}/nothing-here?q=${SECRET}`, { headers }),
    // Refused before routing: a path that does not decode.
    await fetch(`${s.url}/%ff${SECRET}`, { headers }),
  ].map((r) => r.status)
  t.same(statuses, [200, 413, 400, 500, 400, 200, 413, 200, 404, 400], 'the requests did what they should')
  await new Promise((resolve) => setTimeout(resolve, 100))
  const lines = s.logs.map((l) => JSON.parse(l) as Record<string, unknown>)
  const requests = lines.filter((l) => l.msg === 'request')
  t.equal(requests.length, statuses.length, 'one line per request')
  for (const line of requests) {
    t.same(Object.keys(line).sort(), ['duration_ms', 'level', 'method', 'msg', 'path', 'status', 'time'], 'exactly these fields')
    t.notMatch(String(line.path), /\?/, 'no query string')
    t.type(line.duration_ms, 'number')
  }
  t.same(requests.map((l) => l.status), statuses, 'statuses logged')
  t.same(requests.map((l) => l.path).slice(0, 3), [TEXT, TEXT, TEXT])
  t.same(requests.map((l) => l.path).slice(-2), ['(no route)', '(invalid path)'], 'client paths that match nothing are not logged')
  for (const raw of s.logs) {
    if (/Server listening at/.test(raw)) continue
    t.notMatch(raw, SECRET, 'no document text, option, file name, header or query value')
    t.notMatch(raw, /127\.0\.0\.1|203\.0\.113\.9|remoteAddress|hostname/, 'no client address')
    t.notMatch(raw, /authorization|cookie|user-agent|content-type|headers/i, 'no headers')
    t.notMatch(raw, /\n\s+at |stack|\/srv\/|internal\.ts|failed at/, 'no stack or error text')
  }
  const internal = lines.filter((l) => l.msg === 'unexpected error')
  t.equal(internal.length, 1, 'the internal error is logged once, without its message')
  t.same(Object.keys(internal[0] ?? {}).sort(), ['code', 'error_class', 'level', 'msg', 'part', 'time'])
  t.equal(internal[0]?.error_class, 'Error', 'the class of what the plugin threw, for debugging')
  t.equal(internal[0]?.part, 'spin parser', 'and which plugin threw it: of several, which one broke')
})

t.test('an absolute-form request target is logged as its path only', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1 })
  t.teardown(s.close)
  const { hostname, port } = new URL(s.url)
  const answer = await new Promise<string>((resolve) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET http://user:${SECRET}@evil.example/health?q=${SECRET} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    })
    let text = ''
    socket.on('data', (d: Buffer) => { text += d.toString() })
    socket.on('close', () => { resolve(text) })
    socket.on('error', () => {})
  })
  t.match(answer, /^HTTP\/1\.1 200/, 'answered')
  await new Promise((resolve) => setTimeout(resolve, 100))
  const requests = s.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request')
  t.same(requests.map((l) => l.path), ['/health'], 'the path, without scheme, user, password or host')
  t.notMatch(s.logs.join('\n'), new RegExp(`${SECRET}|evil`), 'nothing of the authority logged')
})

t.test('multipart uploads are never written to disk', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'docsplit-upload-'))
  const before = process.env.TMPDIR
  process.env.TMPDIR = dir
  t.teardown(() => {
    if (before === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = before
    rmSync(dir, { recursive: true, force: true })
  })
  t.equal(tmpdir(), dir, 'temp directory redirected for this test')
  const s = await serve({ maxConcurrentSplits: 1 })
  t.teardown(s.close)
  const big = `${SECRET} paragraph of words.\n\n`.repeat(20_000)
  const res = await postFile(s.url + FILE, big, 'big.txt', { max_tokens: '512' })
  t.equal(res.status, 200)
  await res.arrayBuffer()
  // The test runner's TypeScript loaders (tsx, and tap's ts-node through v8-compile-cache-lib)
  // keep compile caches there, named after themselves: they are not the service.
  const loaderCaches = /^(tsx-|v8-compile-cache-)/
  t.same(readdirSync(dir).filter((name) => !loaderCaches.test(name)), [], 'nothing written to the temp directory')
  const source = readFileSync(join(repoRoot, 'server/routes/split-file.ts'), 'utf8')
  t.notMatch(source, /saveRequestFiles|tmpdir|writeFile|createWriteStream/, 'the route has no disk path at all')
})
