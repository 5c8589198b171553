import t from 'tap'
import fc from 'fast-check'
import { readFileSync, readdirSync } from 'node:fs'
import { basename, join } from 'node:path'
import plugins, { json, jsonl } from '../../../plugins/formats/json/index.js'
import { MAX_DEPTH } from '../../../plugins/formats/json/scanner.js'
import type { DocEvent, RecordEvent } from '../../../core/events.js'
import { DocsplitError } from '../../../core/errors.js'
import { split } from '../../../index.js'
import { tokenizerByName } from '../../../core/registry.js'
import { assertTiles, collectEvents, recordBoundaries } from '../../helpers/events.js'
import { corpusDir, corpusFiles, corpusMissing } from '../../helpers/corpus.js'
import { checkParser, invariantProblems, parserEvents } from '../../../testing.js'

const records = (events: DocEvent[]): RecordEvent[] => events.filter((e): e is RecordEvent => e.type === 'record')
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/** Evaluates a record label (`$.a[3]["b c"]`) on a parsed document. */
function atPath (doc: unknown, label: string): { found: boolean, value?: unknown } {
  if (!label.startsWith('$')) return { found: false }
  const re = /\.([A-Za-z_$][\w$]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]/y
  re.lastIndex = 1
  let v: unknown = doc
  while (re.lastIndex < label.length) {
    const m = re.exec(label)
    if (m === null) return { found: false }
    const key = m[1] ?? (m[2] !== undefined ? Number(m[2]) : JSON.parse(m[3]!) as string)
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return { found: false }
    v = (v as Record<string | number, unknown>)[key]
  }
  return { found: true, value: v }
}

const STRUCTURAL = /[\s,[\]{}]/

/**
 * Records whole: the record's text is its labelled value plus only structure around it (opening
 * brackets and keys before, commas, closing brackets and whitespace after).
 */
