/**
 * Clients that stop reading their answer, through real sockets: the connection is closed once
 * nothing has moved for the split budget plus DOCSPLIT_WEB_IDLE_TIMEOUT_SECONDS, not twice that
 * (the answer is freed, the request logged as 499); an NDJSON stream runs ahead of its client
 * only into the answer memory (then the worker waits instead). A client that reads slowly gets
 * the whole answer, and a split longer than the idle time is not cut.
 */
import { connect, type Socket } from 'node:net'
import t from 'tap'
import { sliced } from '../../server/split-reply.js'
import { TEXT, postJson, serve, waitFor, type Served } from './helpers.js'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** About 400 KB of text (emoji included) that splits into some 9 MB of response at 16 tokens a chunk. */
const SOURCE = 'Some words \u{1f642}\u{1f642}\u{1f642}\u{1f642}\u{1f642}\u{1f642}\u{1f642}\u{1f642} in a line.\n'.repeat(8_000)
const BIG = JSON.stringify({ text: SOURCE, max_tokens: 16 })

/** Sends the big split request on a raw socket; the caller decides whether to read. */
function request (s: Served, accept: string): Socket {
  const { hostname, port } = new URL(s.url)
  const socket = connect(Number(port), hostname)
  socket.on('error', () => {})
  socket.write(`POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: ${accept}\r\nContent-Length: ${Buffer.byteLength(BIG)}\r\n\r\n${BIG}`)
  return socket
}

const abandoned = (s: Served): number => s.logs.filter((l) => /"status":499/.test(l)).length

t.test('a client that stops reading is cut off after the split budget plus the idle time; the stream waits for it', async (t) => {
  // The split takes about a second on a quiet machine and several on a loaded one: its budget
  // leaves room for that (a split stopped by its budget answers a short 503, which no client
  // stalls on). Each kind of answer has its own service, and the two run at once.
  const splitSeconds = 10
  const idleMs = (splitSeconds + 1) * 1000
  const services: Served[] = []
  // One at a time: the services of one process register their plugins in turn. The NDJSON
  // one has 1 MB of answer memory: too little for its lines to wait in, so its client holds
  // the split back (the next test gives them room).
  for (let i = 0; i < 2; i++) {
    const s = await serve({ maxConcurrentSplits: 1, maxQueuedSplits: 0, splitTimeoutSeconds: splitSeconds, idleTimeoutSeconds: 1, maxBodyBytes: 4 * 1024 * 1024, jsonResponseMemoryMb: i === 0 ? 512 : 1 })
    t.teardown(s.close)
    services.push(s)
  }
  await Promise.all(['application/json', 'application/x-ndjson'].map(async (accept, i) => {
    const s = services[i]!
    const socket = request(s, accept)
    t.teardown(() => { socket.destroy() })
    // The client takes the first bytes of its answer, then no more: from here nothing moves
    // but what the buffers between the two still take.
    const [stalled, head] = await new Promise<[number, string]>((resolve) => {
      socket.once('data', (data: Buffer) => {
        socket.pause()
        resolve([performance.now(), data.subarray(0, 12).toString('latin1')])
      })
    })
    t.equal(head, 'HTTP/1.1 200', `${accept}: the answer began (the split ended within its budget)`)
    if (accept === 'application/x-ndjson') {
      // The split alone takes about a second; held back by its client it runs to its budget.
      await sleep(1000)
      const busy = await postJson(s.url + TEXT, { text: 'meanwhile' })
      t.equal(busy.status, 503, 'the stream does not run ahead of a client that does not read')
      await busy.arrayBuffer()
    }
    await waitFor(() => abandoned(s) > 0, 3 * idleMs, `the stalled ${accept} connection to be closed`)
    // Node's own socket timeout waited twice the time (a pending write partly taken counted as progress).
    const seconds = (performance.now() - stalled) / 1000
    t.ok(seconds >= idleMs / 1000 - 0.5 && seconds < idleMs / 1000 * 1.5, `${accept}: cut off ${seconds.toFixed(1)} s after the client stopped reading (logged as 499), not twice ${idleMs / 1000} s`)
    const next = await postJson(s.url + TEXT, { text: 'next' })
    t.equal(next.status, 200, `${accept}: the service carries on`)
    await next.arrayBuffer()
  }))
})

