import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { isAlias, isMap, isScalar, isSeq, parseAllDocuments } from 'yaml'
import yaml from '../../../plugins/formats/yaml/index.js'
import { MAX_DOCUMENT } from '../../../plugins/formats/yaml/handler.js'
import type { DocEvent, RecordEvent } from '../../../core/events.js'
import { DocsplitError } from '../../../core/errors.js'
import { split } from '../../../index.js'
import { tokenizerByName } from '../../../core/registry.js'
import { assertTiles, collectEvents, recordBoundaries } from '../../helpers/events.js'
import { corpusFiles, corpusMissing } from '../../helpers/corpus.js'
import { checkParser, invariantProblems } from '../../../testing.js'

const tokenizerName = 'approx'
/** The default tokenizer, which the parser estimates by (ctx.estimate). */
const tokenizer = await tokenizerByName(tokenizerName).load()

const records = (events: DocEvent[]): RecordEvent[] => events.filter((e): e is RecordEvent => e.type === 'record')
const summary = (events: DocEvent[]): unknown[] => events.map((e) => e.type === 'record' ? [e.label, e.text] : e.type === 'enter' ? ['enter', e.label] : e.type)
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

async function rejects (text: string): Promise<DocsplitError> {
  try {
    await collectEvents(yaml, text)
  } catch (e) {
    if (e instanceof DocsplitError) return e
    throw e
  }
  throw new Error('accepted')
}

/** The documents of a YAML text as JS values (aliases bounded by yaml's default limit). */
const docsOf = (text: string): unknown[] => parseAllDocuments(text).map((d) => d.toJS() as unknown)

t.test('plugin', async (t) => {
  t.same(yaml.formats, ['yaml', 'yml'])
  t.same(yaml.extensions, ['.yaml', '.yml'])
  t.equal(yaml.defaultSplitter, 'record')
  t.ok(yaml.detect!('---\na: 1\n') > 0.5)
  t.ok(yaml.detect!('name: x\nversion: 2\nitems:\n  - a\n') > 0)
  t.equal(yaml.detect!('# Title\n\nSome prose.\n'), 0)
  t.equal(yaml.detect!('# Title\n\nSome text.\n\n## Sub\n\n' + '- item\n'.repeat(20)), 0, 'markdown: headings (comments to YAML), a paragraph, a long list')
  const keys = Array.from({ length: 15 }, (_, i) => `key${i}: value ${i}\n`).join('')
  t.ok(yaml.detect!(keys + 'urn:example:thing: 1\n') > 0.5, 'a key with colons in it is no prose')
  t.ok(yaml.detect!('schedule:\n  - a\n' + keys + '12:30: lunch\n') > 0.5, 'nor a time as a key')
  t.ok(yaml.detect!(keys + '---\nJust a sentence as a document.\n') > 0.5, 'a document that is a plain scalar')
  t.equal(yaml.detect!('---\ntitle: x\n---\n# Heading\n\nSome prose here.\nMore prose.\n'), 0, 'markdown with front matter')
  t.equal(yaml.detect!('- buy milk\n- call Bob: about the car\n  - tomorrow\n\n[docs]: https://example.com "Docs"\n'), 0, 'a markdown list and a link definition')
  t.equal(yaml.detect!('class Foo:\n    def __init__(self):\n        self.x = 1\n\n    def run(self):\n        return self.x\n'), 0, 'a Python class')
  t.ok(yaml.detect!('description:\n  A plain scalar\n  on two lines.\nscript: |\n  npm ci\n  npm test -- --reporter=dot\nitems:\n  - a\n') > 0, 'block and multi-line scalars')
  const bgl = Array.from({ length: 10 }, (_, i) => `- ${1117838570 + i} 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 RAS KERNEL INFO ciod: cache parity error ${i}\n`).join('')
  t.equal(yaml.detect!(bgl), 0, 'log lines that start with `- ` and an epoch timestamp')
  t.equal(yaml.detect!('081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 terminating\n081109 203807 222 INFO dfs.DataNode$PacketResponder: PacketResponder 0 terminating\n'), 0, 'HDFS lines: a timestamp, then `name: message`')
  t.ok(yaml.detect!('- 2024-01-01\n- 2024-01-02\nwhen: 2024-01-01 10:00:00\n') > 0, 'dates as YAML values')
})

const stream = '# lead\n%YAML 1.2\n---\n# c1\na: 1 # tail\n\n# c2 about b\nb:\n  x: |\n    lit\n    # in literal\n  # inner\n# c3\nc: &x [1, 2]\n' +
  '# before doc2\n---\n- a\n# c seq\n- b\n...\n# after end\n---\nfoo\n'

t.test('a stream: one record per document; a long document is opened into its items', async (t) => {
  const ev = await collectEvents(yaml, stream, { max_tokens: 100000 })
  assertTiles(ev, stream)
  t.same(summary(ev), [
    ['doc[0]', stream.slice(0, stream.indexOf('# before doc2'))],
    ['doc[1]', stream.slice(stream.indexOf('# before doc2'), stream.indexOf('# after end'))],
    ['doc[2]', '# after end\n---\nfoo\n'],
  ])
  const opened = await collectEvents(yaml, stream, { max_tokens: 8 })
  assertTiles(opened, stream)
  t.same(summary(opened), [
    ['enter', 'doc[0]'],
    // the blank line after a record near the budget is a block: it cannot push the record over
    ['a', '# lead\n%YAML 1.2\n---\n# c1\na: 1 # tail\n'],
    'block',
    ['b', '# c2 about b\nb:\n  x: |\n    lit\n    # in literal\n  # inner\n'],
    ['c', '# c3\nc: &x [1, 2]\n'],
    'exit',
    ['enter', 'doc[1]'],
    ['[0]', '# before doc2\n---\n- a\n'],
    ['[1]', '# c seq\n- b\n...\n'],
    'exit',
    ['doc[2]', '# after end\n---\nfoo\n'],
  ])
})