function holdsValue (text: string, expected: unknown): boolean {
  const qs: number[] = []
  for (let q = text.length; q > 0; q--) {
    qs.push(q)
    if (!STRUCTURAL.test(text[q - 1]!)) break
  }
  for (let p = 0; p < Math.min(text.length, 400); p++) {
    if ((p > 0 && !/[\s[{:]/.test(text[p - 1]!)) || !/[-\d"[{tfn]/.test(text[p]!)) continue
    for (const q of qs) {
      if (q <= p) continue
      try {
        if (same(JSON.parse(text.slice(p, q)), expected)) return true
      } catch {}
    }
  }
  return false
}

/** Every record is exactly its labelled value; all top-level children appear once, in order. */
function checkRecordsWhole (events: DocEvent[], text: string): void {
  const doc: unknown = JSON.parse(text)
  const recs = records(events)
  const labels = new Set<string>()
  for (const r of recs) {
    // An empty root container is one record without a label (its path is the container's `$`).
    const label = r.label ?? '$'
    if (labels.has(label)) throw new Error(`label ${label} twice`)
    labels.add(label)
    const at = atPath(doc, label)
    if (!at.found) throw new Error(`label ${label} is not a path in the document`)
    if (label === '$' && (Array.isArray(doc) || (doc !== null && typeof doc === 'object'))) {
      if (Object.keys(doc as object).length !== 0) throw new Error('a non-empty container as one record')
      continue
    }
    if (!holdsValue(r.text, at.value)) throw new Error(`record ${label} at ${r.start} does not hold exactly its value`)
  }
  // top-level children: each covered by exactly one record, or opened (records below it)
  if (doc !== null && typeof doc === 'object') {
    const keys = Array.isArray(doc) ? doc.map((_, i) => `$[${i}]`) : Object.keys(doc).map((k) => /^[A-Za-z_$][\w$]*$/.test(k) ? `$.${k}` : `$[${JSON.stringify(k)}]`)
    for (const k of keys) {
      if (!labels.has(k) && ![...labels].some((l) => l.startsWith(k + '.') || l.startsWith(k + '['))) throw new Error(`child ${k} has no record`)
    }
  }
}

/** Feeds the text in the given cut points. */
async function eventsWithCuts (text: string, cuts: number[], options: Record<string, unknown> = {}, plugin = json): Promise<DocEvent[]> {
  return await parserEvents(plugin, text, { splitter: 'record', ...options }, cuts)
}

async function rejects (text: string, plugin = json, pieceSize = Infinity): Promise<DocsplitError> {
  try {
    await collectEvents(plugin, text, {}, pieceSize)
  } catch (e) {
    if (e instanceof DocsplitError) return e
    throw e
  }
  throw new Error('accepted')
}

/** JSON text with random whitespace and escapes (the same value as JSON.stringify). */
function serialize (value: unknown, seeds: number[]): string {
  let n = 0
  const pick = (): number => seeds[n++ % seeds.length]! + n
  const WS = ['', ' ', '\n  ', '\t', '\r\n', '']
  const ws = (): string => WS[pick() % WS.length]!
  const str = (s: string): string => {
    let out = '"'
    for (const ch of s) {
      const c = ch.codePointAt(0)!
      const r = pick() % 5
      if (ch === '"' || ch === '\\') out += '\\' + ch
      else if (c < 0x20) out += r === 0 && c === 10 ? '\\n' : '\\u' + c.toString(16).padStart(4, '0')
      else if (ch === '/' && r < 2) out += '\\/'
      else if (r === 0 && c < 0x10000) out += '\\u' + c.toString(16).toUpperCase().padStart(4, '0')
      else out += ch
    }
    return out + '"'
  }
  const walk = (v: unknown): string => {
    if (typeof v === 'string') return str(v)
    if (Array.isArray(v)) return '[' + ws() + v.map((x) => walk(x)).join(ws() + ',' + ws()) + ws() + ']'
    if (v !== null && typeof v === 'object') {
      return '{' + ws() + Object.entries(v).map(([k, x]) => str(k) + ws() + ':' + ws() + walk(x)).join(',' + ws()) + ws() + '}'
    }
    return JSON.stringify(v)
  }
  return ws() + walk(value) + ws()
}

const jsonValue = fc.jsonValue({ maxDepth: 4, depthSize: 'small' })
const unicodeValue = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.boolean(), fc.constant(null),
    fc.array(tie('value'), { maxLength: 5 }), fc.dictionary(fc.string({ unit: 'grapheme' }), tie('value'), { maxKeys: 5 })),
})).value
const document = fc.oneof(
  fc.array(fc.oneof(jsonValue, unicodeValue), { maxLength: 12 }),
  fc.dictionary(fc.string({ unit: 'grapheme' }), fc.oneof(jsonValue, unicodeValue), { maxKeys: 12 }),
  fc.record({ meta: jsonValue, data: fc.record({ items: fc.array(unicodeValue, { maxLength: 30 }) }) }),
  jsonValue,
)

t.test('plugins: two parsers, formats and extensions', async (t) => {
  t.same(plugins.map((p) => p.name), ['json', 'jsonl'])
  t.same(json.formats, ['json'])
  t.same(jsonl.formats, ['jsonl', 'ndjson'])
  t.same(jsonl.extensions, ['.jsonl', '.ndjson'])
  t.equal(json.defaultSplitter, 'record')
  t.equal(jsonl.defaultSplitter, 'record')
  // sniffing: the sample is scanned, and may end anywhere
  t.equal(json.detect!('{"a": 1, "b": [1, 2'), 0.9)
  t.equal(jsonl.detect!('{"a": 1, "b": [1, 2'), 0)
  t.equal(json.detect!('{"a":1}\n{"b":2}\n{"c"'), 0)
  t.equal(jsonl.detect!('{"a":1}\n{"b":2}\n{"c"'), 0.9)
  t.equal(json.detect!('[2024-01-01 12:00:00] INFO started'), 0, 'a log line is not JSON')
  t.equal(json.detect!('# Title'), 0)
})

