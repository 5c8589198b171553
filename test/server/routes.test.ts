/**
 * Every route through real HTTP on 127.0.0.1: health, version, both split endpoints (JSON and
 * NDJSON), the docs page and its local assets, and the generated OpenAPI document.
 */
import t from 'tap'
import { SCHEMA_VERSION, errorTable, listPackers, listParsers, listTokenizers, optionsSchema } from '../../index.js'
import { FILE, TEXT, postFile, postJson, serve } from './helpers.js'

const doc = '# Title\n\nA first paragraph with some words in it.\n\n## Part\n\nA second paragraph, also with words.\n\n- a list\n- of items\n'

t.test('routes', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1, buildCommit: 'abc1234' })
  t.teardown(s.close)

  t.test('should answer health on both paths', async (t) => {
    for (const path of ['/health', '/docsplit/api/health']) {
      const res = await fetch(s.url + path)
      t.equal(res.status, 200, path)
      t.same(await res.json(), { status: 'ok', version: (await import('../../index.js')).VERSION })
    }
  })

  t.test('should answer version on both paths, with the build commit', async (t) => {
    for (const path of ['/version', '/docsplit/api/version']) {
      const res = await fetch(s.url + path)
      t.equal(res.status, 200)
      const body = await res.json() as Record<string, unknown>
      t.equal(body.status, 'ok')
      t.equal(body.commit, 'abc1234')
      t.type(body.version, 'string')
    }
  })

  t.test('should split text as one JSON response, losslessly', async (t) => {
    const res = await postJson(s.url + TEXT, { text: doc, max_tokens: 16, input_format: 'markdown' })
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type'), /^application\/json/)
    const body = await res.json() as { schema_version: string, chunk_count: number, chunks: Array<{ text: string, token_count: number }>, metadata: { max_tokens: number } }
    t.equal(body.schema_version, SCHEMA_VERSION)
    t.ok(body.chunks.length > 1, 'several chunks')
    t.equal(body.chunk_count, body.chunks.length)
    t.equal(body.chunks.map((c) => c.text).join(''), doc, 'chunks tile the text')
    t.equal(body.metadata.max_tokens, 16)
  })

  t.test('should match format names in any case, on both endpoints as in the CLI', async (t) => {
    const text = await postJson(s.url + TEXT, { text: doc, input_format: 'MarkDown' })
    t.equal(text.status, 200)
    t.equal((await text.json() as { document: { input_format: string } }).document.input_format, 'markdown')
    const file = await postFile(s.url + FILE, doc, 'doc.txt', { input_format: 'MARKDOWN' })
    t.equal(file.status, 200)
    t.equal((await file.json() as { document: { input_format: string } }).document.input_format, 'markdown')
    for (const body of [{ text: doc, splitter: 'RECORD', tokenizer: 'Approx' }, { file: true, splitter: 'RECORD', tokenizer: 'Approx' }]) {
      const { file: asFile, ...options } = body as Record<string, unknown>
      const res = asFile === true ? await postFile(s.url + FILE, doc, 'doc.md', options as Record<string, string>) : await postJson(s.url + TEXT, options)
      t.equal(res.status, 200, `splitter and tokenizer names in any case (${asFile === true ? 'file' : 'text'} endpoint)`)
      t.match((await res.json() as { metadata: unknown }).metadata, { splitter: 'record', tokenizer: 'approx' })
    }
    // A model id as called (dated, fine-tuned) selects its encoding by prefix on both endpoints.
    for (const [tokenizer, asFile] of [['GPT-4o-2024-08-06', false], ['ft:gpt-4o-mini-2024-07-18:My-Org::a1', true]] as const) {
      const res = asFile ? await postFile(s.url + FILE, doc, 'doc.md', { tokenizer }) : await postJson(s.url + TEXT, { text: doc, tokenizer })
      t.equal(res.status, 200, `${tokenizer} (${asFile ? 'file' : 'text'} endpoint)`)
      t.match((await res.json() as { metadata: unknown }).metadata, { tokenizer: 'o200k_base', options: { tokenizer: tokenizer.replace('GPT-4o', 'gpt-4o') } })
    }
    const unknown = await postJson(s.url + TEXT, { text: doc, input_format: 'Markdowm' })
    t.equal(unknown.status, 400, 'a misspelt name is still refused')
    t.equal((await unknown.json() as { code: string }).code, 'DOCSPLIT_UNSUPPORTED_FORMAT')
  })

  t.test('should answer an NDJSON request that fails before its first chunk with a problem, every time', async (t) => {
    const statuses = new Set<number>()
    for (let i = 0; i < 12; i++) {
      const res = await postJson(s.url + TEXT, { text: 'a: [1,\n', input_format: 'yaml' }, { accept: 'application/x-ndjson' })
      statuses.add(res.status)
      t.equal(res.headers.get('content-type')?.split(';')[0], 'application/problem+json')
      t.equal((await res.json() as { code: string }).code, 'DOCSPLIT_PARSE_ERROR')
    }
    t.same([...statuses], [422], 'always 422')
    // A parse error after chunks went out (past the first MiB): the stream ends in an error line.
    const lines = Array.from({ length: 40_000 }, (_, i) => `{"n":${i},"pad":"${'x'.repeat(20)}"}`).join('\n')
    const res = await postJson(s.url + TEXT, { text: `${lines}\n{"broken":\n`, input_format: 'jsonl' }, { accept: 'application/x-ndjson' })
    t.equal(res.status, 200)
    const out = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as { error?: { code: string }, text?: string })
    t.ok(out.length > 2, 'header and chunks')
    t.equal(out[out.length - 1]!.error?.code, 'DOCSPLIT_PARSE_ERROR', 'then one error line')
  })

  // Code too: its parser adds `syntax_aware` to the metadata as it starts.
  const code = { text: 'function a () {\n  return 1\n}\n', input_format: 'javascript', max_tokens: 16 }
  for (const body of [{ text: doc, max_tokens: 16 }, code]) t.test(`should stream the same content as NDJSON when asked (${body.input_format ?? 'markdown'})`, async (t) => {
    const whole = await (await postJson(s.url + TEXT, body)).json() as Record<string, unknown> & { chunks: unknown[] }
    const res = await postJson(s.url + TEXT, body, { accept: 'application/x-ndjson' })
    t.equal(res.status, 200)
    t.match(res.headers.get('content-type'), /^application\/x-ndjson/)
    const lines = (await res.text()).split('\n')
    t.equal(lines.pop(), '', 'ends with a newline')
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    const header = parsed[0]!
    const trailer = parsed[parsed.length - 1]!
    t.same(header, { schema_version: SCHEMA_VERSION, input_format: whole.document && (whole.document as { input_format: string }).input_format, metadata: whole.metadata })
    t.same(parsed.slice(1, -1), whole.chunks, 'one chunk per line, same chunks')
    t.same(trailer, { document: whole.document, reference_definitions: whole.reference_definitions, chunk_count: whole.chunk_count })
  })

  t.test('should split an uploaded file, choosing the format by its name', async (t) => {
    const csv = 'name,age\nada,36\nalan,41\ngrace,85\n'
    const res = await postFile(s.url + FILE, csv, 'people.csv', { max_tokens: '8' })
    t.equal(res.status, 200)
    const body = await res.json() as { schema_version: string, document: { input_format: string }, metadata: { max_tokens: number }, chunks: Array<{ text: string }> }
    t.equal(body.schema_version, SCHEMA_VERSION)
    t.equal(body.document.input_format, 'csv')
    t.equal(body.metadata.max_tokens, 8, 'form field coerced to a number')
    t.ok(body.chunks.length >= 1)
  })

  t.test('should stream an uploaded file as NDJSON too', async (t) => {
    const res = await postFile(s.url + FILE, 'line one\n\nline two\n', 'notes.txt', {}, { accept: 'application/x-ndjson' })
    t.equal(res.status, 200)
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
    t.equal(lines[0]!.schema_version, SCHEMA_VERSION)
    t.ok('chunk_count' in lines[lines.length - 1]!)
  })

  t.test('should serve Swagger UI from local assets only', async (t) => {
    const res = await fetch(s.url + '/docs')
    t.equal(res.status, 200)
    const html = await res.text()
    t.match(html, /swagger-ui/i)
    t.notMatch(html, /https?:\/\/(?!127\.0\.0\.1)/, 'no absolute URL to another host')
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
    t.ok(assets.length > 0)
    for (const asset of assets) {
      t.notMatch(asset, /^(https?:)?\/\//, `local asset ${asset}`)
      const a = await fetch(new URL(asset, s.url + '/docs/').href)
      t.equal(a.status, 200, asset)
      await a.arrayBuffer()
    }
  })

  t.test('should publish OpenAPI 3 generated from the schemas', async (t) => {
    const res = await fetch(s.url + '/openapi.json')
    t.equal(res.status, 200)
    const api = await res.json() as { openapi: string, info: { description: string }, paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, Record<string, unknown>>, required?: string[] } }> }, responses: Record<string, { content?: Record<string, unknown> }> }>> }
    t.match(api.openapi, /^3\./)
    for (const path of [TEXT, FILE, '/health', '/docsplit/api/health', '/version', '/docsplit/api/version']) t.ok(api.paths[path], path)
    const text = api.paths[TEXT]!.post!
    const body = text.requestBody!.content['application/json']!.schema
    t.same(body.required, ['text'])
    const options = optionsSchema().properties as Record<string, Record<string, unknown>>
    for (const [name, schema] of Object.entries(options)) {
      const documented = body.properties[name]
      t.ok(documented, `option ${name} documented`)
      // Each option of the JSON body is its value or null (not given), as in the library.
      const [value, orNull] = (documented?.anyOf ?? []) as Array<Record<string, unknown>>
      t.same(orNull, { type: 'null' }, `${name} may be null`)
      for (const key of ['type', 'minimum', 'maximum']) {
        if (schema[key] !== undefined) t.same(value?.[key], schema[key], `${name}.${key}`)
      }
      if (schema.default !== undefined) t.same(documented!.default, schema.default, `${name}.default`)
      // The text endpoint takes decoded text: its `encoding` says only utf-8 is accepted there.
      if (name === 'encoding') t.match(documented!.description, /^Only `utf-8`/, 'encoding.description (text endpoint)')
      else if (schema.description !== undefined) t.ok(String(documented!.description).startsWith(String(schema.description)), `${name}.description`)
      if (Array.isArray(schema.enum) && schema.enum.length > 0) t.same(value?.enum, schema.enum, `${name}.enum`)
    }
    // A tokenizer is a name of the list or a model name that starts with a registered prefix.
    const [names, prefixed] = ((body.properties.tokenizer!.anyOf as Array<{ anyOf?: unknown }>)[0]!.anyOf ?? []) as Array<{ enum?: string[], pattern?: string }>
    t.ok(names?.enum?.includes('gpt-4o'), 'tokenizer: model names listed')
    t.ok(new RegExp(prefixed?.pattern ?? '$^').test('gpt-4o-2024-08-06'), 'tokenizer: a dated model name matches the pattern')
    t.notOk(new RegExp(prefixed?.pattern ?? '$^').test('gpt-4o 2024'), 'tokenizer: a name with a space does not')
    // The options that name a plugin list what each name means, from the plugins' descriptions.
    const lists: Array<[string, Array<{ names: readonly string[], description?: string }>]> = [
      ['input_format', listParsers().map((p) => ({ names: p.formats, description: p.description }))],
      ['splitter', listPackers().map((p) => ({ names: [p.name], description: p.description }))],
      ['tokenizer', listTokenizers().map((x) => ({ names: [x.name], description: x.description }))],
    ]
    for (const [name, plugins] of lists) {
      const description = String(body.properties[name]!.description)
      t.ok(plugins.length > 0, `${name}: plugins registered`)
      for (const p of plugins) {
        t.ok(p.description, `${p.names[0]} has a description`)
        t.ok(description.includes(`\n- ${p.names.map((n) => `\`${n}\``).join(', ')}: ${p.description}`), `${name}: ${p.names[0]} listed with its description`)
      }
    }
    t.match(String(body.properties.input_format!.description), /\n- `csv`, `tsv`: CSV and TSV: /)
    t.same(api.paths[FILE]!.post!.requestBody!.content['multipart/form-data']!.schema.properties.tokenizer!.description, body.properties.tokenizer!.description, 'the file endpoint too')
    t.ok(text.responses['200']!.content!['application/json'], 'JSON response documented')
    t.ok(text.responses['200']!.content!['application/x-ndjson'], 'NDJSON response documented')
    for (const status of ['400', '408', '413', '415', '422', '429', '431', '500', '503']) {
      t.ok(text.responses[status]?.content?.['application/problem+json'], `problem ${status} documented`)
    }
    type Operation = { operationId?: string, responses: Record<string, { headers?: Record<string, { schema?: { type?: string } }> }> }
    const ops = Object.values(api.paths).flatMap((p) => Object.values(p)) as unknown as Operation[]
    const ids = ops.map((o) => o.operationId)
    t.ok(ids.every((id) => typeof id === 'string'), 'every operation has an operationId')
    t.equal(new Set(ids).size, ids.length, 'operationIds are unique')
    const textOp = text as unknown as Operation
    t.same(Object.keys(textOp.responses['200']!.headers ?? {}), ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'], 'rate-limit headers documented')
    t.equal(textOp.responses['429']!.headers?.['Retry-After']?.schema?.type, 'integer', 'Retry-After documented')
    // A refusal after the count carries the count too (a client backs off on a 400 or a 422 as well).
    for (const status of ['400', '413', '415', '422', '429', '503']) {
      t.equal(textOp.responses[status]!.headers?.['RateLimit-Remaining']?.schema?.type, 'integer', `RateLimit-Remaining documented on ${status}`)
    }
    t.same(Object.keys((api.paths['/health']!.get! as unknown as Operation).responses['503']!.headers ?? {}), ['Retry-After'], 'not on routes that are not limited')
    for (const status of ['408', '417', '431']) t.equal(textOp.responses[status]!.headers, undefined, `nor on ${status}, refused before the count`)
    const health = api.paths['/health']!.get! as unknown as Operation
    t.ok(health.responses['503'], 'health documents its 503 while the service shuts down')
    t.ok(health.responses['400'], 'and its 400 for a malformed request (a bad URL, no Host), as every route')
    t.ok(api.paths[FILE]!.post!.requestBody!.content['multipart/form-data'], 'multipart form documented')
    for (const code of Object.keys(errorTable)) t.match(api.info.description, code, `${code} in the errors table`)
  })
})