t.test('a single document: its top-level pairs or items, comments with the item below', async (t) => {
  const map = 'key: |\n  # not a comment\n  text\n# real\nnext: 1\n"quoted key": {a: 1}\n? complex\n: v\n'
  const ev = await collectEvents(yaml, map)
  assertTiles(ev, map)
  t.same(summary(ev), [['enter', 'doc[0]'], ['key', 'key: |\n  # not a comment\n  text\n'], ['next', '# real\nnext: 1\n'], ['quoted key', '"quoted key": {a: 1}\n'], ['complex', '? complex\n: v\n'], 'exit'])
  const seq = '- a\n- b: 1\n  c: 2\n  # indented: stays with b\n# about c\n- c\n'
  t.same(summary(await collectEvents(yaml, seq)), [['enter', 'doc[0]'], ['[0]', '- a\n'], ['[1]', '- b: 1\n  c: 2\n  # indented: stays with b\n'], ['[2]', '# about c\n- c\n'], 'exit'])
  t.same(summary(await collectEvents(yaml, 'just a scalar\n')), [['doc[0]', 'just a scalar\n']])
  t.same(summary(await collectEvents(yaml, '[1, 2, 3]\n')), [['doc[0]', '[1, 2, 3]\n']], 'a flow collection is one record')
  const comment = await collectEvents(yaml, '# only a comment\n')
  assertTiles(comment, '# only a comment\n')
  t.same(await collectEvents(yaml, ''), [])
})

t.test('line ends: a lone CR is one, as LF and CRLF are (YAML 1.2), and stays in the text', async (t) => {
  const lf = '# lead\na: 1\nb:\n  - x\n  - y\n# about c\nc: 3\n---\nd: 4\n'
  const expected = summary(await collectEvents(yaml, lf))
  for (const [name, end] of [['CRLF', '\r\n'], ['lone CR', '\r']] as const) {
    const text = lf.replaceAll('\n', end)
    const ev = await collectEvents(yaml, text)
    assertTiles(ev, text)
    t.same(summary(ev), JSON.parse(JSON.stringify(expected).replaceAll('\\n', end === '\r' ? '\\r' : '\\r\\n')), `${name}: the records of the LF text, with their own line ends`)
    t.equal(yaml.detect!(text), yaml.detect!(lf), `${name}: detected by content as the LF text is`)
  }
})

const api = '# the API\nopenapi: 3.0.0\npaths:\n  /pets:\n    get:\n      summary: List all pets\n      operationId: listPets\n    post:\n      summary: Create a pet\n    # end of /pets\n\n' +
  '  # about owners\n  /owners:\n    - name: first owner\n      id: 1\n    - name: second owner\n# components\ncomponents: {schemas: {Pet: {type: object}}}\n'

t.test('a record over the budget whose value is a block mapping or sequence is opened, down while over', async (t) => {
  const kinds = (events: DocEvent[]): unknown[] => events.map((e) => e.type === 'record' ? [e.label, e.text] : e.type === 'enter' ? [e.kind, e.label] : e.type === 'block' ? [e.kind, e.text] : e.type)
  const ev = await collectEvents(yaml, api, { max_tokens: 8 })
  assertTiles(ev, api)
  t.same(kinds(ev), [
    ['document', 'doc[0]'],
    ['openapi', '# the API\nopenapi: 3.0.0\n'],
    // the key line of an opened record is a block before its first record: a record that fits
    // is not pushed over the budget by the keys above it
    ['mapping', 'paths'],
    ['key', 'paths:\n'],
    ['mapping', '/pets'],
    ['key', '  /pets:\n'],
    ['mapping', 'get'],
    ['key', '    get:\n'],
    ['summary', '      summary: List all pets\n'],
    ['operationId', '      operationId: listPets\n'],
    'exit',
    // one item that does not open: not opened; the trailing comment and blank line stay with it
    ['post', '    post:\n      summary: Create a pet\n    # end of /pets\n'],
    ['whitespace', '\n'],
    'exit',
    ['sequence', '/owners'],
    ['key', '  # about owners\n  /owners:\n'],
    // a record starts at the start of its line: `- ` stays with the item's first key
    ['mapping', '[0]'],
    ['name', '    - name: first owner\n'],
    ['id', '      id: 1\n'],
    'exit',
    ['[1]', '    - name: second owner\n'],
    'exit',
    'exit',
    // a flow collection is never opened
    ['components', '# components\ncomponents: {schemas: {Pet: {type: object}}}\n'],
    'exit',
  ])
  checkOpened(checkRecordsWhole(ev, api), api, 8)
  checkComments(ev, api)
  // within the budget, the top-level keys are the records
  t.same(records(await collectEvents(yaml, api, { max_tokens: 512 })).map((r) => r.label), ['openapi', 'paths', 'components'])
  // a mapping of one key over a larger one opens (an envelope); over a scalar, it does not
  const envelope = 'data:\n  items:\n    - id: 1\n    - id: 2\n'
  t.same(kinds(await collectEvents(yaml, envelope, { max_tokens: 4 })), [['document', 'doc[0]'], ['mapping', 'data'], ['key', 'data:\n'], ['sequence', 'items'],
    ['key', '  items:\n'], ['[0]', '    - id: 1\n'], ['[1]', '    - id: 2\n'], 'exit', 'exit', 'exit'])
  const lone = 'data:\n  text: a long scalar of many words here\n'
  t.same(kinds(await collectEvents(yaml, lone, { max_tokens: 4 })), [['document', 'doc[0]'], ['data', lone], 'exit'])
  // a record that fits is not pushed over the budget by the key lines of the records opened above it
  const keyed = 'jobs:\n\n  changes:\n    permissions:\n      contents: read  # to fetch a list of changed files\n      pull-requests: read  # to read pull requests\n    runs-on: ubuntu-latest\n'
  const longest = Math.max(...keyed.split('\n').slice(4, 7).map((line) => tokenizer.count(`${line}\n`)))
  const fits = await split(keyed, { input_format: 'yaml', tokenizer: tokenizerName, max_tokens: longest })
  t.same(fits.chunks.filter((c) => c.protected).map((c) => c.text), [], `no record over ${longest} tokens`)
  t.same(fits.chunks.map((c) => c.path.at(-1)), ['jobs', 'contents', 'pull-requests', 'runs-on'], 'the key lines alone, then each record')
  // nor by the blank lines after it, unless they are a kept block scalar's (`|+`)
  const items = Array.from({ length: 5 }, (_, i) => `- name: item ${i}\n  text: some words here ${i}\n`)
  const spaced = await split(items.join('\n\n'), { input_format: 'yaml', tokenizer: tokenizerName, max_tokens: Math.max(...items.map((i) => tokenizer.count(i))) })
  t.same(spaced.chunks.filter((c) => c.kinds.includes('record')).map((c) => c.text), items, 'each item alone, whole, not over the budget')
  const kept = 'a: |+\n  keep these words and the blank lines after them\n\n\nb: 1\n'
  t.same(records(await collectEvents(yaml, kept, { max_tokens: 8 })).map((r) => r.text), ['a: |+\n  keep these words and the blank lines after them\n\n\n', 'b: 1\n'])
  // the chunks' path: the keys of the records opened
  const r = await split(api, { input_format: 'yaml', max_tokens: 32 })
  t.same(r.chunks.map((c) => c.path.join(' > ')), ['doc[0] > openapi', 'doc[0] > paths > /pets > get', 'doc[0] > paths > /pets > post', 'doc[0] > paths > /owners', 'doc[0] > components'])
})