t.test('JSON: records, labels, tiling', async (t) => {
  const arr = '[\n  {"a": 1},\n  "x\\"y",\n  [1, 2]\n]\n'
  const ev = await collectEvents(json, arr)
  assertTiles(ev, arr)
  t.same(records(ev).map((r) => [r.label, r.text]), [['$[0]', '{"a": 1},\n  '], ['$[1]', '"x\\"y",\n  '], ['$[2]', '[1, 2]']])
  // the brackets and spaces around the records are syntax: a record that fits is not pushed over
  t.same(ev.filter((e) => e.type === 'block').map((e) => e.type === 'block' && [e.kind, e.text]), [['syntax', '[\n  '], ['syntax', '\n]\n']])
  t.same(ev.filter((e) => e.type === 'enter').map((e) => e.type === 'enter' && [e.kind, e.label]), [['array', '$']])
  const obj = '{"name": "x", "a b": [1], "n": null}'
  t.same(records(await collectEvents(json, obj)).map((r) => r.label), ['$.name', '$["a b"]', '$.n'])
  t.same(records(await collectEvents(json, ' 42 ')).map((r) => [r.label, r.text]), [['$', ' 42 ']])
  // An empty root container is its own record, in the container `$`: no second `$` in path.
  t.same(records(await collectEvents(json, '[]')).map((r) => [r.label, r.text]), [[undefined, '[]']])
  for (const text of ['[]', ' {} ', '5']) t.same((await split(text, { input_format: 'json', tokenizer: tokenizerName })).chunks.map((c) => c.path), [['$']], `path of ${text}`)
  // a member longer than the budget is opened, down through objects; elements that fit stay whole
  const env = '{"meta": 1, "data": {"items": [' + Array.from({ length: 20 }, (_, i) => `{"id": ${i}, "pad": "${'x'.repeat(4)}"}`).join(', ') + ']}}'
  const e2 = await collectEvents(json, env, { max_tokens: 16 })
  assertTiles(e2, env)
  checkRecordsWhole(e2, env)
  t.same(records(e2).map((r) => r.label), ['$.meta', ...Array.from({ length: 20 }, (_, i) => `$.data.items[${i}]`)])
  t.same(e2.filter((e) => e.type === 'enter').map((e) => e.type === 'enter' && e.label), ['$', '$.data', '$.data.items'])
  // with a large budget the member stays whole
  t.same(records(await collectEvents(json, env, { max_tokens: 10000 })).map((r) => r.label), ['$.meta', '$.data'])
  // an element that is an object over the budget is opened into its members, as a member is
  const big = '[{"id": 0, "text": "short"}, {"id": 1, "text": "' + 'many words here '.repeat(40) + '", "tags": ["a", "b"]}]'
  const e3 = await collectEvents(json, big, { max_tokens: 64 })
  assertTiles(e3, big)
  checkRecordsWhole(e3, big)
  t.same(records(e3).map((r) => r.label), ['$[0]', '$[1].id', '$[1].text', '$[1].tags'])
  t.same(e3.filter((e) => e.type === 'enter').map((e) => e.type === 'enter' && e.label), ['$', '$[1]'])
})

t.test('a BOM that starts JSON given as a string is white space (auto and json); elsewhere it is an error', async (t) => {
  const doc = '\uFEFF' + JSON.stringify([{ a: 1 }, { b: 2 }], null, 1)
  for (const options of [{}, { input_format: 'json' }]) {
    const r = await split(doc, { max_tokens: 8, ...options })
    t.equal(r.document.input_format, 'json')
    t.same(r.chunks.map((c) => c.path.at(-1)).filter((p) => p !== undefined && p !== '$'), ['$[0]', '$[1]'])
    t.equal(r.chunks.map((c) => c.text).join(''), doc)
  }
  t.equal((await split('\uFEFF{"a":1}\n{"b":2}\n', { max_tokens: 8 })).document.input_format, 'jsonl')
  await t.rejects(split('[1,\uFEFF2]', { input_format: 'json' }), { code: 'DOCSPLIT_PARSE_ERROR' })
})

