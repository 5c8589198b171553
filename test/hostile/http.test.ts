/**
 * Hostile inputs through the HTTP service: the built service (`docsplit serve`) runs as a child
 * process on 127.0.0.1 port 0 with its default budget (30 s per split). Every case gets its
 * documented 4xx (problem+json with the right code) or a 200 whose split passes the invariants;
 * the process stays up; /health answers 200 throughout (probed in parallel); memory returns near
 * its start level; slow clients (headers or body one byte a second) are closed by the server.
 */
import { createServer } from 'node:net'
import t from 'tap'
import type { SplitResponse } from '../../core/schema.js'
import { hostileCases } from './inputs.js'
import { FILE, TEXT, decoded, healthProber, problemsOf, rawRequest, rssMb, sleep, startService, statusOf } from './helpers.js'

interface Problem { type: string, title: string, status: number, detail: string, code: string }

t.test('hostile inputs through the HTTP service', async (t) => {
  const service = await startService({ DOCSPLIT_WEB_MAX_CONCURRENT_SPLITS: '2', DOCSPLIT_WEB_RATE_LIMIT_REQUESTS: '1000000' })
  t.teardown(async () => { await service.stop() })
  let connections = 0
  const trap = createServer((socket) => { connections++; socket.end('HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nXXE-PAYLOAD') })
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => trap.close(() => { resolve() })))
  const trapPort = (trap.address() as { port: number }).port

  // Warm up, then take the start level.
  t.equal((await fetch(service.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'warm up', max_tokens: 64 }) })).status, 200)
  await sleep(500)
  const cases = hostileCases()
  const rssStart = rssMb(service.pid)
  const health = healthProber(service.url)

  // Slow clients run alongside every case (they mostly wait): five connections sending headers
  // one byte a second (slowloris), five sending a body one byte a second. Node checks header
  // timeouts every 30 s against a 60 s headersTimeout, so this takes up to 90 s.
  const slowHead = 'POST /docsplit/api/split/text HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nX-Slow: ' + 'a'.repeat(200)
  const slowBodyHead = 'POST /docsplit/api/split/text HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"text":"'
  const slowBound = 100_000
  const slow = Promise.all([
    ...Array.from({ length: 5 }, () => rawRequest(service.port, slowHead.split(''), 1000, slowBound)),
    ...Array.from({ length: 5 }, () => rawRequest(service.port, [slowBodyHead, ...'x'.repeat(200).split('')], 1000, slowBound)),
    // stalled: part of a request, then nothing
    rawRequest(service.port, [slowBodyHead], 1000, slowBound),
    rawRequest(service.port, [slowHead], 1000, slowBound),
  ])

  const check = async (t: any, res: Response, c: { codes: string[], splitOk: boolean, forbid?: RegExp, knownBug?: string }, source: string | undefined): Promise<void> => {
    const type = res.headers.get('content-type') ?? ''
    const text = await res.text()
    if (res.status === 200) {
      t.ok(c.splitOk, `a split is an acceptable answer (expected one of ${c.codes.join(', ')})`)
      const response = JSON.parse(text) as SplitResponse
      t.same(await problemsOf(response, source), [], 'the split passes the invariants')
      if (c.forbid !== undefined) t.notMatch(response.chunks.map((x) => x.text).join(''), c.forbid, 'nothing expanded into the output')
      return
    }
    t.match(type, /^application\/problem\+json/, 'a problem body')
    const body = JSON.parse(text) as Problem
    if (res.status === 503 && body.code === 'DOCSPLIT_TIMEOUT' && c.knownBug !== undefined) {
      t.pass('stopped at the split budget (503 DOCSPLIT_TIMEOUT): the service survives it')
      t.fail('a 4xx before any work', { todo: c.knownBug })
      return
    }
    if (res.status === 503 && body.code === 'DOCSPLIT_TIMEOUT' && c.splitOk) {
      t.fail(`a valid split within the budget (got 503 DOCSPLIT_TIMEOUT: ${body.detail})`, { todo: 'engine: a split past the 30 s default budget when the 2 cores are shared (a 5 MB run of one letter takes 0.7 s now; runs of emoji or CJK without spaces or punctuation are cut by Intl.Segmenter at about 4 µs a character)' })
      return
    }
    t.ok(c.codes.includes(body.code), `${res.status} ${body.code} is a documented answer (${c.codes.join(', ') || 'a split'}): ${body.detail}`)
    t.equal(res.status, statusOf(body.code), 'the status of that code')
    t.ok(res.status >= 400 && res.status < 500, 'a client error, not a 5xx')
    t.notMatch(text, /\n\s+at |\/work\/|node:internal|XXE-PAYLOAD|root:x/, 'no stack, path or fetched content')
  }

  for (const c of cases) {
    const input = typeof c.input === 'string' ? c.input.replace('@PORT@', String(trapPort)) : c.input
    await t.test(`${c.name} (file)`, async (t) => {
      const form = new FormData()
      for (const [k, v] of Object.entries(c.options ?? {})) form.append(k, String(v))
      form.append('file', new Blob([input]), c.filename)
      const res = await fetch(service.url + FILE, { method: 'POST', body: form })
      await check(t, res, c, decoded(input))
    })
    // The 5 MB strings go through the file endpoint only (same engine, half the test time).
    if (c.text === true && typeof input === 'string' && input.length < 1_000_000) {
      await t.test(`${c.name} (text)`, async (t) => {
        const res = await fetch(service.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: input, filename: c.filename, ...c.options }) })
        await check(t, res, c, input)
      })
    }
    t.equal(service.process.exitCode, null, `the service is still up after ${c.name}`)
  }

  await t.test('invalid UTF-8 inside a JSON body', async (t) => {
    const body = Buffer.concat([Buffer.from('{"text":"abc'), Buffer.from([0xff, 0xc3, 0x28]), Buffer.from('def"}')])
    const res = await fetch(service.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    await check(t, res, { codes: ['DOCSPLIT_INVALID_REQUEST', 'DOCSPLIT_INVALID_UTF8'], splitOk: false }, undefined)
  })

  await t.test('multipart with 1,000 fields', async (t) => {
    const form = new FormData()
    for (let i = 0; i < 1000; i++) form.append(`field${i}`, 'x')
    form.append('file', new Blob(['hello']), 'a.txt')
    const res = await fetch(service.url + FILE, { method: 'POST', body: form })
    await check(t, res, { codes: ['DOCSPLIT_INPUT_TOO_LARGE', 'DOCSPLIT_UNKNOWN_OPTION', 'DOCSPLIT_INVALID_REQUEST'], splitOk: false }, undefined)
  })

  await t.test('multipart with 10 files', async (t) => {
    const form = new FormData()
    for (let i = 0; i < 10; i++) form.append('file', new Blob([`file ${i}\n`]), `f${i}.txt`)
    const res = await fetch(service.url + FILE, { method: 'POST', body: form })
    await check(t, res, { codes: ['DOCSPLIT_INPUT_TOO_LARGE', 'DOCSPLIT_INVALID_REQUEST'], splitOk: false }, undefined)
  })

  await t.test('multipart with one part of 1,000 header lines', async (t) => {
    const boundary = 'xBOUNDARYx'
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n` + Array.from({ length: 1000 }, (_, i) => `X-H${i}: v`).join('\r\n') + `\r\n\r\nhello\r\n--${boundary}--\r\n`
    const res = await fetch(service.url + FILE, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, body })
    t.ok(res.status === 200 || (res.status >= 400 && res.status < 500), `answered ${res.status}`)
    await res.arrayBuffer()
  })

  await t.test('a 100 KB header', async (t) => {
    const r = await rawRequest(service.port, [`GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(100 * 1024)}\r\n\r\n`], 0, 10_000)
    t.equal(r.status, 431, 'Request Header Fields Too Large')
    t.not(r.closedBy, 'client', `and the server closes the connection (${r.closedBy})`)
    const r2 = await rawRequest(service.port, [`POST ${TEXT} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n` + Array.from({ length: 2000 }, (_, i) => `X-H${i}: ${'b'.repeat(50)}`).join('\r\n') + '\r\n\r\n{}'], 0, 10_000)
    t.equal(r2.status, 431, '2,000 header lines of 50 bytes: 431 too')
  })

  await t.test('slow clients are closed by the server', async (t) => {
    const results = await slow
    const headers = results.slice(0, 5)
    const body = results.slice(5, 10)
    const stalled = results.slice(10)
    t.comment(`slow headers: ${headers.map((r) => `${r.closedBy} after ${Math.round(r.ms / 1000)} s (${r.status ?? '-'})`).join(', ')}`)
    t.comment(`slow body: ${body.map((r) => `${r.closedBy} after ${Math.round(r.ms / 1000)} s (${r.status ?? '-'})`).join(', ')}`)
    // The request timeout (54-59 s) comes before the idle rule (60 s by default) closes them.
    t.same(stalled.map((r) => r.status), [408, 408], `a request that stops arriving gets its 408 (${stalled.map((r) => `${r.closedBy} after ${Math.round(r.ms / 1000)} s`).join(', ')})`)
    for (const r of headers) t.not(r.closedBy, 'client', `headers one byte a second: closed by the server (${r.status ?? 'no status'} after ${Math.round(r.ms / 1000)} s)`)
    for (const r of body) {
      t.not(r.closedBy, 'client', `a body one byte a second: closed by the server (${r.closedBy} after ${Math.round(r.ms / 1000)} s)`,
        { todo: r.closedBy === 'client' ? 'server/app.ts sets no requestTimeout (fastify default 0) or connectionTimeout: a body trickled one byte a second holds its connection (and its socket) forever' : false })
    }
  })

  const probe = await health.stop()
  t.comment(`health: ${probe.probes} probes, max ${Math.round(probe.maxMs)} ms, p99 ${Math.round(probe.p99Ms)} ms, failures ${probe.failures.length}`)
  t.same(probe.failures, [], '/health answered 200 throughout')
  t.ok(probe.probes > 10, 'health was probed throughout')
  t.equal(connections, 0, 'no external entity was fetched')
  t.equal(service.process.exitCode, null, 'the service is still up')
  t.equal((await fetch(service.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: '# ok\n\nstill working', max_tokens: 64 }) })).status, 200, 'and still splits')

  // Memory: the 5 MB splits grow the worker heaps; they are given back (or the workers replaced).
  let rssEnd = rssMb(service.pid)
  for (let i = 0; i < 20 && rssEnd > rssStart + 300; i++) { await sleep(500); rssEnd = rssMb(service.pid) }
  t.comment(`RSS: start ${Math.round(rssStart)} MB, end ${Math.round(rssEnd)} MB`)
  t.ok(rssEnd < rssStart + 300, `RSS back near its start level (start ${Math.round(rssStart)} MB, end ${Math.round(rssEnd)} MB, allowed +300 MB)`)
})
