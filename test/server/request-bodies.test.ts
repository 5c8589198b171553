/**
 * How the split routes read what clients send: compressed bodies and JSON declared in another
 * charset than UTF-8 are refused (415), the response type follows the Accept header's q-values,
 * `encoding` belongs to the file endpoint, a null option is no option, and a form's `file` part
 * may come without a file name.
 */
import { gzipSync } from 'node:zlib'
import t from 'tap'
import { optionsSchema, split } from '../../index.js'
import { wantsNdjson } from '../../server/split-reply.js'
import { FILE, TEXT, postJson, serve, type ProblemJson } from './helpers.js'

t.test('a compressed request body is a 415, on both split routes', async (t) => {
  const s = await serve()
  t.teardown(s.close)
  const json = gzipSync(JSON.stringify({ text: '# Title\n\nSome text.', input_format: 'markdown' }))
  for (const encoding of ['gzip', 'br', 'deflate', 'identity, gzip']) {
    const res = await fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': encoding }, body: json })
    t.equal(res.status, 415, `text, ${encoding}`)
    t.match(res.headers.get('content-type'), /^application\/problem\+json/)
    const body = await res.json() as ProblemJson
    t.equal(body.code, 'DOCSPLIT_UNSUPPORTED_MEDIA_TYPE')
    t.match(body.detail, /compressed request bodies are not supported/)
  }
  const boundary = 'XyZ'
  const form = gzipSync(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.md"\r\n\r\n# Title\r\n--${boundary}--\r\n`)
  const res = await fetch(s.url + FILE, { method: 'POST', headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-encoding': 'gzip' }, body: form })
  t.equal(res.status, 415, 'file, gzip')
  t.match((await res.json() as ProblemJson).detail, /compressed request bodies are not supported/)
  const plain = await postJson(s.url + TEXT, { text: 'plain', input_format: 'text' }, { 'content-encoding': 'identity' })
  t.equal(plain.status, 200, 'identity is no encoding')
  t.equal((await fetch(s.url + '/health')).status, 200, 'the service is up')
})

t.test('a JSON body declared in a charset other than UTF-8 is a 415, not read as UTF-8', async (t) => {
  const s = await serve()
  t.teardown(s.close)
  const body = JSON.stringify({ text: 'caf\u00e9', input_format: 'text' })
  for (const charset of ['iso-8859-1', 'UTF-16', '"windows-1252"', 'us-ascii']) {
    const res = await fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': `application/json; charset=${charset}` }, body })
    t.equal(res.status, 415, charset)
    t.match(res.headers.get('content-type'), /^application\/problem\+json/)
    const problem = await res.json() as ProblemJson
    t.equal(problem.code, 'DOCSPLIT_UNSUPPORTED_MEDIA_TYPE', charset)
    t.match(problem.detail, /^JSON must be UTF-8/, charset)
  }
  for (const type of ['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json; charset="utf-8"', 'application/json; charset=utf8']) {
    const res = await fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': type }, body })
    t.equal(res.status, 200, type)
    t.equal((await res.json() as { chunks: Array<{ text: string }> }).chunks[0]?.text, 'caf\u00e9', `${type}: read as UTF-8`)
  }
})

t.test('Accept: the q-values choose between JSON and NDJSON', async (t) => {
  const cases: Array<[string | undefined, boolean]> = [
    [undefined, false],
    ['*/*', false],
    ['application/json', false],
    ['application/x-ndjson', true],
    ['application/json, application/x-ndjson;q=0.1', false],
    ['application/json;q=0.5, application/x-ndjson;q=0.9', true],
    ['application/x-ndjson;q=0.2, application/json', false],
    ['application/json, application/x-ndjson', true],
    ['application/x-ndjson;q=0.5, */*;q=0.5', true],
    ['application/x-ndjson;q=0.5, */*', false],
    ['application/x-ndjson;q=0.5, application/*;q=0.8, */*;q=0.1', false],
    ['application/x-ndjson;q=0', false],
    ['application/x-ndjson; q=0.000', false],
    ['Application/X-NDJSON;Q=0.7, application/json;q=0.3', true],
    ['text/html, application/x-ndjson;q=0.3', true],
  ]
  for (const [accept, ndjson] of cases) t.equal(wantsNdjson(accept), ndjson, String(accept))
  const s = await serve()
  t.teardown(s.close)
  const res = await postJson(s.url + TEXT, { text: 'Some text.', input_format: 'text' }, { accept: 'application/json, application/x-ndjson;q=0.1' })
  t.equal(res.status, 200)
  t.match(res.headers.get('content-type'), /^application\/json/, 'JSON when it has the higher q-value')
  t.equal((await res.json() as { schema_version: string }).schema_version, 'docsplit.chunk.v1')
  const streamed = await postJson(s.url + TEXT, { text: 'Some text.', input_format: 'text' }, { accept: 'application/json;q=0.5, application/x-ndjson' })
  t.match(streamed.headers.get('content-type'), /^application\/x-ndjson/, 'NDJSON when it has')
  await streamed.text()
})

t.test('encoding on the text endpoint: only utf-8, as the text is decoded already', async (t) => {
  const s = await serve()
  t.teardown(s.close)
  for (const encoding of ['latin1', 'windows-1252', 'utf-16le']) {
    const res = await postJson(s.url + TEXT, { text: 'caf\u00e9', input_format: 'text', encoding })
    t.equal(res.status, 400, encoding)
    const body = await res.json() as ProblemJson
    t.equal(body.code, 'DOCSPLIT_INVALID_OPTION')
    t.match(body.detail, /encoding applies to uploaded bytes.*split\/file/)
  }
  for (const encoding of ['utf-8', 'UTF-8', 'utf8']) {
    const res = await postJson(s.url + TEXT, { text: 'caf\u00e9', input_format: 'text', encoding })
    t.equal(res.status, 200, encoding)
    await res.text()
  }
  const unknown = await postJson(s.url + TEXT, { text: 'x', input_format: 'text', encoding: 'klingon' })
  t.equal((await unknown.json() as ProblemJson).code, 'DOCSPLIT_UNSUPPORTED_ENCODING', 'an unknown label is still named as such')
  const form = new FormData()
  form.append('encoding', 'latin1')
  form.append('file', new Blob([Uint8Array.from([0x63, 0x61, 0x66, 0xe9])]), 'a.txt')
  const file = await fetch(s.url + FILE, { method: 'POST', body: form })
  t.equal(file.status, 200, 'the file endpoint takes it')
  t.equal((await file.json() as { chunks: Array<{ text: string }> }).chunks[0]?.text, 'caf\u00e9')
  const openapi = await (await fetch(s.url + '/openapi.json')).json() as { paths: Record<string, { post: { description: string, requestBody: { content: Record<string, { schema: { properties: Record<string, { description?: string }> } }> } } }> }
  const post = openapi.paths[TEXT]!.post
  t.match(post.description, /`encoding` applies to bytes/)
  t.match(post.requestBody.content['application/json']?.schema.properties.encoding?.description, /Only `utf-8`.*split\/file/)
})

t.test('a null option is the same as leaving it out, as in the library', async (t) => {
  const s = await serve()
  t.teardown(s.close)
  const text = '# Title\n\nSome text, then more.\n'
  const plain = await postJson(s.url + TEXT, { text })
  t.equal(plain.status, 200)
  const expected = await plain.text()
  // Every option of the body: the engine's and the plugins' (Python clients send unset fields as null).
  for (const name of Object.keys(optionsSchema().properties)) {
    const res = await postJson(s.url + TEXT, { text, [name]: null })
    t.equal(res.status, 200, `${name}: null`)
    t.equal(await res.text(), expected, `${name}: null gives the answer without it`)
    const library = await split(text, { [name]: null })
    t.same(library.metadata.options, JSON.parse(expected).metadata.options, `${name}: null, the library's options alike`)
  }
  const all = await postJson(s.url + TEXT, { text, max_tokens: null, tokenizer: null, overlap_tokens: null, input_format: null, encoding: null })
  t.equal(await all.text(), expected, 'several at once')
  const missing = await postJson(s.url + TEXT, { text: null })
  t.equal(missing.status, 400, 'the text itself may not be null')
  t.equal((await missing.json() as ProblemJson).code, 'DOCSPLIT_INVALID_REQUEST')
})

t.test('a form part named "file" without a file name is the document', async (t) => {
  const s = await serve({ maxBodyBytes: 64 * 1024 })
  t.teardown(s.close)
  const boundary = 'XyZ'
  const send = (content: string, extra = ''): Promise<Response> => fetch(s.url + FILE, {
    method: 'POST',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    // What `curl -F 'file=<doc.md' -F max_tokens=64` sends: no filename, no content-type.
    body: `--${boundary}\r\nContent-Disposition: form-data; name="max_tokens"\r\n\r\n64\r\n${extra}--${boundary}\r\nContent-Disposition: form-data; name="file"\r\n\r\n${content}\r\n--${boundary}--\r\n`,
  })
  const doc = '# Title\n\nSome text.\n\n## Part\n\nMore text.\n'
  const res = await send(doc)
  t.equal(res.status, 200)
  const body = await res.json() as { chunks: Array<{ text: string }> }
  t.equal(body.chunks.map((c) => c.text).join(''), doc, 'the part is the document, byte for byte')
  // Larger than a form field may be (16 KiB), within the file limit.
  const long = 'Some words in a line.\n'.repeat(2000)
  const big = await send(long)
  t.equal(big.status, 200, 'a part past the field size is read as a file')
  t.equal((await big.json() as { chunks: Array<{ text: string }> }).chunks.map((c) => c.text).join(''), long)
  const tooBig = await send('x'.repeat(70 * 1024))
  t.equal(tooBig.status, 413, 'the file size limit applies')
  t.equal((await tooBig.json() as ProblemJson).code, 'DOCSPLIT_INPUT_TOO_LARGE')
  const second = await send(doc, `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.md"\r\n\r\nsecond\r\n`)
  t.equal(second.status, 413, 'still one file only')
})

t.test("the file part's name is never cut: a long one is refused, a filename field wins over it", async (t) => {
  const s = await serve({ maxBodyBytes: 64 * 1024 })
  t.teardown(s.close)
  const upload = (name: string, field?: string): Promise<Response> => {
    const form = new FormData()
    if (field !== undefined) form.append('filename', field)
    form.append('file', new Blob(['code,name\nAD,Andorra\n']), name)
    return fetch(s.url + FILE, { method: 'POST', body: form })
  }
  const formatOf = async (res: Response): Promise<string> => (await res.json() as { document: { input_format: string } }).document.input_format
  // 1,024 code points, 2,044 UTF-16 units: kept whole, so still a CSV.
  const emoji = '\u{1F600}'.repeat(1020) + '.csv'
  const whole = await upload(emoji)
  t.equal(whole.status, 200)
  t.equal(await formatOf(whole), 'csv', 'a name of 1,024 characters, astral ones too, keeps its extension')
  // Cut at 1,024, '.csv' would have been '.cs' (C#).
  const long = await upload('d'.repeat(1021) + '.csv')
  t.equal(long.status, 400)
  const problem = await long.json() as ProblemJson
  t.equal(problem.code, 'DOCSPLIT_INVALID_OPTION')
  t.match(problem.detail, /the file part's name has 1025 characters; filename takes at most 1024/)
  const named = await upload('d'.repeat(1021) + '.csv', 'countries.csv')
  t.equal(named.status, 200, 'the filename field wins over the part name')
  t.equal(await formatOf(named), 'csv')
})