/** A generated OpenAPI description: `n` paths, each with operations, parameters and responses; one long description. */
function openapi (n: number): string {
  let out = 'openapi: 3.0.3\ninfo:\n  title: Generated API\n  version: 1.0.0\n  description: An API made up to test splitting.\npaths:\n'
  for (let i = 0; i < n; i++) {
    out += `  /things${i}/{id}:\n`
    out += '    parameters:\n      - name: id\n        in: path\n        required: true\n        schema:\n          type: string\n'
    for (const op of ['get', 'put', 'delete']) {
      out += `    ${op}:\n      summary: ${op} a thing of kind ${i}\n      operationId: ${op}Thing${i}\n      tags: [things, kind${i}]\n`
      if (i === 1 && op === 'get') out += '      description: |\n' + Array.from({ length: 30 }, (_, k) => `        Line ${k} of a long description that explains the operation at length.\n`).join('')
      out += '      responses:\n'
      for (const code of ['200', '404']) {
        out += `        '${code}':\n          description: ${code === '200' ? 'the thing' : 'not found'}\n          content:\n            application/json:\n              schema:\n                $ref: '#/components/schemas/Thing${i}'\n`
      }
    }
  }
  out += 'components:\n  schemas:\n'
  for (let i = 0; i < n; i++) {
    out += `    # the thing of kind ${i}\n    Thing${i}:\n      type: object\n      required: [id]\n      properties:\n        id:\n          type: string\n        name:\n          type: string\n          description: The name of the thing, as shown to people.\n        count:\n          type: integer\n`
  }
  return out
}

t.test('an OpenAPI description: paths opened down to operations and responses; only leaves protected', async (t) => {
  const text = openapi(12)
  for (const maxTokens of [64, 128, 512]) {
    const r = await split(text, { input_format: 'yaml', tokenizer: tokenizerName, max_tokens: maxTokens })
    const events = await collectEvents(yaml, text, { max_tokens: maxTokens })
    t.same(invariantProblems(r, text, { tokenizer, recordBoundaries: recordBoundaries(events) }), [], `${maxTokens}: lossless, within the budget, records whole`)
    t.equal(r.chunks.map((c) => c.text).join(''), text)
    const parts = checkRecordsWhole(events, text)
    checkOpened(parts, text, maxTokens)
    checkComments(events, text)
    // every chunk parses back alone (a slice of whole items, with the key lines above its first)
    const broken = r.chunks.filter((c) => parseAllDocuments(c.text).some((d) => d.errors.length > 0)).map((c) => c.index)
    t.same(broken, [], `${maxTokens}: every chunk parses alone`)
    // a protected chunk is one record that does not open (the long description)
    const leaves = new Map(parts.filter((p) => p.type === 'record').map((p) => [p.start, p]))
    const protectedChunks = r.chunks.filter((c) => c.protected)
    for (const c of protectedChunks) {
      const p = leaves.get(c.char_start)
      t.ok(p !== undefined && p.end === c.char_end && !opensNode(p.value), `${maxTokens}: protected chunk ${c.index} (${c.path.join(' > ')}) is one record that does not open`)
    }
    t.ok(protectedChunks.length <= 1, `${maxTokens}: ${protectedChunks.length} protected`)
    const paths = r.chunks.filter((c) => c.path[1] === 'paths')
    t.ok(paths.length > 12 && paths.every((c) => /^\/things\d+\/\{id\}$/.test(c.path[2] ?? '')), `${maxTokens}: paths > /thingsN/{id} (${paths.length} chunks)`)
    if (maxTokens <= 128) t.ok(paths.some((c) => c.path[3] === 'get' && c.path[4] === 'responses'), `${maxTokens}: paths > /things > get > responses`)
  }
})

t.test('invalid YAML: parse error with line and column, no document text', async (t) => {
  const e = await rejects('a: 1\nsecret: "unterminated\n')
  t.equal(e.code, 'DOCSPLIT_PARSE_ERROR')
  t.match(e.message, /^invalid YAML at line \d+, column \d+: [a-z ]+$/)
  t.notMatch(e.message, /secret|unterminated/)
  // Duplicate keys are split like any others (the text is split, never loaded as values).
  const duplicates = await split('a: 1\na: 2\n', { input_format: 'yaml', max_tokens: 8 })
  t.same(duplicates.chunks.map((c) => c.path), [['doc[0]', 'a'], ['doc[0]', 'a']])
  t.match((await rejects('a: [1, 2\n')).message, /^invalid YAML at line \d+, column \d+: /)
  t.match((await rejects('- a\nb: 1\n')).message, /^invalid YAML at line 2, column 1: /)
})

