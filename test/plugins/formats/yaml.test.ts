import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { parseAllDocuments } from 'yaml'
import yaml, { MAX_DOCUMENT } from '../../../plugins/formats/yaml/index.js'
import type { DocEvent, RecordEvent } from '../../../core/events.js'
import { DocsplitError } from '../../../core/errors.js'
import { split } from '../../../index.js'
import { tokenizerByName } from '../../../core/registry.js'
import { assertTiles, collectEvents } from '../../helpers/events.js'
import { corpusFiles, corpusMissing } from '../../helpers/corpus.js'
import { checkParser, invariantProblems } from '../../../testing.js'

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
  t.equal(yaml.detect!('---\ntitle: x\n---\n# Heading\n\nSome prose here.\nMore prose.\n'), 0, 'markdown with front matter')
  t.equal(yaml.detect!('- buy milk\n- call Bob: about the car\n  - tomorrow\n\n[docs]: https://example.com "Docs"\n'), 0, 'a markdown list and a link definition')
  t.equal(yaml.detect!('class Foo:\n    def __init__(self):\n        self.x = 1\n\n    def run(self):\n        return self.x\n'), 0, 'a Python class')
  t.ok(yaml.detect!('description:\n  A plain scalar\n  on two lines.\nscript: |\n  npm ci\n  npm test -- --reporter=dot\nitems:\n  - a\n') > 0, 'block and multi-line scalars')
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
    ['a', '# lead\n%YAML 1.2\n---\n# c1\na: 1 # tail\n\n'],
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
const docItems = fc.oneof(mappingDoc, seqDoc)
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

/** Records whole: each record parsed alone gives its part of the whole document. */
function checkRecordsWhole (events: DocEvent[], text: string): void {
  const whole = docsOf(text)
  const recs = records(events)
  if (whole.length > 1 && events.every((e) => e.type !== 'enter')) {
    const parts = recs.flatMap((r) => docsOf(r.text))
    if (!same(parts, whole)) throw new Error('documents differ when parsed record by record')
    return
  }
  if (whole.length !== 1) return
  const doc = whole[0]
  const parts = recs.map((r) => docsOf(r.text.replace(/^(%.*\n)+/, '')).at(-1))
  const merged = Array.isArray(doc) ? parts.flat() : Object.assign({}, ...parts.map((p) => p as object))
  if (!same(merged, doc)) throw new Error(`items differ when parsed record by record: ${JSON.stringify(merged)} vs ${JSON.stringify(doc)}`)
}

t.test('generated YAML: exact records, records whole, any cuts give the same events', async (t) => {
  await fc.assert(fc.asyncProperty(yamlStream, fc.array(fc.nat(), { maxLength: 6 }), async (g, cuts) => {
    // one record per document (large budget), or per item when there is one document
    const events = await collectEvents(yaml, g.text, { max_tokens: 1_000_000 })
    assertTiles(events, g.text)
    const expected = g.docStarts.length > 1
      ? g.docStarts.map((s, d) => [s, `doc[${d}]`])
      : g.itemStarts[0]!.map((i) => [i.start, i.label])
    const got = records(events).map((r) => [r.start, r.label])
    if (!same(got, expected)) throw new Error(`records ${JSON.stringify(got)} != ${JSON.stringify(expected)}`)
    checkRecordsWhole(events, g.text)
    // a small budget opens every document with two or more items longer than 4 chars a token
    const opened = await collectEvents(yaml, g.text, { max_tokens: 8 })
    assertTiles(opened, g.text)
    const docLength = (d: number): number => (g.docStarts[d + 1] ?? g.text.length) - g.docStarts[d]!
    const openedExpected = g.itemStarts.flatMap((items, d) => g.docStarts.length > 1 && (items.length < 2 || docLength(d) <= 8 * 4)
      ? [[g.docStarts[d], `doc[${d}]`]]
      : items.map((i) => [i.start, i.label]))
    const openedGot = records(opened).map((r) => [r.start, r.label])
    if (!same(openedGot, openedExpected)) throw new Error(`opened records ${JSON.stringify(openedGot)} != ${JSON.stringify(openedExpected)}`)
    const pieces: DocEvent[] = []
    const handler = await yaml.create({
      options: { input_format: 'yaml', max_tokens: 8, splitter: 'record', tokenizer: 'approx', overlap_tokens: 0, encoding: 'utf-8' },
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
  }
  const k8s = files.find((f) => f.includes('ingress-nginx-deploy'))
  if (k8s !== undefined) t.equal(records(await collectEvents(yaml, readFileSync(k8s, 'utf8'), { max_tokens: 100000 })).length, 19, 'a k8s bundle: one record per manifest')
})

// ---- end to end ----

const tokenizerName = 'approx'
const tokenizer = await tokenizerByName(tokenizerName).load()

async function e2e (text: string, maxTokens: number): Promise<string[]> {
  const r = await split(text, { input_format: 'yaml', tokenizer: tokenizerName, max_tokens: maxTokens })
  const events = await collectEvents(yaml, text, { max_tokens: maxTokens })
  const bounds = new Set(records(events).flatMap((e) => [e.start, e.end]))
  return invariantProblems(r, text, { tokenizer, recordBoundaries: bounds })
}

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