t.test('JSON errors: line and column, no document text', async (t) => {
  const e = await rejects('{\n  "secret": tru\n}')
  t.equal(e.code, 'DOCSPLIT_PARSE_ERROR')
  t.equal(e.message, 'invalid JSON at line 2, column 16: invalid literal')
  t.notMatch(e.message, /secret/)
  t.match((await rejects('[1, 2,]')).message, /line 1, column 7: expected a value/)
  t.match((await rejects('[1] x')).message, /unexpected data after the JSON value/)
  t.match((await rejects('[1] [2]')).message, /unexpected data after the JSON value$/, 'two values on one line are no JSON Lines')
  t.match((await rejects('{"a": 1}\n{"a": 2}\n')).message, /line 2, column 1: another JSON value after the first \(for JSON Lines, one value a line, give input_format jsonl\)$/)
  t.match((await rejects('')).message, /no JSON value/)
  t.match((await rejects('"abc')).message, /unexpected end of input/)
  t.match((await rejects('01')).message, /leading zero/)
  t.match((await rejects('"a\tb"')).message, /control character/)
})

t.test('hostile JSON: deep nesting is a limit, never a stack overflow', async (t) => {
  const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n)
  for (const size of [Infinity, 4096]) {
    const e = await rejects('['.repeat(100_000) + ']'.repeat(100_000), json, size)
    t.equal(e.code, 'DOCSPLIT_LIMIT_EXCEEDED', `100,000 deep arrays, piece ${size}`)
    t.notMatch(e.message, /\[/)
  }
  t.equal((await rejects('{"a":'.repeat(100_000))).code, 'DOCSPLIT_LIMIT_EXCEEDED', '100,000 deep objects')
  const ok = deep(MAX_DEPTH)
  const ev = await collectEvents(json, ok)
  assertTiles(ev, ok)
  t.equal(records(ev).length, 1, `${MAX_DEPTH} deep is accepted`)
  t.equal((await rejects(deep(MAX_DEPTH + 1))).code, 'DOCSPLIT_LIMIT_EXCEEDED')
  t.equal((await rejects('[' + deep(MAX_DEPTH) + ']', jsonl)).code, 'DOCSPLIT_LIMIT_EXCEEDED', 'jsonl too')
  // a long string and a long number stream through
  const long = '["' + 'x'.repeat(1_000_000) + '", ' + '9'.repeat(100_000) + ']'
  const lev = await collectEvents(json, long, {}, 65536)
  assertTiles(lev, long)
  t.equal(records(lev).length, 2)
})

t.test('JSONL: one record per line, blank lines kept, each line validated', async (t) => {
  const text = '\n{"a": 1}\n\n[2]\r\n  3 \n\n"x"'
  const ev = await collectEvents(jsonl, text)
  assertTiles(ev, text)
  t.same(records(ev).map((r) => [r.label, r.text]), [['[0]', '\n{"a": 1}\n\n'], ['[1]', '[2]\r\n'], ['[2]', '  3 \n\n'], ['[3]', '"x"']])
  t.same(await collectEvents(jsonl, ''), [])
  const blank = '\n \n'
  const bev = await collectEvents(jsonl, blank)
  assertTiles(bev, blank)
  const e = await rejects('{"a": 1}\n{"a":\n2}\n', jsonl)
  t.equal(e.message, 'invalid JSON at line 2, column 6: line ends inside a JSON value')
  t.equal((await rejects('1 2\n', jsonl)).message, 'invalid JSON at line 1, column 3: more than one JSON value on a line')
  t.match((await rejects('{"a":1}\n{x}\n', jsonl)).message, /^invalid JSON at line 2, column 2: /)
})

t.test('generated JSON: tiles, records whole, any cuts give the same events', async (t) => {
  await fc.assert(fc.asyncProperty(document, fc.array(fc.nat(), { minLength: 8, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 8 }), fc.constantFrom(8, 16, 64, 512),
    async (value, seeds, cuts, maxTokens) => {
      const text = serialize(value, seeds)
      if (!same(JSON.parse(text), value)) throw new Error('serializer broke the value')
      const events = await collectEvents(json, text, { max_tokens: maxTokens })
      assertTiles(events, text)
      checkRecordsWhole(events, text)
      if (!same(await eventsWithCuts(text, cuts, { max_tokens: maxTokens }), events)) throw new Error('cuts changed the events')
      if (!same(await collectEvents(json, text, { max_tokens: maxTokens }, 1), events)) throw new Error('1-char pieces changed the events')
    }), { numRuns: 300 })
  t.pass('property held')
})

