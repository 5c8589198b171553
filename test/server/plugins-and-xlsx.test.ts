/**
 * End to end through the service: a third-party plugin loaded at start (as DOCSPLIT_PLUGINS
 * does) appears in /openapi.json and splits through both endpoints; xlsx goes through the
 * file endpoint and is refused, naming it, by the text endpoint.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { corpusFiles } from '../helpers/corpus.js'
import { FILE, TEXT, postFile, postJson, serve, testPlugins } from './helpers.js'

const ini = fileURLToPath(new URL('../fixtures/plugins/docsplit-plugin-ini/index.js', import.meta.url))
const sample = '[server]\nhost = 127.0.0.1\nport = 8000\n\n[paths]\nroot = /srv\n'
const mixedCase = fileURLToPath(new URL('./fixtures/mixed-case-tokenizer.mjs', import.meta.url))
const quoting = fileURLToPath(new URL('./fixtures/quoting-parser.mjs', import.meta.url))
const served = await serve({ plugins: [...testPlugins(), ini, mixedCase, quoting] })
t.teardown(served.close)

t.test('should list a loaded plugin\'s formats in /openapi.json', async (t) => {
  const spec = await (await fetch(`${served.url}/openapi.json`)).json() as Record<string, unknown>
  t.match(JSON.stringify(spec), /"ini"/)
  const body = (spec as { paths: Record<string, { post: { requestBody: { content: Record<string, { schema: { properties: Record<string, { description: string }> } }> } } }> }).paths[TEXT]!.post.requestBody.content['application/json']!.schema
  t.match(body.properties.input_format!.description, /\n- `ini`, `cfg`: INI configuration files: sections and key = value lines\./, 'with its description')
})

t.test('should describe the chunk fields xlsx declares in the OpenAPI Chunk', async (t) => {
  const spec = await (await fetch(`${served.url}/openapi.json`)).json() as { components: { schemas: Record<string, { properties: Record<string, { type: string, description: string }> }> } }
  const chunk = spec.components.schemas.Chunk!.properties
  t.equal(chunk.sheet?.type, 'string')
  t.match(chunk.row_start?.description, /^xlsx: the first row/)
  t.equal(chunk.text?.type, 'string', 'beside core\'s fields')
})

t.test('should split with a loaded plugin through the text and file endpoints', async (t) => {
  const text = await postJson(`${served.url}${TEXT}`, { text: sample, input_format: 'ini', max_tokens: 12 })
  t.equal(text.status, 200)
  const body = await text.json() as { chunks: Array<{ text: string, path: string[] }>, document: { input_format: string } }
  t.equal(body.chunks.map((c) => c.text).join(''), sample)
  t.ok(body.chunks.some((c) => c.path[0] === 'server'))
  const file = await postFile(`${served.url}${FILE}`, sample, 'app.ini', { max_tokens: '12' })
  t.equal(file.status, 200)
  t.equal((await file.json() as { document: { input_format: string } }).document.input_format, 'ini', 'auto by the uploaded file name')
})

t.test('should take a plugin\'s capitalized name in any case on the text endpoint', async (t) => {
  for (const tokenizer of ['MixedCase-Tok', 'mixedcase-tok', 'MIXEDCASE-TOK']) {
    const res = await postJson(`${served.url}${TEXT}`, { text: sample, tokenizer })
    t.equal(res.status, 200, tokenizer)
    t.equal((await res.json() as { metadata: { tokenizer: string } }).metadata.tokenizer, 'MixedCase-Tok', `${tokenizer}: as registered`)
  }
})

const workbook = corpusFiles('xlsx', ['.xlsx'])[0]
t.test('should split an xlsx upload through the file endpoint', { skip: workbook === undefined ? 'no corpus xlsx' : false }, async (t) => {
  const res = await postFile(`${served.url}${FILE}`, readFileSync(workbook!), 'book.xlsx', { max_tokens: '64' })
  t.equal(res.status, 200)
  const body = await res.json() as { document: { input_format: string, encoding: string }, chunks: Array<Record<string, unknown>> }
  t.equal(body.document.input_format, 'xlsx')
  t.ok(body.chunks.length > 0)
  t.type(body.chunks[0]!.sheet, 'string')
  t.type(body.chunks[0]!.row_start, 'number')
})

t.test('should refuse xlsx on the text endpoint, naming the file endpoint', async (t) => {
  const res = await postJson(`${served.url}${TEXT}`, { text: 'PK', input_format: 'xlsx' })
  t.equal(res.status, 400)
  const problem = await res.json() as { code: string, detail: string }
  t.equal(problem.code, 'DOCSPLIT_FORMAT_NEEDS_FILE')
  t.match(problem.detail, /\/docsplit\/api\/split\/file/)
})

t.test('should take a list option as repeated form parts (one value each) or as one comma-separated part', async (t) => {
  const { buildXlsx } = await import('../helpers/xlsx-build.js')
  const book = buildXlsx([{ name: 'North, East', rows: [['n'], ['1']] }, { name: 'South', rows: [['s'], ['2']] }, { name: 'West', rows: [['w'], ['3']] }])
  const sheetsOf = async (sheets: string[]): Promise<unknown[]> => {
    const form = new FormData()
    for (const name of sheets) form.append('sheets', name)
    form.append('file', new Blob([book]), 'book.xlsx')
    const res = await fetch(`${served.url}${FILE}`, { method: 'POST', body: form })
    t.equal(res.status, 200, `sheets ${JSON.stringify(sheets)}`)
    const body = await res.json() as { chunks: Array<{ sheet: string }> }
    return [...new Set(body.chunks.map((c) => c.sheet))]
  }
  t.same(await sheetsOf(['West', 'North, East']), ['West', 'North, East'], 'repeated parts: a name with a comma stays whole, in the order given')
  t.same(await sheetsOf(['South,West']), ['South', 'West'], 'one part: a comma-separated list')

  const form = new FormData()
  form.append('max_tokens', '64')
  form.append('max_tokens', '128')
  form.append('file', new Blob(['text']), 'a.txt')
  const twice = await fetch(`${served.url}${FILE}`, { method: 'POST', body: form })
  t.equal(twice.status, 400, 'any other option given twice is refused')
  t.match((await twice.json() as { detail: string }).detail, /"max_tokens" is given twice/)

  const many = new FormData()
  for (let i = 0; i < 102; i++) many.append('sheets', 'West')
  many.append('file', new Blob([book]), 'book.xlsx')
  const tooMany = await fetch(`${served.url}${FILE}`, { method: 'POST', body: many })
  t.equal(tooMany.status, 413, '102 repeated parts: more than the 101 documented')
  t.match((await tooMany.json() as { detail: string }).detail, /up to 101 times/)
  const proto = new FormData()
  proto.append('__proto__', 'x')
  proto.append('file', new Blob(['text']), 'a.txt')
  const refused = await fetch(`${served.url}${FILE}`, { method: 'POST', body: proto })
  t.equal(refused.status, 400)
  t.match(await refused.json(), { code: 'DOCSPLIT_UNKNOWN_OPTION', detail: /^unknown option "__proto__"; accepted: / }, 'an unknown option as any other name, not invalid JSON')
})

t.test('a third-party plugin\'s failure message is its own: sent sanitized, not searched for document text (README, Privacy)', async (t) => {
  const res = await postJson(`${served.url}${TEXT}`, { text: 'Quarterly figures: secret\n', input_format: 'quoting-test' })
  t.equal(res.status, 422)
  const problem = await res.json() as { code: string, detail: string }
  t.equal(problem.code, 'DOCSPLIT_PARSE_ERROR')
  t.equal(problem.detail, 'line 1, column 1: unexpected "Quarterly figures: s" in <path>', 'the path goes, the quoted text is the plugin\'s to leave out')
})