t.test('large YAML: a document past MAX_DOCUMENT is a limit before parsing; a long stream of small documents splits', async (t) => {
  const item = (i: number): string => `- name: item ${i}\n  tags: [a, b]\n`
  let one = '# a big list\n'
  for (let i = 0; one.length <= MAX_DOCUMENT; i++) one += item(i)
  const e = await rejects('---\nsmall: 1\n---\n' + one)
  t.equal(e.code, 'DOCSPLIT_LIMIT_EXCEEDED')
  t.match(e.message, /^the YAML document at line 3 has \d+ characters; a document is split up to 4194304 /)
  t.notMatch(e.message, /item|tags/, 'no document text')
  // The same text as documents of a few KB each: split, every item kept.
  let stream = ''
  for (let i = 0; stream.length <= MAX_DOCUMENT + 100_000; i++) stream += (i % 100 === 0 ? '---\n' : '') + item(i)
  const events = await collectEvents(yaml, stream)
  assertTiles(events, stream)
  t.ok(records(events).length > 1000, `${records(events).length} records`)
  // Many keys in one mapping: linear (yaml's unique-key check, quadratic, is off).
  const keys = Array.from({ length: 30_000 }, (_, i) => `key_${i}: "value ${i}"`).join('\n') + '\n'
  const started = performance.now()
  t.equal(records(await collectEvents(yaml, keys)).length, 30_000)
  t.comment(`30,000 keys in ${Math.round(performance.now() - started)} ms`)
})

t.test('hostile YAML: aliases never expanded, deep nesting is a limit, never a hang', async (t) => {
  let bomb = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
  for (let i = 1; i < 10; i++) {
    const prev = String.fromCharCode(97 + i - 1)
    const cur = String.fromCharCode(97 + i)
    bomb += `${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]\n`
  }
  const ev = await collectEvents(yaml, bomb)
  assertTiles(ev, bomb)
  t.equal(records(ev).length, 10, 'billion laughs: ten records of their own text')
  const r = await split(bomb, { input_format: 'yaml', max_tokens: 64 })
  t.equal(r.chunks.map((c) => c.text).join(''), bomb, 'split() returns the text, not the expansion')
  const deep = await rejects('['.repeat(100_000) + ']'.repeat(100_000))
  t.equal(deep.code, 'DOCSPLIT_LIMIT_EXCEEDED')
  t.equal((await rejects('a: ' + '{b: '.repeat(5000) + '1' + '}'.repeat(5000) + '\n')).code, 'DOCSPLIT_LIMIT_EXCEEDED')
  const seq = '- '.repeat(10_000) + 'x\n'
  try {
    assertTiles(await collectEvents(yaml, seq), seq)
    t.pass('10,000 nested block sequences split')
  } catch (e) {
    t.ok(e instanceof DocsplitError, '10,000 nested block sequences: a DocsplitError')
  }
})

/** The parser's events for `text`, and how many characters it estimated. */
async function estimating (text: string, maxTokens: number): Promise<{ events: DocEvent[], estimated: number }> {
  const events: DocEvent[] = []
  let estimated = 0
  const handler = await yaml.create({
    options: { input_format: 'yaml', max_tokens: maxTokens, splitter: 'record', tokenizer: 'approx', overlap_tokens: 0, encoding: 'utf-8' },
    estimate: (s) => { estimated += s.length; return tokenizer.count(s) },
    confirmOver: () => true,
    emit: (e) => { events.push(e) },
    fail: (code, message) => { throw new DocsplitError(code, message) },
  })
  ;(handler.write as (p: string) => void)(text)
  handler.end()
  return { events, estimated }
}

/** `levels` nested mappings, a short key beside each next level, and at the bottom a scalar of `words` `times` over, on one line. */
function nested (levels: number, words: string, times: number): string {
  let out = ''
  for (let i = 0; i < levels; i++) out += `${' '.repeat(i)}s${i}: x\n${' '.repeat(i)}k${i}:\n`
  return out + `${' '.repeat(levels)}text: ${words.repeat(times)}end\n`
}

const depthOf = (events: DocEvent[]): number => {
  let depth = 0
  let most = 0
  for (const e of events) {
    if (e.type === 'enter') most = Math.max(most, ++depth)
    else if (e.type === 'exit') depth--
  }
  return most
}

t.test('deep nesting over the budget: each level estimated on a prefix, the total bounded', async (t) => {
  // 200 levels over 2 MB of dense text: each level is over the budget a few prefixes in (read
  // whole, the levels would cost 200 times the text)
  const dense = nested(200, 'lorem ipsum dolor sit amet, consectetur adipiscing elit ', 36_000)
  const d = await estimating(dense, 512)
  assertTiles(d.events, dense)
  t.equal(depthOf(d.events), 200, 'the document and 199 levels opened, down to the mapping of the lone scalar')
  checkOpened(checkRecordsWhole(d.events, dense), dense, 512)
  t.ok(d.estimated < 4 * dense.length, `${d.estimated} characters estimated for ${dense.length}`)
  // sparse: each level is over the budget only well into its text; past the allowance, no more opening
  const sparse = nested(400, 'x' + ' '.repeat(1000), 3000)
  const started = performance.now()
  const s = await estimating(sparse, 2048)
  assertTiles(s.events, sparse)
  t.ok(s.estimated <= 16 * sparse.length, `${s.estimated} characters estimated for ${sparse.length}`)
  t.ok(depthOf(s.events) > 2, `${depthOf(s.events)} levels opened`)
  t.comment(`sparse: ${Math.round(performance.now() - started)} ms`)
})