t.test('generated JSONL: tiles, one record per value line, blank lines kept', async (t) => {
  const line = fc.tuple(fc.oneof(jsonValue, unicodeValue), fc.array(fc.nat(), { minLength: 4, maxLength: 4 }))
    .map(([v, s]) => serialize(v, s).replace(/[\r\n]+/g, ' '))
  const gen = fc.array(fc.oneof({ weight: 4, arbitrary: line }, { weight: 1, arbitrary: fc.constantFrom('', ' ', '\t') }), { maxLength: 20 })
  await fc.assert(fc.asyncProperty(gen, fc.constantFrom('\n', '\r\n'), fc.boolean(), fc.array(fc.nat(), { maxLength: 8 }), async (lines, eol, finalEol, cuts) => {
    const text = lines.join(eol) + (finalEol && lines.length > 0 ? eol : '')
    const values = lines.filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown)
    const events = await collectEvents(jsonl, text)
    assertTiles(events, text)
    const recs = records(events)
    if (recs.length !== values.length) throw new Error(`${recs.length} records for ${values.length} lines`)
    recs.forEach((r, i) => {
      if (!same(JSON.parse(r.text), values[i])) throw new Error(`record ${i} is not line ${i}`)
      if (r.label !== `[${i}]`) throw new Error('label')
    })
    if (!same(await eventsWithCuts(text, cuts, {}, jsonl), events)) throw new Error('cuts changed the events')
  }), { numRuns: 300 })
  t.pass('property held')
})

t.test('JSONTestSuite: every n_ rejected, every y_ accepted, i_ never crash', { skip: corpusMissing }, async (t) => {
  const dir = join(corpusDir, 'json/JSONTestSuite/test_parsing')
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
  t.ok(files.length >= 300, 'suite present')
  const wrong: string[] = []
  for (const f of files) {
    let text: string | undefined
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(join(dir, f)))
    } catch {
      // the pipeline reports DOCSPLIT_INVALID_UTF8: rejected
    }
    let accepted = false
    if (text !== undefined) {
      try {
        const ev = await collectEvents(json, text)
        assertTiles(ev, text)
        if (!same(await collectEvents(json, text, {}, 7), ev)) wrong.push(`${f}: 7-char pieces differ`)
        accepted = true
      } catch (e) {
        if (!(e instanceof DocsplitError)) wrong.push(`${f}: crashed with ${String(e)}`)
        else if (!/^invalid JSON at line \d+, column \d+: |^JSON nesting deeper/.test(e.message)) wrong.push(`${f}: message ${e.message}`)
      }
    }
    if (f.startsWith('y_') && !accepted) wrong.push(`${f}: rejected`)
    if (f.startsWith('n_') && accepted) wrong.push(`${f}: accepted`)
  }
  t.same(wrong, [])
})

t.test('corpus JSON/JSONL: tiles, records whole, slow streams give the same events', { skip: corpusMissing }, async (t) => {
  const files = corpusFiles('json', ['.json', '.jsonl']).filter((f) => !f.includes('JSONTestSuite'))
  t.ok(files.length >= 3, 'json corpus present')
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const plugin = file.endsWith('.jsonl') ? jsonl : json
    const whole = await collectEvents(plugin, text)
    t.doesNotThrow(() => { assertTiles(whole, text) }, `${basename(file)} tiles`)
    if (plugin === json) t.doesNotThrow(() => { checkRecordsWhole(whole, text) }, `${basename(file)}: records whole`)
    else t.same(records(whole).map((r) => JSON.parse(r.text) as unknown), text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown), `${basename(file)}: one record per line`)
    t.ok(records(whole).length > 1, `${basename(file)}: split into records`)
    for (const size of [7, 64, 4096]) t.same(await collectEvents(plugin, text, {}, size), whole, `${basename(file)}: piece size ${size}`)
  }
  const sonnets = corpusFiles('json', ['.json']).find((f) => f.includes('sonnets'))
  if (sonnets !== undefined) {
    const labels = records(await collectEvents(json, readFileSync(sonnets, 'utf8'))).map((r) => r.label)
    t.ok(labels.includes('$.sonnets[0]'), 'the big `sonnets` member is opened into its elements')
  }
})

