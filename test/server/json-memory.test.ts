/**
 * JSON answers are held whole in the main process until sent: their total is bounded by
 * DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB. While it is used up, a split request that wants JSON is
 * refused (503 DOCSPLIT_OVERLOADED with Retry-After) before its split; splits that finish while
 * others are held are refused unless their answer fits; NDJSON is not counted. A closed
 * connection gives its answer's memory back.
 */
import { connect, type Socket } from 'node:net'
import t from 'tap'
import { TEXT, postJson, serve, waitFor, type ProblemJson, type Served } from './helpers.js'

/** About 400 KB of text that splits into some 9 MB of response at 16 tokens a chunk. */
const SOURCE = 'Some words \u{1f642}\u{1f642}\u{1f642}\u{1f642}\u{1f642}\u{1f642}\u{1f642}\u{1f642} in a line.\n'.repeat(8_000)
const BIG = JSON.stringify({ text: SOURCE, max_tokens: 16 })

interface RawClient { socket: Socket, status: Promise<number> }

/** Posts the big request on a raw socket and reads only up to the status line, then stops reading. */
function slowClient (s: Served): RawClient {
  const { hostname, port } = new URL(s.url)
  const socket = connect(Number(port), hostname)
  socket.on('error', () => {})
  const status = new Promise<number>((resolve) => {
    let head = ''
    const onData = (data: Buffer): void => {
      head += data.toString('latin1')
      const match = /^HTTP\/1\.1 (\d{3})/.exec(head)
      if (match === null) return
      socket.off('data', onData)
      socket.pause()
      resolve(Number(match[1]))
    }
    socket.on('data', onData)
    socket.once('close', () => { resolve(0) })
  })
  socket.write(`POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(BIG)}\r\n\r\n${BIG}`)
  return { socket, status }
}

t.test('a held JSON answer over the budget refuses new JSON splits until it is sent or dropped', async (t) => {
  const s = await serve({ maxConcurrentSplits: 2, jsonResponseMemoryMb: 1, maxBodyBytes: 4 * 1024 * 1024 })
  t.teardown(s.close)
  const slow = slowClient(s)
  t.teardown(() => { slow.socket.destroy() })
  t.equal(await slow.status, 200, 'one answer alone is sent, even one larger than the budget')

  const refused = await postJson(s.url + TEXT, { text: 'small', max_tokens: 16 })
  t.equal(refused.status, 503, 'a JSON split is refused while the budget is used up')
  t.ok(Number(refused.headers.get('retry-after')) >= 1, 'with Retry-After')
  const problem = await refused.json() as ProblemJson
  t.equal(problem.code, 'DOCSPLIT_OVERLOADED')
  t.match(problem.detail, /DOCSPLIT_WEB_JSON_RESPONSE_MEMORY_MB = 1\b/)
  t.match(problem.detail, /application\/x-ndjson/)

  const streamed = await postJson(s.url + TEXT, { text: 'small', max_tokens: 16 }, { accept: 'application/x-ndjson' })
  t.equal(streamed.status, 200, 'NDJSON is not refused')
  await streamed.text()

  slow.socket.destroy()
  await waitFor(async () => (await postJson(s.url + TEXT, { text: 'small', max_tokens: 16 })).status === 200, 10_000, 'the answer memory to be given back')
  t.pass('once the slow client is gone, JSON splits run again')
})

t.test('splits admitted together: only the answers that fit are held', async (t) => {
  const s = await serve({ maxConcurrentSplits: 2, maxQueuedSplits: 8, jsonResponseMemoryMb: 1, maxBodyBytes: 4 * 1024 * 1024, splitTimeoutSeconds: 60 })
  t.teardown(s.close)
  const clients = Array.from({ length: 4 }, () => slowClient(s))
  t.teardown(() => { for (const c of clients) c.socket.destroy() })
  const statuses = await Promise.all(clients.map(async (c) => await c.status))
  t.same(statuses.filter((x) => x === 200).length, 1, `one answer held, the rest refused (${statuses.join(', ')})`)
  t.same(statuses.filter((x) => x === 503).length, 3)
})
