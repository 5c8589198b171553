/**
 * Every error status the service answers (400, 404, 413, 415, 422, 500; 429 and 503 are in
 * limits.test.ts), each as RFC 9457 problem+json from the one error table, with no stack, no
 * server path and no piece of the document. 413 exactly at the body limit + 1 byte, for JSON
 * and for multipart files.
 */
import { connect } from 'node:net'
import { PassThrough } from 'node:stream'
import t, { type Test } from 'tap'
import { errorTable, split, type DocsplitError, type SplitOptions } from '../../index.js'
import { clientErrorHandler } from '../../server/plugins/problem.js'
import { toProblem } from '../../server/problem.js'
import { FILE, TEXT, exchange, postFile, postJson, serve, waitFor, type ProblemJson } from './helpers.js'

const LIMIT = 4096
const SECRET = 'zebra-quartz-7731'

/** Checks the problem shape and returns it. */
async function problem (t: Test, res: Response, status: number, code: string): Promise<ProblemJson> {
  t.equal(res.status, status, `status ${status}`)
  t.match(res.headers.get('content-type'), /^application\/problem\+json/)
  const raw = await res.text()
  const body = JSON.parse(raw) as ProblemJson
  t.same(Object.keys(body).sort(), ['code', 'detail', 'status', 'title', 'type'])
  t.equal(body.code, code)
  t.equal(body.status, status)
  const spec = errorTable[code as keyof typeof errorTable]
  t.equal(body.title, spec.title)
  t.equal(spec.status, status, 'status from the error table')
  t.equal(body.type, `urn:docsplit:error:${code}`)
  t.notMatch(raw, /\n\s+at |\/work\/|\/srv\/|node_modules|\.ts\b|file:\/\//, 'no stack or server path')
  t.notMatch(raw, SECRET, 'no document content')
  return body
}

/** A JSON body of exactly `size` bytes. */
function jsonOfSize (size: number): string {
  const empty = JSON.stringify({ text: '' })
  return JSON.stringify({ text: `${SECRET} ${'a'.repeat(size - empty.length - SECRET.length - 1)}` })
}

/** Sends raw bytes and reads the answer until the server closes, as a Response. */
async function raw (url: string, data: string): Promise<Response> {
  const answer = await exchange(url, data)
  if (answer.status === 0) throw new Error(`no HTTP answer: ${JSON.stringify(answer.raw.slice(0, 200))}`)
  return new Response(answer.body, { status: answer.status, headers: { 'content-type': answer.headers['content-type'] ?? '' } })
}

t.test('errors', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1, maxBodyBytes: LIMIT })
  t.teardown(s.close)

  t.test('400: invalid requests and options', async (t) => {
    await problem(t, await postJson(s.url + TEXT, { text: 5 }), 400, 'DOCSPLIT_INVALID_REQUEST')
    await problem(t, await postJson(s.url + TEXT, { max_tokens: 64 }), 400, 'DOCSPLIT_INVALID_REQUEST')
    await problem(t, await postJson(s.url + TEXT, `["${SECRET}"]`), 400, 'DOCSPLIT_INVALID_REQUEST')
    await problem(t, await postJson(s.url + TEXT, `{"text": "${SECRET}`), 400, 'DOCSPLIT_INVALID_REQUEST')
    const budget = await problem(t, await postJson(s.url + TEXT, { text: SECRET, max_tokens: 2 }), 400, 'DOCSPLIT_INVALID_BUDGET')
    t.equal(budget.detail, 'max_tokens must be an integer from 8 to 1000000 (got 2)', 'the value given, as the library and the CLI say it')
    const tokenizer = await problem(t, await postJson(s.url + TEXT, { text: SECRET, tokenizer: 7 }), 400, 'DOCSPLIT_INVALID_OPTION')
    t.match(tokenizer.detail, /^tokenizer \(got 7\) must be one of "approx", /, 'the value before a long list, which the detail may be cut in')
    await problem(t, await postJson(s.url + TEXT, { text: SECRET, max_tokens: '64' }), 400, 'DOCSPLIT_INVALID_BUDGET')
    const unknown = await problem(t, await postJson(s.url + TEXT, { text: SECRET, maxTokens: 64 }), 400, 'DOCSPLIT_UNKNOWN_OPTION')
    t.match(unknown.detail, /^unknown option "maxTokens" \(did you mean "max_tokens"\?\); accepted: /)
    // A name a slip away gets the one likely meant on the JSON route too, as from the library.
    for (const [body, code, detail] of [
      [{ input_format: 'markdwon' }, 'DOCSPLIT_UNSUPPORTED_FORMAT', /^input_format "markdwon" is not known \(did you mean "markdown"\?\); it must be one of "auto", /],
      [{ splitter: 'siblings' }, 'DOCSPLIT_UNKNOWN_SPLITTER', /^splitter "siblings" is not known \(did you mean "sibling"\?\); it must be one of "sibling", "record"/],
      // The registry's message, as the library's: the model prefixes fit in it.
      [{ tokenizer: 'o200k' }, 'DOCSPLIT_UNKNOWN_TOKENIZER', /^tokenizer "o200k" is not known \(did you mean "o200k_base"\?\); accepted: .* or one that starts with one of \d+ prefixes such as "gpt-4o-"/],
    ] as const) {
      t.match((await problem(t, await postJson(s.url + TEXT, { text: SECRET, ...body }), 400, code)).detail, detail)
    }
    await problem(t, await postJson(s.url + TEXT, { text: SECRET, input_format: 'docx' }), 400, 'DOCSPLIT_UNSUPPORTED_FORMAT')
    await problem(t, await postJson(s.url + TEXT, { text: SECRET, splitter: 'nope' }), 400, 'DOCSPLIT_UNKNOWN_SPLITTER')
    await problem(t, await postJson(s.url + TEXT, { text: SECRET, spin_ms: 'soon' }), 400, 'DOCSPLIT_INVALID_OPTION')
    // A value that is no name at all is an invalid option, as the library says; a budget's is a budget error.
    for (const name of ['input_format', 'splitter', 'tokenizer', 'encoding']) {
      await problem(t, await postJson(s.url + TEXT, { text: SECRET, [name]: 5 }), 400, 'DOCSPLIT_INVALID_OPTION')
      const library = await split(SECRET, { [name]: 5 } as SplitOptions).catch((error: unknown) => error as DocsplitError)
      t.equal((library as DocsplitError).code, 'DOCSPLIT_INVALID_OPTION', `${name}: 5, the library's code alike`)
    }
    await problem(t, await postJson(s.url + TEXT, { text: SECRET, overlap_tokens: true }), 400, 'DOCSPLIT_INVALID_BUDGET')
    const xlsx = await problem(t, await postJson(s.url + TEXT, { text: SECRET, input_format: 'xlsx' }), 400, 'DOCSPLIT_FORMAT_NEEDS_FILE')
    t.match(xlsx.detail, '/docsplit/api/split/file', 'names the file endpoint')
    await problem(t, await postFile(s.url + FILE, SECRET, 'a.txt', { max_tokens: 'lots' }), 400, 'DOCSPLIT_INVALID_BUDGET')
    await problem(t, await postFile(s.url + FILE, SECRET, 'a.txt', { no_such_option: '1' }), 400, 'DOCSPLIT_UNKNOWN_OPTION')
    const form = new FormData()
    form.append('max_tokens', '64')
    await problem(t, await fetch(s.url + FILE, { method: 'POST', body: form }), 400, 'DOCSPLIT_INVALID_REQUEST')
  })

  t.test('400: a member or field named like a built-in property of objects is an unknown option, as any other name', async (t) => {
    const accepted = (await problem(t, await postJson(s.url + TEXT, `{"text":"${SECRET}","nope":1}`), 400, 'DOCSPLIT_UNKNOWN_OPTION')).detail.replace(/^unknown option "nope"/, '')
    // secure-json-parse refuses `__proto__` (and `constructor.prototype`) as if the JSON were malformed.
    for (const [member, name] of [['"__proto__":{}', '__proto__'], ['"__proto__":1', '__proto__'], ['"constructor":1', 'constructor'], ['"constructor":{"prototype":{}}', 'constructor']] as const) {
      const body = await problem(t, await postJson(s.url + TEXT, `{"text":"${SECRET}",${member}}`), 400, 'DOCSPLIT_UNKNOWN_OPTION')
      t.equal(body.detail, `unknown option "${name}"${accepted}`, `${member}: named, with the accepted names`)
    }
    const deep = await problem(t, await postJson(s.url + TEXT, `{"text":"${SECRET}","sheets":[{"__proto__":{}}]}`), 400, 'DOCSPLIT_INVALID_REQUEST')
    t.match(deep.detail, /"__proto__" is refused/, 'deeper: refused by name, not as invalid JSON')
    await problem(t, await postJson(s.url + TEXT, `{"text":"${SECRET}","__proto__":`), 400, 'DOCSPLIT_INVALID_REQUEST')
    const fileAccepted = (await problem(t, await postFile(s.url + FILE, SECRET, 'a.txt', { nope: '1' }), 400, 'DOCSPLIT_UNKNOWN_OPTION')).detail.replace(/^unknown option "nope"/, '')
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      const body = await problem(t, await postFile(s.url + FILE, SECRET, 'a.txt', { [name]: '1' }), 400, 'DOCSPLIT_UNKNOWN_OPTION')
      t.equal(body.detail, `unknown option "${name}"${fileAccepted}`, `form field ${name}: named, with the accepted names`)
    }
    const misnamed = new FormData()
    misnamed.append('constructor', new Blob([SECRET]), 'a.txt')
    t.match((await problem(t, await fetch(s.url + FILE, { method: 'POST', body: misnamed }), 400, 'DOCSPLIT_INVALID_REQUEST')).detail, /form part named "file"/)
    t.equal((await postFile(s.url + FILE, SECRET, 'a.txt', { max_tokens: '64' })).status, 200, 'the next form is read')
  })

  t.test('400: malformed multipart; an upload cut off by its client is no internal error', async (t) => {
    const form = (type: string, body: string): Promise<Response> => fetch(s.url + FILE, { method: 'POST', headers: { 'content-type': type }, body })
    const part = `--XX\r\nContent-Disposition: form-data; name="file"; filename="a.md"\r\n\r\n${SECRET}\r\n`
    const malformed = [
      form('multipart/form-data', SECRET),
      form('multipart/form-data; boundary=XX', '--XX\r\nContent-Disposition: form-data; na'),
      form('multipart/form-data; boundary=XX', part),
      form('multipart/form-data; boundary=XX', `${part}--XX\r\nContent-Disposition: form-data; name="max_tokens"\r\n\r\n64\r\n`),
    ]
    for (const res of malformed) {
      const body = await problem(t, await res, 400, 'DOCSPLIT_INVALID_REQUEST')
      t.match(body.detail, /multipart/)
    }
    const { hostname, port } = new URL(s.url)
    const socket = connect(Number(port), hostname)
    socket.on('error', () => {})
    socket.write(`POST ${FILE} HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=XX\r\nContent-Length: 100000\r\n\r\n${part}`)
    await new Promise((resolve) => setTimeout(resolve, 300))
    socket.destroy()
    await waitFor(() => s.logs.some((l) => /"status":499/.test(l)), 5000, 'the cut-off upload to be logged')
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.notMatch(s.logs.join('\n'), /unexpected error|DOCSPLIT_INTERNAL/, 'no internal error logged')
  })

  t.test('400, 431: what fails before routing is a problem too, without the URL', async (t) => {
    const badUrl = await problem(t, await raw(s.url, `GET ${TEXT}/%zz${SECRET} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), 400, 'DOCSPLIT_INVALID_REQUEST')
    t.notMatch(badUrl.detail, /%zz|\/docsplit/, 'the path is not echoed')
    await problem(t, await raw(s.url, 'GARBAGE\r\n\r\n'), 400, 'DOCSPLIT_INVALID_REQUEST')
    await problem(t, await raw(s.url, `POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${SECRET}\r\n\r\n{}`), 400, 'DOCSPLIT_INVALID_REQUEST')
    await problem(t, await raw(s.url, `POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`), 400, 'DOCSPLIT_INVALID_REQUEST')
    await problem(t, await raw(s.url, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${SECRET}${'a'.repeat(20_000)}\r\n\r\n`), 431, 'DOCSPLIT_HEADERS_TOO_LARGE')
  })

  t.test('400: what file serving refuses on the docs page says what is wrong (the path, a precondition, a range), not the body', async (t) => {
    for (const path of ['/docs/static/%2e%2e/', '/docs/static/%00', '/docs/static/%2e%2e/%2e%2e/etc/passwd']) {
      const body = await problem(t, await raw(s.url, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`), 400, 'DOCSPLIT_INVALID_REQUEST')
      t.match(body.detail, /^The request path is not valid/, path)
      t.notMatch(body.detail, /JSON|body/, `${path}: says nothing of a body`)
    }
    // A path that is served, with a precondition that fails or a range past its end: said so.
    const css = '/docs/static/swagger-ui.css'
    const ranged = await problem(t, await raw(s.url, `GET ${css} HTTP/1.1\r\nHost: x\r\nRange: bytes=99999999-\r\nConnection: close\r\n\r\n`), 400, 'DOCSPLIT_INVALID_REQUEST')
    t.match(ranged.detail, /^The Range header/, 'a range past the end')
    const matched = await problem(t, await raw(s.url, `GET ${css} HTTP/1.1\r\nHost: x\r\nIf-Match: "nope"\r\nConnection: close\r\n\r\n`), 400, 'DOCSPLIT_INVALID_REQUEST')
    t.match(matched.detail, /^A precondition header/, 'If-Match that does not hold')
    // fastify's own 4xx errors carry a code and are about the body: they keep the body's detail.
    t.match(toProblem(Object.assign(new Error('x'), { code: 'FST_SOMETHING_NEW', statusCode: 400 })).body.detail, /not valid JSON/)
  })

  t.test('408: a request not received in time is a problem too', async (t) => {
    // Node raises this after requestTimeout (a minute): call the handler as Node would.
    const written: string[] = []
    const socket = new PassThrough()
    socket.write = ((chunk: string) => { written.push(chunk); return true }) as never
    clientErrorHandler(Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket as never)
    const [head = '', body = ''] = written.join('').split('\r\n\r\n')
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1])
    await problem(t, new Response(body, { status, headers: { 'content-type': /^content-type: (.*)$/im.exec(head)?.[1] ?? '' } }), 408, 'DOCSPLIT_REQUEST_TIMEOUT')
    t.ok(socket.destroyed, 'and the connection is closed')
  })

  t.test('404 and 405: unknown paths, and known paths with another method', async (t) => {
    await problem(t, await fetch(`${s.url}/nope?${SECRET}`), 404, 'DOCSPLIT_NOT_FOUND')
    const wrongMethod = await fetch(s.url + TEXT)
    t.equal(wrongMethod.headers.get('allow'), 'POST', 'the methods the path takes')
    await problem(t, wrongMethod, 405, 'DOCSPLIT_METHOD_NOT_ALLOWED')
    const put = await fetch(`${s.url}/health?${SECRET}`, { method: 'PUT' })
    t.equal(put.headers.get('allow'), 'GET, HEAD')
    await problem(t, put, 405, 'DOCSPLIT_METHOD_NOT_ALLOWED')
    // Whatever the body: it is not parsed for a request no route takes.
    const json = { 'content-type': 'application/json' }
    await problem(t, await fetch(`${s.url}/docsplit/api/split/txt`, { method: 'POST', headers: json, body: '{oops' }), 404, 'DOCSPLIT_NOT_FOUND')
    const badJsonToHealth = await fetch(`${s.url}/health`, { method: 'POST', headers: json, body: '{oops' })
    t.equal(badJsonToHealth.headers.get('allow'), 'GET, HEAD')
    await problem(t, badJsonToHealth, 405, 'DOCSPLIT_METHOD_NOT_ALLOWED')
    await problem(t, await fetch(`${s.url}/nope`, { method: 'POST', headers: json, body: 'a'.repeat(LIMIT + 1000) }), 404, 'DOCSPLIT_NOT_FOUND')
  })

  t.test('413: JSON body one byte over the limit', async (t) => {
    const atLimit = jsonOfSize(LIMIT)
    t.equal(Buffer.byteLength(atLimit), LIMIT)
    t.equal((await postJson(s.url + TEXT, atLimit)).status, 200, 'exactly the limit is accepted')
    const over = jsonOfSize(LIMIT + 1)
    t.equal(Buffer.byteLength(over), LIMIT + 1)
    await problem(t, await postJson(s.url + TEXT, over), 413, 'DOCSPLIT_INPUT_TOO_LARGE')
  })

  t.test('413: multipart file one byte over the limit, second file, too many fields', async (t) => {
    const file = (n: number): string => `${SECRET}\n${'b'.repeat(n - SECRET.length - 1)}`
    t.equal((await postFile(s.url + FILE, file(LIMIT), 'a.txt')).status, 200, 'exactly the limit is accepted')
    await problem(t, await postFile(s.url + FILE, file(LIMIT + 1), 'a.txt'), 413, 'DOCSPLIT_INPUT_TOO_LARGE')
    const two = new FormData()
    two.append('file', new Blob([SECRET]), 'a.txt')
    two.append('file', new Blob([SECRET]), 'b.txt')
    await problem(t, await fetch(s.url + FILE, { method: 'POST', body: two }), 413, 'DOCSPLIT_INPUT_TOO_LARGE')
    const many = new FormData()
    for (let i = 0; i < 200; i++) many.append(`f${i}`, 'x')
    many.append('file', new Blob([SECRET]), 'a.txt')
    await problem(t, await fetch(s.url + FILE, { method: 'POST', body: many }), 413, 'DOCSPLIT_INPUT_TOO_LARGE')
  })

  t.test('413: a form body past the file limit plus 1 MiB, however the bytes are placed', async (t) => {
    // A preamble before the first boundary is dropped by the form parser, counted by nothing else.
    const tail = `\r\n--XX\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n${SECRET}\r\n--XX--\r\n`
    const preamble = 'p'.repeat(LIMIT + (1 << 20))
    const declared = await fetch(s.url + FILE, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=XX' }, body: preamble + tail })
    const early = await problem(t, declared, 413, 'DOCSPLIT_INPUT_TOO_LARGE')
    t.match(early.detail, /form body is limited to \d+ bytes/)
    // Sent in chunks with no length: refused while it arrives.
    const chunks = new PassThrough()
    const sent = fetch(s.url + FILE, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=XX' }, body: chunks, duplex: 'half' } as RequestInit)
    for (let i = 0; i < 20; i++) chunks.write('p'.repeat(64 * 1024))
    chunks.end(tail)
    await problem(t, await sent, 413, 'DOCSPLIT_INPUT_TOO_LARGE')
    // A small preamble is fine.
    const small = await fetch(s.url + FILE, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=XX' }, body: 'preamble' + tail })
    t.equal(small.status, 200)
    await small.arrayBuffer()
  })

  t.test('415: wrong content types', async (t) => {
    await problem(t, await fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: SECRET }), 415, 'DOCSPLIT_UNSUPPORTED_MEDIA_TYPE')
    await problem(t, await fetch(s.url + TEXT, { method: 'POST', body: new Uint8Array(Buffer.from(JSON.stringify({ text: SECRET }))) }), 415, 'DOCSPLIT_UNSUPPORTED_MEDIA_TYPE')
    await problem(t, await postFile(s.url + TEXT, SECRET, 'a.txt'), 415, 'DOCSPLIT_UNSUPPORTED_MEDIA_TYPE')
    await problem(t, await postJson(s.url + FILE, { text: SECRET }), 415, 'DOCSPLIT_UNSUPPORTED_MEDIA_TYPE')
  })

  t.test('422: input the engine refuses', async (t) => {
    const bad = new Uint8Array([...Buffer.from(SECRET), 0x41, 0xc3, 0x28, 0x0a])
    const body = await problem(t, await postFile(s.url + FILE, bad, 'a.txt'), 422, 'DOCSPLIT_INVALID_UTF8')
    t.match(body.detail, /byte/)
    const replaced = await postFile(s.url + FILE, bad, 'a.txt', { invalid_bytes: 'replace' })
    t.equal(replaced.status, 200, 'invalid_bytes replace: the same upload splits')
    t.same((await replaced.json() as { document: { replaced: unknown } }).document.replaced, { sequences: 1, first_byte: SECRET.length + 1 })
  })

  t.test('500: an unexpected failure says nothing', async (t) => {
    const body = await problem(t, await postJson(s.url + TEXT, { text: SECRET, input_format: 'spin', spin_crash: true }), 500, 'DOCSPLIT_INTERNAL')
    t.notMatch(body.detail, /secret|internal\.ts|failed at/)
    t.equal((await postJson(s.url + TEXT, { text: 'still works', input_format: 'spin' })).status, 200, 'the next split works')
  })

  t.test('NDJSON: a failure is a problem before the header, an error line after it', async (t) => {
    const res = await postJson(s.url + TEXT, { text: SECRET, input_format: 'xlsx' }, { accept: 'application/x-ndjson' })
    if (res.status !== 200) {
      await problem(t, res, 400, 'DOCSPLIT_FORMAT_NEEDS_FILE')
      return
    }
    // The engine announced the split before it found the problem: the stream ends with it.
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
    const last = lines[lines.length - 1] as { error?: ProblemJson }
    t.equal(last.error?.code, 'DOCSPLIT_FORMAT_NEEDS_FILE')
    t.equal(last.error?.status, 400)
    t.notMatch(JSON.stringify(lines), SECRET)
  })
})
