/**
 * Limits through real HTTP: a split past its budget is stopped (503) and its worker really
 * stops burning CPU, the next split works; the queue bound (503 with Retry-After); health answers
 * while every worker is busy; the rate limit (429 with Retry-After and RateLimit-* headers) on
 * split routes only.
 */
import { connect, type Socket } from 'node:net'
import t from 'tap'
import { FILE, TEXT, postFile, postJson, serve, startChild, startScript, waitFor, type ProblemJson } from './helpers.js'
import { split } from '../../index.js'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** CPU time of this process (main thread and workers) per wall-clock ms over `ms`. */
async function cpuShare (ms: number): Promise<number> {
  const before = process.cpuUsage()
  const start = performance.now()
  await sleep(ms)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000 / (performance.now() - start)
}

t.test('timeout: a split past its budget is stopped and the next one works', async (t) => {
  const s = await serve({ maxConcurrentSplits: 2, splitTimeoutSeconds: 1 })
  t.teardown(s.close)
  const res = await postJson(s.url + TEXT, { text: 'spin forever', input_format: 'spin', spin_ms: 600_000 })
  t.equal(res.status, 503)
  const body = await res.json() as ProblemJson
  t.equal(body.code, 'DOCSPLIT_TIMEOUT')
  t.match(body.detail, /budget of 1 s \(DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS\) and was stopped; send a smaller document/, 'busy in its own work: the advice')
  const next = await postJson(s.url + TEXT, { text: 'quick one', input_format: 'spin' })
  t.equal(next.status, 200, 'the next split works')
  // A worker still spinning would use a whole core; a stopped one uses none.
  await sleep(3000)
  const share = await cpuShare(1500)
  t.ok(share < 0.6, `the spinning worker was stopped (CPU share ${share.toFixed(2)})`)
  const after = await postFile(s.url + FILE, 'file after timeout', 'a.spin')
  t.equal(after.status, 200, 'and splits keep working')
})