t.test('nesting past the limit, again and again, leaves the process whole', async (t) => {
  // A stack overflow in yaml's composer once left V8 unable to compile a regexp: the next
  // document killed the process. Deep documents are now refused before they are composed.
  const deep = [
    '- '.repeat(20_000) + 'x',
    '['.repeat(1000) + ']'.repeat(1000),
    Array.from({ length: 900 }, (_, i) => ' '.repeat(i) + `k${i}:`).join('\n') + ' v\n',
  ]
  for (let round = 0; round < 3; round++) {
    for (const text of deep) t.equal((await rejects(text)).code, 'DOCSPLIT_LIMIT_EXCEEDED')
    const front = await split('---\n' + '- '.repeat(20_000) + 'x\n---\n# Title\n', { input_format: 'markdown' })
    t.equal(front.document.front_matter, null, 'front matter that deep is not parsed')
  }
  const ok = Array.from({ length: 400 }, (_, i) => ' '.repeat(i) + `k${i}:`).join('\n') + ' v\n'
  t.ok((await split(ok, { input_format: 'yaml' })).chunks.length > 0, '400 levels split')
})

// ---- generated documents ----

const word = fc.stringMatching(/^[a-z][a-z0-9_]{0,7}$/)
const scalarText = fc.oneof(
  fc.constantFrom('plain', '42', '-1.5', 'true', 'null', '~', '"double # not a comment"', "'single ''quoted'''", '"é😀 \\u00e9"', 'http://x.y/z#frag', 'a b c'),
  fc.string({ unit: 'grapheme', maxLength: 10 }).map((s) => JSON.stringify(s)),
)
/** A value written after `key:` (with its own line breaks), indented for a top-level key. */
const valueText = fc.oneof(
  scalarText.map((s) => ` ${s}\n`),
  scalarText.map((s) => ` ${s} # trailing comment\n`),
  fc.constantFrom(
    ' |\n  line one\n  # not a comment\n\n  line three\n',
    ' >-\n  folded\n  text\n',
    ' |+\n  keep\n\n',
    '\n  a: 1\n  # inner comment\n  b: [1, 2]\n',
    '\n  - x\n  - y: 2\n',
    '\n- zero\n- indented\n',
    '\n  a: &anchor {x: 1}\n  b: *anchor\n',
    ' {a: 1, b: [x, "y"]}\n',
    ' word\n  continued\n',
    ' !!str 123\n',
    ' &solo plain\n',
  ),
)
const commentLines = fc.array(fc.constantFrom('# a comment', '#', '# é😀 --- not a marker'), { maxLength: 2 }).map((xs) => xs.map((x) => x + '\n').join(''))
const blank = fc.constantFrom('', '', '\n', '\n\n')
const mappingDoc = fc.uniqueArray(fc.tuple(word, valueText, commentLines, blank), { selector: (x) => x[0], minLength: 1, maxLength: 6 })
  .map((items) => items.map(([key, value, comments, b]) => ({ label: key, comments, body: `${key}:${value}`, blank: b })))
const seqDoc = fc.array(fc.tuple(fc.oneof(scalarText.map((s) => ` ${s}\n`), fc.constantFrom(' a: 1\n  b: 2\n', ' |\n  lit\n  # in\n', ' [1, 2]\n', ' - nested\n  - seq\n')), commentLines, blank), { minLength: 1, maxLength: 6 })
  .map((items) => items.map(([value, comments, b], k) => ({ label: `[${k}]`, comments, body: `-${value}`, blank: b })))
/** A block mapping or sequence nested a few levels, with long scalars: records over a small budget are opened, level by level. */
interface Tree { seq: boolean, items: Array<{ key: string, value: Tree | string, comment: string, blank: string }>, trailer: string }
const leafText = fc.oneof(
  scalarText,
  fc.array(word, { minLength: 1, maxLength: 16 }).map((ws) => ws.join(' ')),
  fc.array(word, { minLength: 1, maxLength: 6 }).map((ws) => '|' + ws.join('\n')),
)
const tree: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.record({
    seq: fc.boolean(),
    items: fc.uniqueArray(fc.record({
      key: word,
      value: fc.oneof({ depthSize: 'small', maxDepth: 4 }, leafText, tie('tree')),
      comment: fc.constantFrom('', '', '# note\n', '#\n# two lines\n'),
      blank: fc.constantFrom('', '', '\n'),
    }), { selector: (i) => i.key, minLength: 1, maxLength: 5 }),
    trailer: fc.constantFrom('', '', '# after the last item\n'),
  }),
})).tree
/**
 * YAML for a tree at `indent`; `compact`: its first item goes on the current line (after `- `).
 * Comment lines above an item are at its indentation or at column 0; comment lines after the
 * last item, at its indentation (more than the item after them: they go with the record before).
 */
function render (t: Tree, indent: number, compact: boolean): string {
  const pad = ' '.repeat(indent)
  let out = ''
  t.items.forEach((item, k) => {
    const first = k === 0 && compact
    if (!first) out += item.comment.replace(/^(?=.)/gm, k % 2 === 0 ? pad : '')
    out += (first ? '' : pad) + (t.seq ? '-' : `${item.key}:`)
    const v = item.value
    if (typeof v === 'string') {
      out += v.startsWith('|') ? ' |\n' + v.slice(1).split('\n').map((l) => `${pad}  ${l}\n`).join('') : ` ${v}\n`
    } else {
      out += t.seq ? ' ' + render(v, indent + 2, true) : '\n' + render(v, indent + 2, false)
    }
    out += item.blank
  })
  return out + (t.trailer === '' ? '' : pad + t.trailer)
}
const nestedDoc = fc.oneof(
  fc.uniqueArray(fc.tuple(word, tree, commentLines, blank), { selector: (x) => x[0], minLength: 1, maxLength: 4 })
    .map((items) => items.map(([key, sub, comments, b]) => ({ label: key, comments, body: `${key}:\n${render(sub, 2, false)}`, blank: b }))),
  fc.array(fc.tuple(tree, commentLines, blank), { minLength: 1, maxLength: 4 })
    .map((items) => items.map(([sub, comments, b], k) => ({ label: `[${k}]`, comments, body: `- ${render(sub, 2, true)}`, blank: b }))),
)
const docItems = fc.oneof(mappingDoc, seqDoc, nestedDoc)
const yamlStream = fc.tuple(fc.array(docItems, { minLength: 1, maxLength: 4 }), fc.boolean(), fc.boolean(), fc.boolean(), commentLines)
  .map(([docs, directive, firstMarker, ends, lead]) => {
    let text = lead + (directive ? '%YAML 1.2\n---\n' : firstMarker || docs.length > 1 ? '---\n' : '')
    const docStarts: number[] = [0]
    const itemStarts: Array<Array<{ start: number, label: string }>> = []
    docs.forEach((items, d) => {
      if (d > 0) {
        text += ends ? '...\n' : ''
        docStarts.push(text.length)
        text += '---\n'
      }
      const starts: Array<{ start: number, label: string }> = []
      items.forEach((item, k) => {
        starts.push({ start: k === 0 ? docStarts[d]! : text.length, label: item.label })
        text += item.comments + item.body + item.blank
      })
      itemStarts.push(starts)
    })
    return { text, docStarts, itemStarts }
  })