t.test('an NDJSON client slower than its split: its lines wait in the answer memory, the split ends and frees its worker', async (t) => {
  // The split takes about a second; the client reads nothing for longer than the split's budget.
  const splitSeconds = 8
  const s = await serve({ maxConcurrentSplits: 1, maxQueuedSplits: 0, splitTimeoutSeconds: splitSeconds, idleTimeoutSeconds: 30, maxBodyBytes: 4 * 1024 * 1024 })
  t.teardown(s.close)
  const socket = request(s, 'application/x-ndjson')
  t.teardown(() => { socket.destroy() })
  const parts: Buffer[] = []
  await new Promise<void>((resolve) => {
    socket.once('data', (data: Buffer) => {
      socket.pause()
      parts.push(data)
      resolve()
    })
  })
  // The worker is free while the client still reads nothing: another split is answered.
  await waitFor(async () => (await postJson(s.url + TEXT, { text: 'meanwhile' })).status === 200, splitSeconds * 1000, 'the worker to be free again')
  await sleep(splitSeconds * 1000 + 500)
  socket.on('data', (data: Buffer) => { parts.push(data) })
  socket.resume()
  await new Promise<void>((resolve) => {
    const done = (): void => { resolve() }
    socket.on('close', done)
    socket.on('end', done)
    // A chunked answer ends with its last, empty chunk.
    socket.on('data', () => { if (Buffer.concat(parts.slice(-2)).toString('latin1').endsWith('0\r\n\r\n')) resolve() })
  })
  const raw = Buffer.concat(parts).toString('utf8')
  const lines = raw.slice(raw.indexOf('\r\n\r\n') + 4).split('\r\n').filter((_, i) => i % 2 === 1).join('').trimEnd().split('\n')
  const last = JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>
  t.equal(last.error, undefined, 'no DOCSPLIT_TIMEOUT though the client read after the split\'s budget')
  const chunks = lines.slice(1, -1).map((l) => (JSON.parse(l) as { text: string }).text)
  t.equal(chunks.join(''), SOURCE, 'every chunk came, in order')
})

t.test('NDJSON lines that wait for a client use half the answer memory at most: JSON answers keep the other half', async (t) => {
  const s = await serve({ maxConcurrentSplits: 2, splitTimeoutSeconds: 10, idleTimeoutSeconds: 30, maxBodyBytes: 4 * 1024 * 1024, jsonResponseMemoryMb: 4 })
  t.teardown(s.close)
  const socket = request(s, 'application/x-ndjson')
  t.teardown(() => { socket.destroy() })
  await new Promise<void>((resolve) => { socket.once('data', () => { socket.pause(); resolve() }) })
  // Some 9 MB of lines, most past what the kernel's buffers take: the client holds its split
  // back once 2 MB wait here, and a JSON answer still has room.
  await sleep(2000)
  const json = await postJson(s.url + TEXT, { text: 'x'.repeat(100_000), max_tokens: 8 })
  t.equal(json.status, 200, 'a JSON split is answered while the NDJSON client reads nothing')
  t.ok((await json.arrayBuffer()).byteLength > 1024 * 1024, 'an answer of more than a megabyte')
})

t.test('a client that reads slowly gets the whole answer', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1, splitTimeoutSeconds: 10, idleTimeoutSeconds: 1, maxBodyBytes: 4 * 1024 * 1024 })
  t.teardown(s.close)
  // Read a megabyte, pause 400 ms, and so on: the whole transfer takes longer than the idle
  // limit, though no pause does.
  const socket = request(s, 'application/json')
  t.teardown(() => { socket.destroy() })
  const parts: Buffer[] = []
  let size = 0
  let expected = Infinity
  await new Promise<void>((resolve) => {
    socket.on('data', (data: Buffer) => {
      parts.push(data)
      if (Math.floor((size + data.length) / 1e6) > Math.floor(size / 1e6)) {
        socket.pause()
        setTimeout(() => socket.resume(), 400)
      }
      size += data.length
      if (expected === Infinity) {
        const start = Buffer.concat(parts).toString('latin1')
        const head = start.indexOf('\r\n\r\n')
        if (head !== -1) expected = head + 4 + Number(/content-length: (\d+)/i.exec(start.slice(0, head))?.[1])
      }
      if (size >= expected) resolve()
    })
    socket.on('close', () => { resolve() })
  })
  const raw = Buffer.concat(parts)
  t.equal(raw.length, expected, 'every byte arrived')
  const text = raw.subarray(raw.indexOf('\r\n\r\n') + 4).toString('utf8')
  const response = JSON.parse(text) as { chunks: Array<{ text: string }> }
  t.ok(response.chunks.length > 10_000, `all ${response.chunks.length} chunks arrived`)
  t.ok(response.chunks.map((c) => c.text).join('') === SOURCE, 'lossless, emoji intact across slice boundaries')
})

t.test('a split that runs longer than the idle time is not cut', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1, splitTimeoutSeconds: 5, idleTimeoutSeconds: 1 })
  t.teardown(s.close)
  for (const accept of ['application/json', 'application/x-ndjson']) {
    const res = await postJson(s.url + TEXT, { text: 'slow', input_format: 'spin', spin_ms: 2500 }, { accept })
    t.equal(res.status, 200, `${accept}: answered after 2.5 s of silence`)
    t.match(await res.text(), /slow/)
  }
})

t.test('a long answer is sent in slices of its bytes, all of them in order', async (t) => {
  for (const text of ['a'.repeat(65_535) + '\u{1f642}b', '\u{1f642}'.repeat(100_000), 'short']) {
    const encoded = new TextEncoder().encode(text)
    // A view into a larger buffer, as a moved answer may be.
    const inside = new Uint8Array(encoded.length + 10)
    inside.set(encoded, 5)
    const view = inside.subarray(5, 5 + encoded.length)
    const bytes: Buffer[] = []
    for await (const slice of sliced(view)) bytes.push(slice as Buffer)
    t.ok(Buffer.concat(bytes).equals(Buffer.from(text)), `${bytes.length} slices, the same UTF-8 bytes`)
    t.ok(bytes.every((b) => b.length <= 64 * 1024), 'each slice at most 64 KiB')
  }
})
