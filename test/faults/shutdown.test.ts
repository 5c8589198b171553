/**
 * SIGTERM on the built service: splits in flight finish (200, valid) while new requests are
 * refused (503 DOCSPLIT_OVERLOADED with Connection: close, or the connection is refused once
 * the listener is closed), then the process exits 0.
 */
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { TEXT, rawRequest, sleep, startService } from '../hostile/helpers.js'

const plugin = fileURLToPath(new URL('./fixtures/fault-plugin.mjs', import.meta.url))

function requestText (body: unknown, extra = ''): string {
  const json = JSON.stringify(body)
  return `POST ${TEXT} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n${extra}\r\n${json}`
}

/** Status codes of every response in a raw HTTP/1.1 exchange, in order. */
const statuses = (head: string): number[] => [...head.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]))

t.test('SIGTERM drains in-flight splits, refuses new ones, exits 0', async (t) => {
  const service = await startService({ DOCSPLIT_PLUGINS: plugin, DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS: '2', DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS: '30' })
  t.teardown(async () => { await service.stop(5000) })

  // Two splits that each need 3 s of work, started before the signal.
  const answeredAt: number[] = []
  let exitedAt = Number.POSITIVE_INFINITY
  void service.exited.then(() => { exitedAt = performance.now() })
  const inflight = [1, 2].map((n) => fetch(service.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: `SLEEP-MS:3000 in-flight ${n}`, input_format: 'fault' }) }).then((res) => { answeredAt.push(performance.now()); return res }))
  // One keep-alive connection: its first request is in flight at the signal (it waits in the
  // queue behind the two above); its second is sent 1.5 s later, after the signal (pipelined
  // behind the first, so the connection is busy and stays open during the drain).
  const pipelined = rawRequest(service.port, [requestText({ text: 'SLEEP-MS:3000 queued', input_format: 'fault' }), requestText({ text: 'arrives during the drain', input_format: 'fault' })], 1500, 30_000)
  await sleep(700)
  service.process.kill('SIGTERM')
  // The signal is handled asynchronously: wait for the service to say it is draining.
  for (let i = 0; i < 100 && !/shutting down/.test(service.stdout()); i++) await sleep(50)
  t.match(service.stdout(), /shutting down/, 'the service logged the start of the drain')
  // A new connection after the signal: refused (listener closed) or answered 503.
  let fresh: string
  try {
    const res = await fetch(service.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'new' }) })
    fresh = `${res.status} ${(await res.json() as { code: string }).code} connection=${res.headers.get('connection')}`
  } catch (error) {
    fresh = `refused (${String((error as { cause?: { code?: string } }).cause?.code ?? error)})`
  }
  t.match(fresh, /^(503 DOCSPLIT_OVERLOADED connection=close|refused)/, `a new request after SIGTERM is refused: ${fresh}`)

  const done = await Promise.all(inflight)
  for (const res of done) {
    t.equal(res.status, 200, 'an in-flight split finishes')
    const body = await res.json() as { chunks: Array<{ text: string }> }
    t.match(body.chunks.map((c) => c.text).join(''), /^SLEEP-MS:3000 in-flight \d$/, 'with its whole text')
  }
  const raw = await pipelined
  const codes = statuses(raw.all)
  t.equal(codes[0], 200, 'the queued split accepted before the signal finishes too')
  t.match(raw.all.split('HTTP/1.1 200')[1]?.split('\r\n\r\n')[0] ?? '', /connection: close/i, 'the answer during the drain carries Connection: close')
  // The request sent during the drain is refused: a 503, or (HTTP/1.1 9.3.2) no answer at all
  // because the server closed the connection after the answer that said Connection: close.
  t.ok(codes[1] === undefined || codes[1] === 503, `the request sent during the drain is not served (${codes[1] ?? 'connection closed unanswered'})`)
  if (codes[1] === 503) t.match(raw.all, /DOCSPLIT_OVERLOADED/)
  t.not(raw.closedBy, 'client', 'the server closed the connection')
  const code = await service.exited
  t.equal(code, 0, 'the process exits 0')
  t.ok(answeredAt.length === 2 && answeredAt.every((at) => at < exitedAt), 'and only after the in-flight splits were answered')
  t.notMatch(service.stderr(), /Error|at /, 'nothing on stderr')
})

t.test('SIGTERM lets an upload still arriving and an answer still being read finish', async (t) => {
  const service = await startService({ DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS: '10' })
  t.teardown(async () => { await service.stop(5000) })
  const { request } = await import('node:http')
  const post = (body: string, onResponse: (res: import('node:http').IncomingMessage) => Promise<string>, slowly: boolean): Promise<string> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: service.port, method: 'POST', path: TEXT, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => { onResponse(res).then(resolve, reject) })
      req.on('error', reject)
      if (!slowly) { req.end(body); return }
      // The body in fifteen pieces over 3 s: most of it arrives after the signal.
      let at = 0
      const step = Math.ceil(body.length / 15)
      const timer = setInterval(() => {
        req.write(body.slice(at, at + step))
        at += step
        if (at >= body.length) { clearInterval(timer); req.end() }
      }, 200)
    })
  const readAll = async (res: import('node:http').IncomingMessage, pauseMs: number): Promise<string> => {
    res.pause()
    await sleep(pauseMs)
    const parts: Buffer[] = []
    for await (const part of res) parts.push(part as Buffer)
    return `${res.statusCode} ${Buffer.concat(parts).toString('utf8')}`
  }
  const uploadText = 'An upload still arriving. '.repeat(2000)
  const upload = post(JSON.stringify({ text: uploadText, max_tokens: 64 }), (res) => readAll(res, 0), true)
  // An answer of many megabytes (more than sockets buffer), read only 2.5 s after the signal.
  const bigText = 'word '.repeat(300_000)
  let signalled = (): void => {}
  const signal = new Promise<void>((resolve) => { signalled = resolve })
  const big = post(JSON.stringify({ text: bigText, max_tokens: 8 }), async (res) => { await signal; return await readAll(res, 2500) }, false)
  // The signal 1 s in: the upload has sent 5 of its 15 pieces (on a loaded machine, at 0.5 s
  // the service had not always read its headers yet, and refused it as new).
  await sleep(1000)
  service.process.kill('SIGTERM')
  signalled()
  const [uploaded, answered] = await Promise.all([upload, big])
  for (const [name, got, text] of [['the upload', uploaded, uploadText], ['the large answer', answered, bigText]] as const) {
    t.equal(got.slice(0, 4), '200 ', `${name} is answered 200`)
    const body = JSON.parse(got.slice(4)) as { chunks: Array<{ text: string }> }
    t.equal(body.chunks.map((c) => c.text).join(''), text, `${name} arrives whole`)
  }
  t.equal(await service.exited, 0, 'then the process exits 0')
})