/** A YAML node as plain data, aliases as written (`*a`: a record may hold an alias whose anchor is in another). */
function shape (node: unknown): unknown {
  if (isAlias(node)) return { alias: node.source }
  if (isScalar(node)) return { scalar: node.value }
  if (isMap(node)) return { map: node.items.map((p) => [shape(p.key), shape(p.value)]) }
  if (isSeq(node)) return { seq: node.items.map((v) => shape(v)) }
  return null
}

interface Collection { items: unknown[], flow?: boolean }
const isCollection = (node: unknown): node is Collection => isMap(node) || isSeq(node)
/** A block collection of two items or more, or of one that is such (an envelope): a record over the budget must be opened. */
function opensNode (node: unknown): boolean {
  for (let n = node; isCollection(n) && n.flow !== true; n = isMap(n) ? n.items[0]?.value : n.items[0]) {
    if (n.items.length !== 1) return n.items.length > 1
  }
  return false
}
/** The last document of a text, as yaml reads it (duplicate keys allowed, as the parser keeps them). */
const lastContents = (text: string): unknown => parseAllDocuments(text, { uniqueKeys: false }).at(-1)?.contents ?? null

/** A record or an opened record: its span, and its item's value in the document. */
interface Part { type: 'record' | 'enter', start: number, end: number, value: unknown, label?: string }

/**
 * Records whole, at any depth: each record parsed alone is its item, alone in the collection
 * it belongs to; the first record of an opened record also holds that record's key line (and
 * so on up while they start together), so it parses to that chain of single items. Labels are
 * the keys (scalar keys of 80 characters or fewer) or `[k]`. Returns the records and opened
 * records with their values, for checks of what was opened.
 */
function checkRecordsWhole (events: DocEvent[], text: string): Part[] {
  const docs = parseAllDocuments(text, { uniqueKeys: false })
  const docAt = (label: string | undefined): unknown => docs[Number(/^doc\[(\d+)\]$/.exec(label ?? '')?.[1] ?? NaN)]?.contents ?? null
  interface Level { node: unknown, next: number, start: number, key?: unknown, part?: Part }
  const stack: Level[] = []
  const parts: Part[] = []
  /** The next item of the innermost opened record: its key (maps) and value. */
  const take = (label: string | undefined): { key?: unknown, value: unknown } => {
    const top = stack.at(-1)!
    if (!isCollection(top.node)) throw new Error(`${label ?? ''}: opened, but not a collection`)
    const k = top.next++
    const item = top.node.items[k]
    if (item === undefined) throw new Error(`${label ?? ''}: more records than items`)
    const pair = isMap(top.node) ? item as { key: unknown, value: unknown } : undefined
    const key = pair?.key
    const expected = pair === undefined ? `[${k}]` : isScalar(key) && typeof key.source === 'string' && key.source !== '' && key.source.length <= 80 ? key.source : undefined
    if (expected !== undefined && label !== expected) throw new Error(`label ${String(label)}, expected ${expected}`)
    return pair === undefined ? { value: item } : { key, value: pair.value }
  }
  const single = (node: unknown, key: unknown, value: unknown): unknown => isMap(node) ? { map: [[shape(key), value]] } : { seq: [value] }
  for (const e of events) {
    if (e.type === 'enter') {
      if (e.kind === 'document') {
        stack.push({ node: docAt(e.label), next: 0, start: e.start })
        continue
      }
      const { key, value } = take(e.label)
      if (!isCollection(value) || value.flow === true || e.kind !== (isMap(value) ? 'mapping' : 'sequence')) throw new Error(`${e.label}: opened as ${e.kind}, not a block collection of that kind`)
      const part: Part = { type: 'enter', start: e.start, end: -1, value, label: e.label }
      parts.push(part)
      stack.push({ node: value, next: 0, start: e.start, key, part })
    } else if (e.type === 'exit') {
      const level = stack.pop()!
      if (level.part !== undefined) level.part.end = e.end
      if (isCollection(level.node) && level.next !== level.node.items.length) throw new Error(`${level.next} records for ${level.node.items.length} items`)
    } else if (e.type === 'record') {
      if (stack.length === 0) {
        // a document of a stream, whole
        const value = docAt(e.label)
        if (!same(shape(lastContents(e.text)), shape(value))) throw new Error(`${String(e.label)} is not its document`)
        parts.push({ type: 'record', start: e.start, end: e.end, value, label: e.label })
        continue
      }
      const { key, value } = take(e.label)
      let expected = single(stack.at(-1)!.node, key, shape(value))
      for (let j = stack.length - 1; j >= 1 && stack[j]!.start === e.start; j--) expected = single(stack[j - 1]!.node, stack[j]!.key, expected)
      const got = shape(lastContents(e.text))
      if (!same(got, expected)) throw new Error(`record ${String(e.label)} at ${e.start}: ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`)
      parts.push({ type: 'record', start: e.start, end: e.end, value, label: e.label })
    }
  }
  return parts
}