t.test('timeout while a plugin step never finishes: the detail and the log name the step, not the document size', async (t) => {
  const s = await serve({ maxConcurrentSplits: 2, splitTimeoutSeconds: 1 })
  t.teardown(s.close)
  for (const accept of ['application/json', 'application/x-ndjson']) {
    const res = await postJson(s.url + TEXT, { text: 'stall', input_format: 'spin', spin_stall: true }, { accept })
    t.equal(res.status, 503, accept)
    const body = await res.json() as ProblemJson
    t.equal(body.code, 'DOCSPLIT_TIMEOUT')
    t.match(body.detail, /budget of 1 s \(DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS\) waiting for the spin parser's create\(\) to finish, and was stopped$/)
    t.notMatch(body.detail, /smaller document/)
  }
  await sleep(100)
  const warned = s.logs.filter((l) => /"part":"the spin parser's create\(\)"/.test(l))
  t.equal(warned.length, 2, 'each logged with the step')
  t.match(warned[0], /"code":"DOCSPLIT_TIMEOUT"/)
  t.notMatch(warned.join('\n'), /stall/, 'and nothing of the document')
})

t.test('timeout in NDJSON before any chunk: a problem response, not a stream', async (t) => {
  // Two workers: the next split runs on the warm one while the stopped one is replaced.
  const s = await serve({ maxConcurrentSplits: 2, splitTimeoutSeconds: 1 })
  t.teardown(s.close)
  const res = await postJson(s.url + TEXT, { text: 'spin', input_format: 'spin', spin_ms: 600_000 }, { accept: 'application/x-ndjson' })
  t.equal(res.status, 503)
  t.equal((await res.json() as ProblemJson).code, 'DOCSPLIT_TIMEOUT')
  t.equal((await postJson(s.url + TEXT, { text: 'quick', input_format: 'spin' })).status, 200, 'the next split works')
})

t.test('timeout in NDJSON after the first chunk: the stream ends with the error line, logged with its status', async (t) => {
  const s = await serve({ maxConcurrentSplits: 2, splitTimeoutSeconds: 1 })
  t.teardown(s.close)
  const text = 'alpha beta gamma delta epsilon.\n\nzeta eta theta iota kappa.\n\nlambda mu nu xi omicron.\n\nthe last one.'
  const res = await postJson(s.url + TEXT, { text, input_format: 'spin', spin_ms: 600_000, spin_midway: true, max_tokens: 10 }, { accept: 'application/x-ndjson' })
  t.equal(res.status, 200, 'the stream had begun')
  const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
  t.ok(lines.length >= 3, 'a header, chunks, then the error')
  t.match(lines.at(-1), { error: { code: 'DOCSPLIT_TIMEOUT', status: 503, detail: /no time limit$/ } })
  await sleep(100)
  const logged = s.logs.filter((l) => /"path":"\/docsplit\/api\/split\/text"/.test(l))
  t.match(logged.at(-1), /"status":503/, 'logged as the failure it was, not the 200 sent')
})

t.test('a client that goes away cancels its split and frees the worker', async (t) => {
  // One worker and no queue: while the abandoned split still ran, any other split would be
  // refused at once with 503 DOCSPLIT_OVERLOADED.
  const s = await serve({ maxConcurrentSplits: 1, maxQueuedSplits: 0, splitTimeoutSeconds: 120 })
  t.teardown(s.close)
  for (const accept of ['application/json', 'application/x-ndjson']) {
    const gone = new AbortController()
    const request = fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify({ text: 'long', input_format: 'spin', spin_ms: 600_000 }), signal: gone.signal })
    await sleep(500)
    const busy = await postJson(s.url + TEXT, { text: 'meanwhile', input_format: 'spin' })
    t.equal(busy.status, 503, `while the ${accept} split runs, another is refused`)
    gone.abort()
    await request.then(() => {}, () => {})
    await sleep(300)
    const next = await postJson(s.url + TEXT, { text: 'next', input_format: 'spin' })
    t.equal(next.status, 200, `once the ${accept} client has gone, the next split runs`)
  }
  await sleep(100)
  t.equal(s.logs.filter((l) => /"status":499/.test(l)).length, 2, 'each abandoned request logged once, as 499')
})

t.test('memory: a split past the worker memory limit is a 422 and the worker is replaced', async (t) => {
  // Not the lowest limit, 64: under tap a worker also loads the test runner's TypeScript hooks,
  // which took 44-52 MB before any split, and a start that ran out of it failed this test.
  const s = await serve({ maxConcurrentSplits: 2, workerMaxMemoryMb: 128 })
  t.teardown(s.close)
  const res = await postJson(s.url + TEXT, { text: 'hog', input_format: 'spin', spin_hog: true })
  t.equal(res.status, 422)
  const body = await res.json() as ProblemJson
  t.equal(body.code, 'DOCSPLIT_LIMIT_EXCEEDED')
  t.match(body.detail, /DOCSPLIT_WEB_WORKER_MAX_MEMORY_MB = 128/)
  t.equal((await postJson(s.url + TEXT, { text: 'quick', input_format: 'spin' })).status, 200, 'the next split works')
  // NDJSON: the worker's port closes before the task's rejection says why; the reason decides.
  const streamed = await fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' }, body: JSON.stringify({ text: 'hog', input_format: 'spin', spin_hog: true }) })
  t.equal(streamed.status, 422, 'asked for NDJSON: a 422 as well')
  t.equal((await streamed.json() as ProblemJson).code, 'DOCSPLIT_LIMIT_EXCEEDED')
})