const tokenizerName = 'approx'
const approx = await tokenizerByName(tokenizerName).load()


t.test('end to end: split() keeps records whole and holds the invariants', async (t) => {
  const check = async (text: string, format: string, maxTokens: number): Promise<string[]> => {
    const r = await split(text, { input_format: format, max_tokens: maxTokens, tokenizer: tokenizerName })
    const events = await collectEvents(format === 'json' ? json : jsonl, text, { max_tokens: maxTokens })
    return invariantProblems(r, text, { tokenizer: approx, recordBoundaries: recordBoundaries(events) })
  }
  await fc.assert(fc.asyncProperty(document, fc.array(fc.nat(), { minLength: 8, maxLength: 8 }), fc.constantFrom(8, 32, 64), async (value, seeds, maxTokens) => {
    const problems = await check(serialize(value, seeds), 'json', maxTokens)
    if (problems.length > 0) throw new Error(problems.join('; '))
  }), { numRuns: 100 })
  const lines = Array.from({ length: 200 }, (_, i) => JSON.stringify({ i, text: 'é😀 '.repeat(i % 17) })).join('\n') + '\n\n'
  t.same(await check(lines, 'jsonl', 64), [])
  const r = await split(lines, { input_format: 'ndjson', max_tokens: 64, tokenizer: tokenizerName })
  t.ok(r.chunks.length > 1, 'ndjson splits into chunks')
  const parsed = r.chunks.flatMap((c) => c.text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown))
  t.same(parsed, lines.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown), 'every chunk holds whole lines')
  const big = '[' + Array.from({ length: 300 }, (_, i) => JSON.stringify({ id: i, name: `n${i}` })).join(',\n') + ']'
  const rb = await split(big, { input_format: 'json', max_tokens: 64, tokenizer: tokenizerName })
  t.ok(rb.chunks.length > 1)
  t.same(rb.chunks.filter((c) => c.protected).length, 0, 'small elements never protected')
  t.same(await check(big, 'json', 64), [])
})