const COMMENT_LINE = /^([ \t]*)#/
const indentOf = (line: string): number => line.length - line.trimStart().length

/**
 * Comments go with the item below them (for documents whose `#` lines are all comments): a
 * record that is not the first of its container starts with the comment lines right above its
 * item that are not more indented than the item, all of them.
 */
function checkComments (events: DocEvent[], text: string): void {
  const starts: number[] = []
  for (const e of events) {
    if (e.type === 'enter') starts.push(e.start)
    else if (e.type === 'exit') starts.pop()
    if (e.type !== 'record' || starts.length === 0 || e.start === starts.at(-1)) continue
    if (text[e.start - 1] !== '\n') throw new Error(`record ${String(e.label)} at ${e.start}: not at the start of a line`)
    const lines = e.text.split('\n')
    const item = lines.findIndex((l) => !COMMENT_LINE.test(l))
    const col = indentOf(lines[item] ?? '')
    if (item === -1 || lines[item]!.trim() === '') throw new Error(`record ${String(e.label)} at ${e.start}: no item line after its comments`)
    if (lines.slice(0, item).some((l) => indentOf(l) > col)) throw new Error(`record ${String(e.label)} at ${e.start}: a comment more indented than its item`)
    const before = text.slice(0, e.start - 1).split('\n').at(-1)!
    if (e.start > 0 && COMMENT_LINE.test(before) && indentOf(before) <= col) throw new Error(`record ${String(e.label)} at ${e.start}: the comment right above it is left with the record before`)
  }
}

/**
 * What is opened: a record over the budget whose value opens is opened (none is left whole
 * but a scalar, a flow collection or a lone item that does not open), and an opened record is
 * over the budget and opens.
 */
function checkOpened (parts: Part[], text: string, maxTokens: number): void {
  for (const p of parts) {
    const over = tokenizer.count(text.slice(p.start, p.end)) > maxTokens
    if (p.type === 'enter' && !over) throw new Error(`${String(p.label)} opened, though within the budget`)
    if (p.type === 'enter' && !opensNode(p.value)) throw new Error(`${String(p.label)} opened into a lone item that does not open`)
    if (p.type === 'record' && over && opensNode(p.value)) throw new Error(`${String(p.label)} over the budget, not opened`)
  }
}

t.test('generated YAML: exact records, records whole, opened while over the budget, any cuts give the same events', async (t) => {
  await fc.assert(fc.asyncProperty(yamlStream, fc.constantFrom(8, 32, 128), fc.array(fc.nat(), { maxLength: 6 }), async (g, maxTokens, cuts) => {
    // one record per document (large budget), or per item when there is one document
    const events = await collectEvents(yaml, g.text, { max_tokens: 1_000_000 })
    assertTiles(events, g.text)
    const expected = g.docStarts.length > 1
      ? g.docStarts.map((s, d) => [s, `doc[${d}]`])
      : g.itemStarts[0]!.map((i) => [i.start, i.label])
    const got = records(events).map((r) => [r.start, r.label])
    if (!same(got, expected)) throw new Error(`records ${JSON.stringify(got)} != ${JSON.stringify(expected)}`)
    checkRecordsWhole(events, g.text)
    // a small budget opens documents and items over it, down to what fits or cannot open
    const opened = await collectEvents(yaml, g.text, { max_tokens: maxTokens })
    assertTiles(opened, g.text)
    checkOpened(checkRecordsWhole(opened, g.text), g.text, maxTokens)
    checkComments(opened, g.text)
    const pieces: DocEvent[] = []
    const handler = await yaml.create({
      options: { input_format: 'yaml', max_tokens: maxTokens, splitter: 'record', tokenizer: 'approx', overlap_tokens: 0, encoding: 'utf-8' },
      estimate: (text) => tokenizer.count(text),
      confirmOver: () => true,
      emit: (e) => { pieces.push(e) },
      fail: (code, message) => { throw new DocsplitError(code, message) },
    })
    const write = handler.write as (p: string) => void
    let pos = 0
    for (const c of [...new Set(cuts.map((s) => s % (g.text.length + 1)))].sort((a, b) => a - b)) { write(g.text.slice(pos, c)); pos = c }
    write(g.text.slice(pos))
    handler.end()
    if (!same(pieces, opened)) throw new Error('cuts changed the events')
  }), { numRuns: 300 })
  t.pass('property held')
})

// ---- corpus ----

t.test('corpus YAML: every file tiles or is rejected cleanly; test-suite verdicts', { skip: corpusMissing }, async (t) => {
  const files = corpusFiles('yaml', ['.yaml', '.yml'])
  t.ok(files.length > 500, 'yaml corpus present')
  const wrong: string[] = []
  let rejectedErrors = 0
  let errorCases = 0
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const isError = file.endsWith('.error.yaml')
    if (isError) errorCases++
    try {
      const ev = await collectEvents(yaml, text)
      assertTiles(ev, text)
      // a tiny budget opens what it can: the odd corners of the syntax still tile
      assertTiles(await collectEvents(yaml, text, { max_tokens: 4 }), text)
      if (!isError && text.length < 4000) {
        if (!same(await collectEvents(yaml, text, {}, 7), ev)) wrong.push(`${basename(file)}: 7-char pieces differ`)
      }
    } catch (e) {
      if (!(e instanceof DocsplitError)) {
        wrong.push(`${basename(file)}: ${String(e)}`)
      } else if (isError) {
        rejectedErrors++
      } else if (!/2JQS/.test(file)) {
        // 2JQS has two empty (null) keys, which yaml's unique-keys check rejects
        wrong.push(`${basename(file)}: rejected: ${e.message}`)
      }
    }
  }
  t.same(wrong, [])
  t.ok(rejectedErrors >= errorCases - 4, `${rejectedErrors} of ${errorCases} invalid test-suite cases rejected`)
  for (const file of files.filter((f) => !f.includes('yaml-test-suite'))) {
    const text = readFileSync(file, 'utf8')
    const ev = await collectEvents(yaml, text)
    t.ok(records(ev).length > 1, `${basename(file)}: split into records`)
    t.doesNotThrow(() => { checkRecordsWhole(ev, text) }, `${basename(file)}: records whole`)
    for (const maxTokens of [128, 32]) {
      const small = await collectEvents(yaml, text, { max_tokens: maxTokens })
      assertTiles(small, text)
      t.doesNotThrow(() => {
        checkOpened(checkRecordsWhole(small, text), text, maxTokens)
        checkComments(small, text)
      }, `${basename(file)} at ${maxTokens}: records whole, opened while over the budget`)
    }
  }
  const k8s = files.find((f) => f.includes('ingress-nginx-deploy'))
  if (k8s !== undefined) t.equal(records(await collectEvents(yaml, readFileSync(k8s, 'utf8'), { max_tokens: 100000 })).length, 19, 'a k8s bundle: one record per manifest')
})