t.test('a JSON answer past an eighth of the worker memory is a 422 asking for NDJSON, which still streams it', async (t) => {
  // 128 MB of worker heap: JSON answers up to 16 MB. A log line of 6 tokens at max_tokens 8 is
  // a chunk of about 330 characters of JSON per 24 of input: 60,000 lines (1.4 MB), some 20 MB.
  const s = await serve({ maxConcurrentSplits: 1, workerMaxMemoryMb: 128 })
  t.teardown(s.close)
  const lines = Array.from({ length: 60_000 }, (_, i) => `l${i} alpha beta gamma`).join('\n') + '\n'
  const json = await postJson(s.url + TEXT, { text: lines, input_format: 'log', max_tokens: 8 })
  t.equal(json.status, 422)
  const body = await json.json() as ProblemJson
  t.equal(body.code, 'DOCSPLIT_LIMIT_EXCEEDED')
  t.match(body.detail, /the JSON answer would be larger than 16 MB .*ask for NDJSON/)
  const streamed = await fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' }, body: JSON.stringify({ text: lines, input_format: 'log', max_tokens: 8 }) })
  t.equal(streamed.status, 200)
  const answer = (await streamed.text()).trimEnd().split('\n')
  t.equal((JSON.parse(answer.at(-1)!) as { chunk_count: number }).chunk_count, answer.length - 2, 'every chunk, streamed')
  // Under the cap, the answer is the library's, byte for byte.
  const small = '<r>' + '<a>x'.repeat(500) + '</a>'.repeat(500) + '</r>'
  const whole = await postJson(s.url + TEXT, { text: small, input_format: 'xml', max_tokens: 8 })
  t.equal(await whole.text(), JSON.stringify(await split(small, { input_format: 'xml', max_tokens: 8 })))
})

t.test('queue bound: past it 503 with Retry-After; health answers while both workers are busy', async (t) => {
  const s = await serve({ maxConcurrentSplits: 2, maxQueuedSplits: 1, splitTimeoutSeconds: 20 })
  t.teardown(s.close)
  const slow = (): Promise<Response> => postJson(s.url + TEXT, { text: 'slow', input_format: 'spin', spin_ms: 3000 })
  const running = [slow(), slow()]
  await sleep(300)
  const queued = slow()
  await sleep(300)
  const rejected = await slow()
  t.equal(rejected.status, 503, 'a fourth split is refused: two running, one waiting')
  t.equal((await rejected.json() as ProblemJson).code, 'DOCSPLIT_OVERLOADED')
  t.match(rejected.headers.get('retry-after'), /^\d+$/, 'Retry-After given')
  for (const path of ['/health', '/docsplit/api/health', '/version']) {
    const health = await fetch(s.url + path)
    t.equal(health.status, 200, `${path} answers while both workers are busy`)
  }
  t.same(await Promise.all(running.map(async (r) => (await r).status)), [200, 200], 'the running splits complete')
  t.equal((await queued).status, 200, 'the queued split completes')
})