t.test('a dense envelope over the budget is opened, though shorter than 4 characters a token', async (t) => {
  // Numbers run 2-3 characters a token: 1,742 characters here are over 512 tokens.
  const items = Array.from({ length: 28 }, (_, i) => ({ id: 1000 + i, lat: 51.5 + i / 997, lon: -0.12 - i / 991 }))
  const doc = JSON.stringify({ data: { items } })
  t.ok(doc.length < 512 * 4 && approx.count(doc) > 512, `${doc.length} characters, ${approx.count(doc)} tokens`)
  const r = await split(doc, { input_format: 'json', max_tokens: 512 })
  t.same(r.chunks.filter((c) => c.protected).length, 0, 'no chunk over the budget')
  t.ok(r.chunks.length > 1 && r.chunks.every((c) => c.path.includes('$.data.items')), 'split by element of $.data.items')
  t.equal(r.chunks.map((c) => c.text).join(''), doc)
  // a member that fits stays whole, though the estimates of its parts add up to more
  for (const fits of [JSON.stringify({ a: Array(172).fill('ab'), b: 1 }), JSON.stringify({ a: Array(120).fill('hello world'), b: 1 })]) {
    const one = await split(fits, { input_format: 'json', max_tokens: 512 })
    t.same(one.chunks.map((c) => c.path), [['$']], `${approx.count(fits)} tokens: one chunk`)
  }
  // a record that passes the budget only near its end (after its last count while it streams)
  // is opened at its end down its last children: through levels of one child, and again where
  // its last child is still over
  const protectedAt: string[] = []
  for (const maxTokens of [64, 128]) {
    for (let n = 2; n < 16; n++) {
      const list = items.slice(0, n)
      const shapes = [{ data: { items: list } }, { a: { b: { items: list } } }, [{ data: { items: list } }], [{ id: 1, payload: { rows: list } }], { r: { id: 1, payload: { x: 2, rows: list } } }]
      for (const envelope of shapes) {
        const text = JSON.stringify(envelope, null, n % 2)
        const split1 = await split(text, { input_format: 'json', max_tokens: maxTokens })
        if (split1.chunks.some((c) => c.protected)) protectedAt.push(`${maxTokens} tokens, ${text.slice(0, 16)}…, ${n} items`)
        if (split1.chunks.map((c) => c.text).join('') !== text) protectedAt.push(`lost text: ${text}`)
      }
    }
  }
  t.same(protectedAt, [], 'no record of small items left whole over the budget')
  // the brackets that open an envelope and close it are syntax, not part of its first and last
  // elements: elements that fit are not pushed over the budget by them
  const fitting = JSON.stringify({ data: { items: Array.from({ length: 40 }, (_, i) => ({ id: i, text: `item number ${i} with some words` })) } }, null, 1)
  const glued = await split(fitting, { input_format: 'json', max_tokens: 32 })
  t.same(glued.chunks.filter((c) => c.protected).map((c) => c.token_count), [], 'no element over the budget')
  t.ok(glued.chunks[0]!.kinds.includes('syntax') && glued.chunks.at(-1)!.kinds.includes('syntax'), 'the envelope\'s brackets are syntax')
  t.equal(glued.chunks.map((c) => c.text).join(''), fitting)
  // a record near the budget ends at its value: the comma and spaces after it are syntax, so an
  // element that fits exactly is not pushed over the budget by its separator
  const elements = JSON.stringify(Array.from({ length: 5 }, (_, i) => ({ id: i, name: `record name ${i}` })), null, 2)
  const largest = Math.max(...records(await collectEvents(json, elements)).map((r) => approx.count(r.text.replace(/,\s*$/, ''))))
  const exact = await split(elements, { input_format: 'json', max_tokens: largest, tokenizer: tokenizerName })
  t.same(exact.chunks.filter((c) => c.protected).map((c) => c.token_count), [], `no element over ${largest} tokens`)
  t.same(exact.chunks.filter((c) => c.record_count === 1).map((c) => c.text.at(-1)), ['}', '}', '}', '}', '}'], 'each element alone, ending at its brace')
  t.equal(exact.chunks.map((c) => c.text).join(''), elements)
  // an envelope's first elements are opened as its later ones and a top-level array's are
  const big = Array.from({ length: 6 }, (_, i) => ({ name: `n${i}`, text: 'word '.repeat(330), id: i }))
  for (const [text, prefix] of [[JSON.stringify({ data: { items: big } }, null, 1), '$.data.items'], [JSON.stringify(big, null, 1), '$']] as const) {
    const opened = await split(text, { input_format: 'json', max_tokens: 128 })
    const paths = opened.chunks.map((c) => c.path.at(-1))
    for (let i = 0; i < 6; i++) t.ok(paths.includes(`${prefix}[${i}].name`), `${prefix}[${i}] opened into its members`)
    t.same(opened.chunks.filter((c) => c.protected).map((c) => c.path.at(-1)), big.map((_, i) => `${prefix}[${i}].text`), 'only the long strings protected')
  }
  // a member over the budget that another member follows is opened too (a country's `name`
  // went whole, protected, when `tld` came after it), at any nesting of the element
  const name = { common: 'Brazil', official: 'Federative Republic of Brazil', native: { por: { official: 'República Federativa do Brasil', common: 'Brasil' } } }
  for (const doc of [[{ name, tld: ['.br'] }], { data: [{ name, tld: ['.br'] }] }]) {
    const text = JSON.stringify(doc, null, 4)
    const r = await split(text, { input_format: 'json', max_tokens: 64 })
    t.same(r.chunks.filter((c) => c.protected).map((c) => c.path.at(-1)), [], `${text.slice(0, 12)}…: nothing kept whole over the budget`)
    for (const size of [1, 7]) t.same(await collectEvents(json, text, { max_tokens: 64 }, size), await collectEvents(json, text, { max_tokens: 64 }), `pieces of ${size}`)
  }
  // the same events however the text comes in
  const whole = await collectEvents(json, doc, { max_tokens: 512 })
  for (const size of [1, 7, 100]) t.same(await collectEvents(json, doc, { max_tokens: 512 }, size), whole, `pieces of ${size}`)
})