// ---- end to end ----


async function e2e (text: string, maxTokens: number): Promise<string[]> {
  const r = await split(text, { input_format: 'yaml', tokenizer: tokenizerName, max_tokens: maxTokens })
  const events = await collectEvents(yaml, text, { max_tokens: maxTokens })
  return invariantProblems(r, text, { tokenizer, recordBoundaries: recordBoundaries(events) })
}

t.test('an opened mapping\'s first pairs are the context of its records: a Kubernetes document names itself', async (t) => {
  const env = Array.from({ length: 40 }, (_, i) => `            - name: SETTING_${i}\n              value: "value number ${i} of the payments service"`).join('\n')
  const deployment = `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  labels:\n    app.kubernetes.io/name: payments\n    app.kubernetes.io/part-of: shop\n    app.kubernetes.io/managed-by: helm\n    team: checkout-and-payments\n  name: payments-api\n  namespace: prod\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n        - name: api\n          image: shop/payments:1.2.3\n          env:\n${env}\n`
  const stream = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: prod\n---\n${deployment}`
  const r = await split(stream, { input_format: 'yaml', max_tokens: 128 })
  const inSpec = r.chunks.filter((c) => c.path.includes('spec'))
  t.ok(inSpec.length > 1, 'the deployment is opened')
  for (const c of inSpec) t.ok(c.context?.startsWith('---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n') === true && c.context.includes('\n  name: payments-api'), `${c.path.join('/')}: ${JSON.stringify(c.context?.slice(0, 90))}`)
  // metadata too long for the lead: its key line and its name still are
  const labels = Array.from({ length: 12 }, (_, i) => `    example.com/label-${i}: a-label-value-${i}`).join('\n')
  const long = stream.replace('  labels:\n', `  labels:\n${labels}\n`)
  const opened = (await split(long, { input_format: 'yaml', max_tokens: 128 })).chunks.filter((c) => c.path.includes('spec'))
  t.ok(opened.length > 1 && opened.every((c) => c.context?.startsWith('---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: payments-api') === true), JSON.stringify(opened[0]?.context))
  // the keys of the records opened around a chunk, at their indents: the context reads as the
  // YAML around it (`replicas` was read under `metadata`, the `spec:` and `template:` lines missing)
  const inEnv = r.chunks.find((c) => c.path.includes('env'))!
  t.equal(inEnv.context, '---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: payments-api\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers:\n        - name: api\n          image: shop/payments:1.2.3\n          env:')
  // in a map of named entries, the first entry is no context for the others
  const schemas = `openapi: 3.0.0\ncomponents:\n  schemas:\n${['Order', 'Pet', 'User'].map((n) => `    ${n}:\n      type: object\n      properties:\n${Array.from({ length: 12 }, (_, i) => `        field${i}:\n          type: string\n          description: The ${n} field number ${i}.`).join('\n')}`).join('\n')}\n`
  const user = (await split(schemas, { input_format: 'yaml', max_tokens: 128 })).chunks.filter((c) => c.path.includes('User'))
  t.ok(user.length > 1 && user.every((c) => c.context?.startsWith('components:\n  schemas:\n    User:') === true && !c.context.includes('Order')), JSON.stringify(user[0]?.context))
  // a file's single document: its first pairs are settings, not a title
  const values = `replicaCount: 1\nimage:\n  repository: nginx\n${Array.from({ length: 60 }, (_, i) => `setting${i}: "a value that takes some tokens ${i}"`).join('\n')}\n`
  t.same((await split(values, { input_format: 'yaml', max_tokens: 64 })).chunks.filter((c) => c.context !== undefined).map((c) => c.context), [])
})

t.test('end to end: split() keeps records whole and holds the invariants', async (t) => {
  await fc.assert(fc.asyncProperty(yamlStream, fc.constantFrom(8, 32, 128), async (g, maxTokens) => {
    const problems = await e2e(g.text, maxTokens)
    if (problems.length > 0) throw new Error(problems.join('; '))
  }), { numRuns: 100 })
  t.same(await e2e(stream, 8), [])
})

t.test('corpus end to end', { skip: corpusMissing }, async (t) => {
  for (const file of corpusFiles('yaml', ['.yaml', '.yml']).filter((f) => !f.includes('yaml-test-suite'))) {
    t.same(await e2e(readFileSync(file, 'utf8'), 256), [], basename(file))
  }
})

t.test('conformance kit (docsplit/testing)', async (t) => {
  await checkParser(yaml, [
    { name: 'stream', input: '# lead\n---\na: 1\nb: [1, 2]\n---\n- x\n- y: |\n    text\n' },
    { name: 'mapping', input: 'name: docsplit\n# deps\ndeps:\n  yaml: 2\n  sax: 1\nscripts:\n  test: tap\n' },
  ], { numRuns: 30 })
  t.pass('yaml passes the conformance kit')
})