t.test('rate limit: 429 on split routes after N requests, never on health, version, docs', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1, rateLimitRequests: 3, rateLimitWindowSeconds: 60 })
  t.teardown(s.close)
  for (let i = 1; i <= 3; i++) {
    const res = i === 2 ? await postFile(s.url + FILE, 'x', 'a.txt') : await postJson(s.url + TEXT, { text: `request ${i}` })
    t.equal(res.status, 200, `request ${i} allowed`)
    t.equal(res.headers.get('ratelimit-limit'), '3')
    t.equal(res.headers.get('ratelimit-remaining'), String(3 - i))
    await res.arrayBuffer()
  }
  for (const send of [() => postJson(s.url + TEXT, { text: 'four' }), () => postFile(s.url + FILE, 'x', 'a.txt')]) {
    const limited = await send()
    t.equal(limited.status, 429, 'over the limit, both split routes share one count')
    t.match(limited.headers.get('content-type'), /^application\/problem\+json/)
    t.equal((await limited.json() as ProblemJson).code, 'DOCSPLIT_RATE_LIMITED')
    const retry = Number(limited.headers.get('retry-after'))
    t.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`)
    t.equal(limited.headers.get('ratelimit-remaining'), '0')
    t.match(limited.headers.get('ratelimit-reset'), /^\d+$/)
  }
  for (let i = 0; i < 10; i++) {
    for (const path of ['/health', '/docsplit/api/health', '/version', '/docsplit/api/version', '/docs', '/docs/static/swagger-ui.css', '/openapi.json']) {
      const res = await fetch(s.url + path)
      t.equal(res.status, 200, `${path} never limited`)
      await res.arrayBuffer()
    }
  }
})

t.test('rate limit: refusals before the body is read count too and carry the headers (415, 413, options in the query string)', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1, rateLimitRequests: 10, rateLimitWindowSeconds: 60, maxBodyBytes: 1000 })
  t.teardown(s.close)
  const form = new FormData()
  form.append('file', new Blob(['x'.repeat(5000)]), 'big.txt')
  const sends: Array<[string, number, string, () => Promise<Response>]> = [
    ['text as text/plain', 415, 'DOCSPLIT_UNSUPPORTED_MEDIA_TYPE', () => fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' })],
    ['a file over the limit by its Content-Length', 413, 'DOCSPLIT_INPUT_TOO_LARGE', () => fetch(s.url + FILE, { method: 'POST', body: form })],
    ['options in the query string (text)', 400, 'DOCSPLIT_INVALID_REQUEST', () => postJson(s.url + TEXT + '?max_tokens=8', { text: 'one two three' })],
    ['options in the query string (file)', 400, 'DOCSPLIT_INVALID_REQUEST', () => postFile(s.url + FILE + '?max_tokens=8', 'x', 'a.txt')],
  ]
  let remaining = 10
  for (const [name, status, code, send] of sends) {
    const res = await send()
    t.equal(res.status, status, name)
    t.equal((await res.json() as ProblemJson).code, code, `${name}: ${code}`)
    t.equal(res.headers.get('ratelimit-remaining'), String(--remaining), `${name}: counted, with the rate limit's headers`)
  }
  const otherQuery = await postJson(s.url + TEXT + '?api_key=k', { text: 'a' })
  t.equal(otherQuery.status, 200, 'a query parameter that names no option (a gateway\'s key) is left alone')
  const anyCase = await postJson(s.url + TEXT + '?Max_Tokens=8', { text: 'a' })
  t.equal(anyCase.status, 400, 'an option name in any case is refused')
})

t.test('rate limit behind proxies: each X-Forwarded-For client has its own count, by hop count or address', async (t) => {
  for (const trustProxy of [1, '127.0.0.1'] as const) {
    const s = await serve({ maxConcurrentSplits: 1, rateLimitRequests: 1, rateLimitWindowSeconds: 60, trustProxy })
    const send = (client: string): Promise<Response> => fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': client }, body: JSON.stringify({ text: 'a' }) })
    const statuses = []
    for (const client of ['198.51.100.1', '198.51.100.2', '198.51.100.1']) {
      const res = await send(client)
      statuses.push(res.status)
      await res.arrayBuffer()
    }
    t.same(statuses, [200, 200, 429], `DOCSPLIT_TRUST_PROXY=${trustProxy}: two clients, then the first again`)
    await s.close()
  }
})

