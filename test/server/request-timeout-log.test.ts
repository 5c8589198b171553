/**
 * A request whose body arrives too slowly gets 408 written on its socket by the client error
 * handler (fastify's reply never finishes): its log line says 408, not 499.
 */
import { connect, type Socket } from 'node:net'
import { Writable } from 'node:stream'
import t from 'tap'
import { build } from '../../server/app.js'
import { TEXT, testPlugins, waitFor } from './helpers.js'

t.test('a 408 for a body too slow is logged as 408', async (t) => {
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
  // Headers and the start of the body; the rest never comes.
  client.write(`POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"text": "`)
  await waitFor(() => serverSockets.length === 1, 5000, 'the connection')
  await new Promise((resolve) => setTimeout(resolve, 300))
  // What Node does once requestTimeout (a minute) has passed.
  app.server.emit('clientError', Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), serverSockets[0])
  await waitFor(() => /^HTTP\/1\.1 408/.test(answer), 5000, 'the 408')
  await waitFor(() => logs.some((l) => /"path":"\/docsplit\/api\/split\/text"/.test(l)), 5000, 'the log line')
  await new Promise((resolve) => setTimeout(resolve, 200))
  const lines = logs.filter((l) => /"msg":"request"/.test(l))
  t.equal(lines.length, 1, 'one line')
  t.match(lines[0], /"status":408/, 'with status 408')
  t.notMatch(lines[0] ?? '', /"status":499/)
})
