/**
 * Answers the client error handler writes on a socket once Node's request timeout passes (a
 * minute; emitted here): 408 to a body too slow, whose log line says 408, not 499 (fastify's
 * reply never finishes), and 408 to headers never finished, logged with method and path
 * unknown.
 */
import { connect, type Socket } from 'node:net'
import { Writable } from 'node:stream'
import t, { type Test } from 'tap'
import { build } from '../../server/app.js'
import { TEXT, testPlugins, waitFor } from './helpers.js'

/**
 * Sends `start` on a fresh connection, waits `waitMs`, times the request out as Node would,
 * and returns the request log lines once the 408 is written and logged.
 */
async function timedOut (t: Test, start: string, waitMs: number): Promise<{ lines: Array<Record<string, unknown>> }> {
  const logs: string[] = []
  const logStream = new Writable({ write (chunk: Buffer, _enc, done) { logs.push(...chunk.toString('utf8').split('\n').filter((l) => l !== '')); done() } })
  const app = await build({ plugins: testPlugins(), logStream })
  t.teardown(async () => { await app.close() })
  const serverSockets: Socket[] = []
  app.server.on('connection', (socket: Socket) => { serverSockets.push(socket) })
  const url = new URL(await app.listen({ host: '127.0.0.1', port: 0 }))
  const client = connect(Number(url.port), url.hostname)
  client.on('error', () => {})
  t.teardown(() => { client.destroy() })
  let answer = ''
  client.on('data', (d: Buffer) => { answer += d.toString('latin1') })
  client.write(start)
  await waitFor(() => serverSockets.length === 1, 5000, 'the connection')
  await new Promise((resolve) => setTimeout(resolve, waitMs))
  app.server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), serverSockets[0])
  const requestLines = (): Array<Record<string, unknown>> => logs.filter((l) => /"msg":"request"/.test(l)).map((l) => JSON.parse(l) as Record<string, unknown>)
  await waitFor(() => /^HTTP\/1\.1 408/.test(answer), 5000, 'the 408')
  await waitFor(() => requestLines().length > 0, 5000, 'the log line')
  // Time for a second line, should one (wrongly) follow.
  await new Promise((resolve) => setTimeout(resolve, 200))
  return { lines: requestLines() }
}

t.test('a 408 for a body too slow is logged as 408', async (t) => {
  // Headers and the start of the body; the rest never comes.
  const { lines } = await timedOut(t, `POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"text": "`, 300)
  t.match(lines, [{ method: 'POST', path: TEXT, status: 408 }], 'one line, with status 408, not 499')
})

t.test('a 408 to a connection that never finished its headers is logged', async (t) => {
  const { lines } = await timedOut(t, 'GET /health HTTP/1.1\r\nHost: x\r\nX-Half: ', 200)
  t.match(lines, [{ method: '(unknown)', path: '(unknown)', status: 408 }], 'one line, method and path unknown')
  t.ok(Number(lines[0]?.duration_ms) >= 150, 'timed from when the connection began to wait')
})