t.test('rate limit: a client that resets right after its headers is no internal error', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1 })
  t.teardown(s.close)
  const { hostname, port } = new URL(s.url)
  for (const path of [TEXT, FILE]) {
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n`)
        socket.resetAndDestroy()
        resolve()
      })
      socket.on('error', () => {})
    })
  }
  await waitFor(() => s.logs.filter((l) => /"msg":"request"/.test(l)).length >= 2, 5000, 'both requests to be logged')
  await sleep(200)
  t.notMatch(s.logs.join('\n'), /unexpected error|DOCSPLIT_INTERNAL|"status":500/, 'no internal error logged')
  t.equal((await postJson(s.url + TEXT, { text: 'after' })).status, 200, 'the service carries on')
})

t.test('a body just over the limit gets its 413, not a reset connection, while the client still sends', async (t) => {
  // The service in its own process, as clients meet it: in this one, the client and the server
  // share an event loop and the race never shows.
  const child = startChild(process.execPath, ['--import', 'tsx', startScript], { PORT: '0', DOCSPLIT_WEB_MAX_BODY_BYTES: String(5 * 1024 * 1024), DOCSPLIT_PLUGINS: '' })
  t.teardown(() => { child.process.kill() })
  await waitFor(() => /^listening (\S+)$/m.test(child.stdout()), 30_000, 'the service to start')
  const url = /^listening (\S+)$/m.exec(child.stdout())![1]!
  const body = `{"text":"${'a'.repeat(5 * 1024 * 1024)}"}`
  const outcomes: string[] = []
  for (let i = 0; i < 10; i++) {
    try {
      const res = await postJson(url + TEXT, body)
      outcomes.push(String(res.status))
      await res.arrayBuffer()
    } catch (error) {
      outcomes.push(String((error as { cause?: { code?: string } }).cause?.code ?? error))
    }
  }
  t.same(outcomes, Array(10).fill('413'), 'every attempt reads the 413')
})

/** A multipart body of `parts` ([name, content, file name or none for a plain field]). */
function formBody (boundary: string, parts: Array<[string, string, string?]>): Buffer {
  const pieces = parts.map(([name, content, filename]) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename === undefined ? '' : `; filename="${filename}"`}\r\n\r\n${content}\r\n`)
  return Buffer.from(`${pieces.join('')}--${boundary}--\r\n`)
}

/** Reads one response (headers and a Content-Length body) off a kept-alive socket. */
function nextAnswer (socket: Socket): Promise<{ status: number, body: string }> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0)
    const onData = (data: Buffer): void => {
      received = Buffer.concat([received, data])
      const head = received.indexOf('\r\n\r\n')
      if (head < 0) return
      const headers = received.subarray(0, head).toString('latin1')
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? 0)
      if (received.length < head + 4 + length) return
      socket.off('data', onData)
      socket.off('close', onClose)
      resolve({ status: Number(headers.slice(9, 12)), body: received.subarray(head + 4, head + 4 + length).toString('utf8') })
    }
    const onClose = (): void => { reject(new Error('the connection closed without an answer')) }
    socket.on('data', onData)
    socket.once('close', onClose)
  })
}

t.test('a form refused mid-body (a second file, a field given twice) is answered at once, and the connection carries on', async (t) => {
  // The refusal reads and drops the rest of the body for up to 5 s before answering; the rest
  // stayed piped into the form parser, which could stall on a part nobody read: every such
  // answer came after the full 5 s.
  const s = await serve({ maxBodyBytes: 1024 * 1024 })
  t.teardown(s.close)
  const mb = 'a'.repeat(1_000_000)
  const cases: Array<[string, number, string, Array<[string, string, string?]>]> = [
    ['two 1 MB files', 413, 'DOCSPLIT_INPUT_TOO_LARGE', [['file', mb, 'a.txt'], ['file', mb, 'b.txt']]],
    ['1 MB and 500 KB files', 413, 'DOCSPLIT_INPUT_TOO_LARGE', [['file', mb, 'a.txt'], ['file', 'b'.repeat(500_000), 'b.txt']]],
    ['1 MB and 100 KB files', 413, 'DOCSPLIT_INPUT_TOO_LARGE', [['file', mb, 'a.txt'], ['file', 'b'.repeat(100_000), 'b.txt']]],
    ['a misnamed file, then the file', 400, 'DOCSPLIT_INVALID_REQUEST', [['doc', mb, 'a.txt'], ['file', mb, 'b.txt']]],
    ['a field twice, then the file', 400, 'DOCSPLIT_INVALID_REQUEST', [['max_tokens', '5'], ['max_tokens', '6'], ['file', mb, 'b.txt']]],
  ]
  const { port } = new URL(s.url)
  const socket = connect(Number(port), '127.0.0.1')
  t.teardown(() => { socket.destroy() })
  await new Promise((resolve) => socket.once('connect', resolve))
  for (const [name, status, code, parts] of cases) {
    const body = formBody('XyZ', parts)
    const started = performance.now()
    socket.write(`POST ${FILE} HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: ${body.length}\r\n\r\n`)
    socket.write(body)
    const answer = await nextAnswer(socket)
    const ms = performance.now() - started
    t.equal(answer.status, status, `${name}: ${status}`)
    t.equal((JSON.parse(answer.body) as ProblemJson).code, code, `${name}: ${code}`)
    t.ok(ms < 2500, `${name}: answered in ${Math.round(ms)} ms, not after the 5 s wait`)
  }
  // The same connection: the refused bodies were read to their end, not taken for requests.
  socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n')
  t.equal((await nextAnswer(socket)).status, 200, 'the kept-alive connection serves the next request')
})

