/**
 * Every answer reaches the request log with the status the client got, including those made
 * before fastify sees a request (Node's parser: 400, 431; the 408s are in
 * request-timeout-log.test.ts), and Node's own bare answers (417 to an Expect it does not meet,
 * 400 to HTTP/1.1 without Host) are problem+json like every other error, as are the Host
 * headers Node lets through (two, or an invalid one). Raw sockets: this is about the HTTP layer.
 */
import t from 'tap'
import { TEXT, exchange, serve, waitFor } from './helpers.js'

const bigHeaders = Array.from({ length: 17 }, (_, i) => `X-H${i}: ${'a'.repeat(1000)}\r\n`).join('')

const cases: Array<[string, string, number, string, string]> = [
  ['headers over 16 KiB', `GET /health HTTP/1.1\r\nHost: x\r\n${bigHeaders}Connection: close\r\n\r\n`, 431, '(unknown)', '(unknown)'],
  ['a garbage request line', 'HELLO\r\n\r\n', 400, '(unknown)', '(unknown)'],
  ['Content-Length with Transfer-Encoding', `POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 12\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nc\r\n{"text":"a"}\r\n0\r\n\r\n`, 400, '(unknown)', '(unknown)'],
  ['HTTP/1.1 without Host', 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'GET', '/health'],
  ['two Host headers', 'GET /health HTTP/1.1\r\nHost: x\r\nhost: y\r\nConnection: close\r\n\r\n', 400, 'GET', '/health'],
  ['an invalid Host', 'GET /health HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n', 400, 'GET', '/health'],
  ['Expect: bogus', `POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: bogus\r\nContent-Length: 12\r\nConnection: close\r\n\r\n{"text":"a"}`, 417, 'POST', TEXT],
  ['a bad chunk size', `POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{"text":"a"}\r\n0\r\n\r\n`, 400, 'POST', TEXT],
  ['GET on a split route (405)', `GET ${TEXT} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`, 405, 'GET', TEXT],
  // Node destroys a CONNECT's socket unanswered when nobody listens for it.
  ['CONNECT (404)', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 404, 'CONNECT', '(no route)'],
  ['POST /health (405)', 'POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n', 405, 'POST', '/health'],
]

const requestLines = (logs: string[]): Array<Record<string, unknown>> =>
  logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request')

t.test('each answer is logged once, with the status sent', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1 })
  t.teardown(s.close)
  for (const [name, data, status, method, path] of cases) {
    const before = requestLines(s.logs).length
    const answer = await exchange(s.url, data)
    t.equal(answer.status, status, `${name}: ${status}`)
    t.match(answer.headers['content-type'], /^application\/problem\+json/, `${name}: a problem`)
    await waitFor(() => requestLines(s.logs).length > before, 5000, `${name} to be logged`)
    await new Promise((resolve) => setTimeout(resolve, 100))
    const lines = requestLines(s.logs).slice(before)
    t.equal(lines.length, 1, `${name}: one line`)
    t.match(lines[0], { method, path, status }, `${name}: logged as ${method} ${path} ${status}`)
    t.same(Object.keys(lines[0] ?? {}).filter((k) => !['level', 'time', 'msg'].includes(k)).sort(), ['duration_ms', 'method', 'path', 'status'], `${name}: nothing else`)
  }
})

t.test('Expect and Host: problem+json with a stable code; what Node allows still works', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1 })
  t.teardown(s.close)
  const expect = await exchange(s.url, 'GET /health HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\nConnection: close\r\n\r\n')
  t.equal(expect.status, 417)
  t.match(JSON.parse(expect.body), { status: 417, code: 'DOCSPLIT_EXPECTATION_FAILED', type: 'urn:docsplit:error:DOCSPLIT_EXPECTATION_FAILED' })
  const noHost = await exchange(s.url, 'GET /health HTTP/1.1\r\n\r\n')
  t.equal(noHost.status, 400)
  t.match(JSON.parse(noHost.body), { status: 400, code: 'DOCSPLIT_INVALID_REQUEST', detail: /Host/ })
  t.equal((await exchange(s.url, 'GET /health HTTP/1.0\r\n\r\n')).status, 200, 'HTTP/1.0 needs no Host')
  // RFC 9112 3.2: more than one Host, or one that is not host[:port], is a 400 too.
  for (const hosts of [['x', 'x'], ['x', 'y']]) {
    const twice = await exchange(s.url, `GET /health HTTP/1.1\r\n${hosts.map((h) => `Host: ${h}\r\n`).join('')}\r\n`)
    t.equal(twice.status, 400, `Host: ${hosts.join(', ')}`)
    t.match(JSON.parse(twice.body), { code: 'DOCSPLIT_INVALID_REQUEST', detail: /only one Host/ })
  }
  for (const host of ['a b', '[::1', '[::1]x', 'a@b', 'a:b', 'x:80x', 'a/b']) {
    const invalid = await exchange(s.url, `GET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`)
    t.equal(invalid.status, 400, `Host: ${host}`)
    t.equal(invalid.headers.connection, 'close', `Host: ${host}: the connection closes`)
    t.match(JSON.parse(invalid.body), { code: 'DOCSPLIT_INVALID_REQUEST', detail: /^the Host header must be host\[:port\]/ })
  }
  for (const host of ['example.com', 'example.com:8000', 'EXAMPLE.com', '127.0.0.1:80', '[::1]', '[::1]:8000', '[::ffff:127.0.0.1]', 'under_score.local', 'host:', '']) {
    t.equal((await exchange(s.url, `GET /health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)).status, 200, `Host: ${host}`)
  }
  const body = '{"text":"a b c"}'
  const continued = await exchange(s.url, `POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`)
  t.match(continued.raw, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /, 'Expect: 100-continue is met')
})

t.test('CONNECT: a 404 problem after the answers to the requests before it, then the connection closes', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1 })
  t.teardown(s.close)
  const connect = 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'
  const alone = await exchange(s.url, connect)
  t.equal(alone.status, 404)
  t.equal(alone.headers.connection, 'close')
  t.match(JSON.parse(alone.body), { status: 404, code: 'DOCSPLIT_NOT_FOUND', type: 'urn:docsplit:error:DOCSPLIT_NOT_FOUND', detail: /CONNECT is not served/ })
  // What follows the CONNECT would be a tunnel's bytes: not read as a request.
  const tunnel = await exchange(s.url, `${connect}GET /health HTTP/1.1\r\nHost: x\r\n\r\n`)
  t.equal(tunnel.raw.match(/HTTP\/1\.1 \d{3}/g)?.length, 1, 'one answer')
  // A split pipelined before it is answered first, and logged with its own status.
  const body = '{"text":"a b c","input_format":"spin","spin_ms":300}'
  const pipelined = await exchange(s.url, `POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}${connect}`)
  t.equal(pipelined.status, 200, 'the split first')
  t.match(pipelined.raw, /^HTTP\/1\.1 200 [^]*\r\n\r\n\{"schema_version"[^]*HTTP\/1\.1 404 Not Found\r\n[^]*"code":"DOCSPLIT_NOT_FOUND"\}$/, 'then the 404')
  await waitFor(() => requestLines(s.logs).length >= 4, 5000, 'the lines')
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.match(requestLines(s.logs), [{ method: 'CONNECT' }, { method: 'CONNECT' }, { method: 'POST', path: TEXT, status: 200 }, { method: 'CONNECT', path: '(no route)', status: 404 }])
  t.equal(requestLines(s.logs).length, 4, 'one line each, none for the tunnel\'s bytes')
})