t.test('corpus end to end', { skip: corpusMissing }, async (t) => {
  for (const file of corpusFiles('json', ['.json', '.jsonl']).filter((f) => !f.includes('JSONTestSuite'))) {
    const text = readFileSync(file, 'utf8')
    const format = file.endsWith('.jsonl') ? 'jsonl' : 'json'
    const r = await split(text, { input_format: format, max_tokens: 256, tokenizer: tokenizerName })
    const events = await collectEvents(format === 'json' ? json : jsonl, text, { max_tokens: 256 })
    t.same(invariantProblems(r, text, { tokenizer: approx, recordBoundaries: recordBoundaries(events) }), [], basename(file))
  }
})

t.test('conformance kit (docsplit/testing)', async (t) => {
  await checkParser(json, [
    { name: 'array', input: '[1, {"a": "é😀"}, [true, null], "x"]\n' },
    { name: 'envelope', input: JSON.stringify({ meta: { n: 1 }, data: { items: Array.from({ length: 40 }, (_, i) => ({ i, s: 'word '.repeat(i % 7) })) } }, null, 2) },
    { name: 'scalar', input: '"just a string"' },
  ], { numRuns: 30 })
  await checkParser(jsonl, [
    { name: 'lines', input: Array.from({ length: 30 }, (_, i) => JSON.stringify({ i, s: 'word '.repeat(i % 9) })).join('\n') + '\n\n' },
  ], { numRuns: 30 })
  t.pass('json and jsonl pass the conformance kit')
})

t.test('sibling packs JSON nested thousands of levels deep into full chunks, not a chunk per level', async (t) => {
  const depth = 2000
  const text = '[{"":'.repeat(depth) + '1' + '}]'.repeat(depth)
  const r = await split(text, { input_format: 'json', splitter: 'sibling', max_tokens: 512 })
  t.equal(r.chunks.map((c) => c.text).join(''), text, 'lossless')
  // About 10 chunks' worth of tokens; past depth 960 every `{` and `"":[` was a chunk of its own.
  t.ok(r.chunk_count < 30, `${r.chunk_count} chunks`)
  t.ok(r.chunks.filter((c) => c.text.length < 8).length <= 1, 'no chunks of a bracket or two')
})

t.test('an opened element\'s last members share a chunk with what comes after them, when they fit', async (t) => {
  const line = (i: number, k: number): string => `Line ${k} of sonnet ${i} is a line of verse that runs on a while.`
  const sonnets = Array.from({ length: 6 }, (_, i) => ({ lines: Array.from({ length: 14 }, (_, k) => line(i, k)), number: i + 1 }))
  const doc = JSON.stringify({ sonnets }, null, 2)
  const r = await split(doc, { input_format: 'json', max_tokens: 128 })
  t.equal(r.chunks.map((c) => c.text).join(''), doc)
  t.ok(r.chunks.every((c) => c.token_count <= 128))
  // Each `"number": N` (the element's last member, after its `lines` that were opened) went alone.
  t.same(r.chunks.filter((c) => /^\s*"number": \d+\s*\}?,?\s*$/.test(c.text)).map((c) => c.index), [], 'no chunk of a lone "number"')
  const lone = r.chunks.filter((c) => c.token_count < 128 / 10)
  t.same(lone.map((c) => c.text), [], 'no chunk under a tenth of the budget')
  const withNumber = r.chunks.find((c) => c.text.includes('"number": 1'))!
  t.same(withNumber.path, ['$', '$.sonnets', '$.sonnets[0]'], 'the path around the records it holds')
})