/**
 * Posts a JSON body of `size` bytes over a raw socket with `Connection: close` (as nginx talks
 * to its upstream by default), writing as fast as the socket takes it; the status line read,
 * or the error the client met.
 */
async function postClosing (url: string, size: number): Promise<string> {
  const { hostname, port } = new URL(url)
  return await new Promise((resolve) => {
    const socket = connect(Number(port), hostname)
    let answer = ''
    let settled = false
    const settle = (outcome: string): void => {
      if (settled) return
      settled = true
      socket.destroy()
      resolve(outcome)
    }
    socket.on('data', (data: Buffer) => {
      answer += data.toString('latin1')
      const status = /^HTTP\/1\.1 (\d{3})/.exec(answer)
      if (status !== null && answer.includes('\r\n\r\n')) settle(status[1]!)
    })
    socket.on('error', (error: NodeJS.ErrnoException) => { settle(error.code ?? String(error)) })
    socket.on('close', () => { settle('closed without an answer') })
    socket.on('connect', async () => {
      socket.write(`POST ${TEXT} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`)
      const piece = Buffer.alloc(64 * 1024, 'a')
      piece.write('{"text":"')
      for (let sent = 0; sent < size && !settled;) {
        const n = Math.min(piece.length, size - sent)
        const last = sent + n === size
        const data = last ? Buffer.concat([piece.subarray(0, n - 2), Buffer.from('"}')]) : piece.subarray(0, n)
        if (!socket.write(data)) await new Promise((resolve) => socket.once('drain', resolve))
        sent += n
        if (sent === n) piece.fill('a')
      }
    })
  })
}

t.test('refused before its body is read (429, 503 while draining): the answer, not a reset, for a client that sends Connection: close', async (t) => {
  // Own process, as clients meet it; 8 MB is past what loopback buffers.
  const size = 8 * 1024 * 1024
  const child = startChild(process.execPath, ['--import', 'tsx', startScript], {
    PORT: '0', DOCSPLIT_WEB_MAX_BODY_BYTES: String(16 * 1024 * 1024), DOCSPLIT_WEB_RATE_LIMIT_REQUESTS: '1', DOCSPLIT_PLUGINS: '',
  })
  t.teardown(() => { child.process.kill() })
  await waitFor(() => /^listening (\S+)$/m.test(child.stdout()), 30_000, 'the service to start')
  const url = /^listening (\S+)$/m.exec(child.stdout())![1]!
  t.equal((await postJson(url + TEXT, { text: 'first' })).status, 200)
  const limited: string[] = []
  for (let i = 0; i < 3; i++) limited.push(await postClosing(url, size))
  t.same(limited, ['429', '429', '429'], 'rate limited: every client reads its 429')

  // Draining: a slow upload holds the service open while a second one is refused.
  const held = connect(Number(new URL(url).port), '127.0.0.1')
  t.teardown(() => { held.destroy() })
  await new Promise((resolve) => held.once('connect', resolve))
  held.write(`POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"text":"`)
  await sleep(200)
  child.process.kill('SIGTERM')
  await sleep(300)
  t.equal(await postClosing(url, size), '503', 'draining: the refused client reads its 503')
})
