import t, { type Test } from 'tap'
import fc from 'fast-check'
import { deepStrictEqual } from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { parse } from 'csv-parse/sync'
import csv from '../../../plugins/formats/csv/index.js'
import log from '../../../plugins/formats/log/index.js'
import type { DocEvent, RecordEvent } from '../../../core/events.js'
import { DocsplitError } from '../../../core/errors.js'
import { assertTiles, collectEvents } from '../../helpers/events.js'
import { corpusFiles, corpusMissing } from '../../helpers/corpus.js'

const records = (events: DocEvent[]): RecordEvent[] => events.filter((e): e is RecordEvent => e.type === 'record')
const info = (events: DocEvent[], key: string): unknown => {
  const e = events.find((x) => x.type === 'info' && x.key === key)
  return e?.type === 'info' ? e.value : undefined
}

/** csv-parse with the quoting rules the parser follows; empty lines are not rows. */
const parseCsv = (text: string, delimiter: string): string[][] => parse(text, {
  delimiter, relax_quotes: true, relax_column_count: true, record_delimiter: ['\r\n', '\n', '\r'], skip_empty_lines: true,
}) as string[][]

/** Rows of each record, parsed alone, concatenated: must equal the rows of the whole document. */
function checkRecordsWhole (events: DocEvent[], text: string, header: boolean): void {
  const delimiter = info(events, 'delimiter') as string
  const recs = records(events)
  const whole = parseCsv(text, delimiter)
  const perRecord = recs.flatMap((r) => {
    const rows = parseCsv(r.text, delimiter)
    if (r.kind !== 'blank' && rows.length !== 1) throw new Error(`record at ${r.start} holds ${rows.length} rows`)
    return rows
  })
  deepStrictEqual(perRecord, whole)
  if (header && whole.length > 0) {
    // The first row, but titles above the table (up to 10): three fields or more, one filled
    // with words, or none.
    const isTitle = (row: string[]): boolean => {
      const filled = row.filter((f) => f.trim() !== '')
      return row.length >= 3 && (filled.length === 0 || (filled.length === 1 && /\S\s+\S/.test(filled[0]!.trim())))
    }
    let titles = 0
    while (titles < 10 && titles < whole.length && isTitle(whole[titles]!)) titles++
    const headerRecord = recs.find((r) => r.kind === 'header')
    if (titles === whole.length) {
      if (headerRecord !== undefined) throw new Error('a header among title rows only')
      return
    }
    if (headerRecord === undefined) throw new Error('no header')
    const at = recs.indexOf(headerRecord)
    if (recs.slice(0, at).filter((r) => r.kind === 'row').length !== titles) throw new Error(`the header is not row ${titles + 1}`)
    const headerRow = whole[titles]
    deepStrictEqual(info(events, 'columns'), headerRow)
    const context = parseCsv(recs.slice(at).find((r) => r.kind === 'row')?.context ?? headerRecord.text, delimiter)
    deepStrictEqual(context, [headerRow])
    for (const r of recs.slice(at)) {
      if (r.kind === 'row' && !headerRecord.text.includes(r.context!)) throw new Error('context is not the header row')
    }
  } else if (recs.some((r) => r.context !== undefined || r.kind === 'header')) throw new Error('header without header option')
}

const LATIN1 = /HEFCE|mth-10|ESCC/

t.test('corpus CSV/TSV: tiles, rows whole, slow streams give the same events', { skip: corpusMissing }, async (t) => {
  const files = corpusFiles('csv', ['.csv', '.tsv'])
  t.ok(files.length >= 19, 'csv corpus present')
  for (const file of files) {
    const text = LATIN1.test(file) ? new TextDecoder('latin1').decode(readFileSync(file)) : readFileSync(file, 'utf8').replace(/^\uFEFF/, '')
    const options = file.endsWith('.tsv') ? { input_format: 'tsv' } : {}
    const whole = await collectEvents(csv, text, options)
    t.doesNotThrow(() => { assertTiles(whole, text) }, `${basename(file)} tiles`)
    t.doesNotThrow(() => { checkRecordsWhole(whole, text, true) }, `${basename(file)}: every record is one whole row`)
    for (const size of [1, 7, 64]) {
      t.same(await collectEvents(csv, text, options, size), whole, `${basename(file)}: piece size ${size}`)
    }
  }
})

t.test('corpus: delimiter detection and headers', { skip: corpusMissing }, async (t) => {
  const tsv = corpusFiles('csv', ['.tsv'])[0]!
  const text = readFileSync(tsv, 'utf8')
  const auto = await collectEvents(csv, text)
  t.equal(info(auto, 'delimiter'), '\t', 'tab detected under input_format csv')
  t.equal((info(auto, 'columns') as string[]).length, 11)
  t.same(await collectEvents(csv, text, { input_format: 'tsv' }), auto)
  const countries = corpusFiles('csv').find((f) => f.endsWith('country-codes.csv'))!
  const ev = await collectEvents(csv, readFileSync(countries, 'utf8'))
  t.equal(records(ev).length, 250)
  t.equal(records(ev)[0]!.kind, 'header')
  t.equal(records(ev)[1]!.label, 'row 1')
  t.equal(records(ev)[1]!.context, readFileSync(countries, 'utf8').split('\n')[0])
  const latin = corpusFiles('csv').find((f) => f.includes('HEFCE'))!
  const cols = info(await collectEvents(csv, new TextDecoder('latin1').decode(readFileSync(latin))), 'columns') as string[]
  t.ok(cols.some((c) => c.includes('£')), 'Latin-1 pound sign decoded in the header')
})

t.test('csv-spectrum: each record parses back to the expected JSON', { skip: corpusMissing }, async (t) => {
  const files = corpusFiles('csv/csv-spectrum/csvs', ['.csv'])
  t.equal(files.length, 11)
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const expected = JSON.parse(readFileSync(file.replace('/csvs/', '/json/').replace(/\.csv$/, '.json'), 'utf8')) as Array<Record<string, string>>
    const events = await collectEvents(csv, text)
    assertTiles(events, text)
    const recs = records(events)
    const columns = info(events, 'columns') as string[]
    const objects = recs.filter((r) => r.kind === 'row').map((r) => {
      const [row] = parseCsv(r.text, ',')
      return Object.fromEntries(row!.map((v, i) => [columns[i], v]))
    })
    t.same(objects, expected, basename(file))
    for (const size of [1, 2, 3]) t.same(await collectEvents(csv, text, {}, size), events, `${basename(file)} piece size ${size}`)
  }
})

// ---- generated CSV ----

const fieldText = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z0-9 ]{0,8}$/) },
  { weight: 2, arbitrary: fc.array(fc.constantFrom('a', ' ', ',', ';', '|', '\t', '"', '""', '\n', '\r\n', '\r', 'é', '日本', '😀', '\u00a0'), { maxLength: 8 }).map((a) => a.join('')) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
)

function quote (value: string, delimiter: string, always: boolean): string {
  // A quote inside an unquoted field is data (csv-parse relax_quotes); only a leading one opens quotes.
  const needs = always || value === '' || /[,;|\t\r\n]/.test(value) || value.startsWith('"') || value !== value.trim()
  return needs ? `"${value.replace(/"/g, '""')}"` : value
}

const generatedCsv = fc.record({
  columns: fc.integer({ min: 1, max: 5 }),
  rows: fc.integer({ min: 0, max: 12 }),
  delimiter: fc.constantFrom(',', ';', '|', '\t'),
  eol: fc.constantFrom('\n', '\r\n', '\r'),
  trailing: fc.boolean(),
  alwaysQuote: fc.boolean(),
  blankLines: fc.array(fc.nat({ max: 2 }), { maxLength: 14 }),
  seed: fc.array(fieldText, { minLength: 60, maxLength: 60 }),
}).map((g) => {
  const rows: string[][] = []
  let k = 0
  for (let r = 0; r < g.rows + 1; r++) {
    const row: string[] = []
    for (let c = 0; c < g.columns; c++) row.push(g.seed[k++ % g.seed.length]!)
    rows.push(row)
  }
  let text = ''
  rows.forEach((row, r) => {
    text += row.map((v) => quote(v, g.delimiter, g.alwaysQuote)).join(g.delimiter) + g.eol
    text += g.eol.repeat(g.blankLines[r] ?? 0)
  })
  if (!g.trailing) text = text.replace(/[\r\n]+$/, '')
  return { ...g, text, expected: rows }
})

t.test('generated CSV: tiles, rows equal csv-parse of the whole, independent of piece cuts', async (t) => {
  await fc.assert(fc.asyncProperty(generatedCsv, fc.boolean(), fc.array(fc.nat(), { maxLength: 10 }), async (g, header, seeds) => {
    const events = await collectEvents(csv, g.text, { delimiter: g.delimiter, header })
    assertTiles(events, g.text)
    checkRecordsWhole(events, g.text, header)
    deepStrictEqual(parseCsv(g.text, g.delimiter), g.expected)
    const recs = records(events)
    if (recs.length !== g.expected.length) throw new Error(`${recs.length} records for ${g.expected.length} rows`)
    // Auto-detection agrees whenever a delimiter occurs outside quotes.
    if (g.columns > 1) deepStrictEqual(await collectEvents(csv, g.text, { header }), events)
    // Any cuts, including inside CRLF, "" and surrogate pairs.
    const cuts = [...new Set(seeds.map((s) => s % (g.text.length + 1)))].sort((a, b) => a - b)
    const cut: DocEvent[] = []
    const handler = await csv.create({
      options: { input_format: 'csv', max_tokens: 512, splitter: 'record', tokenizer: 'approx', overlap_tokens: 0, encoding: 'utf-8', delimiter: g.delimiter, header },
      emit: (e) => { cut.push(e) },
      fail: (code, message) => { throw new DocsplitError(code, message) },
    })
    const write = handler.write as (p: string) => void
    let pos = 0
    for (const c of cuts) { write(g.text.slice(pos, c)); pos = c }
    write(g.text.slice(pos))
    handler.end()
    deepStrictEqual(cut, events)
    deepStrictEqual(await collectEvents(csv, g.text, { delimiter: g.delimiter, header }, 1), events)
  }), { numRuns: Number(process.env.DOCSPLIT_FC_RUNS ?? 200) })
  t.pass('property held')
})

t.test('empty and blank input', async (t) => {
  t.same(await collectEvents(csv, ''), [])
  const blank = '\n\r\n\n'
  const ev = await collectEvents(csv, blank)
  assertTiles(ev, blank)
  t.same(records(ev).map((r) => r.kind), ['blank'])
  const leading = '\n\na,b\n1,2\n\n'
  const ev2 = await collectEvents(csv, leading)
  assertTiles(ev2, leading)
  t.same(records(ev2).map((r) => r.text), ['\n\na,b\n', '1,2\n\n'])
  t.equal(records(ev2)[1]!.context, 'a,b')
})

t.test('header option and context', async (t) => {
  const text = 'id,"na,me"\r\n1,"x\r\ny"\r\n2,z'
  const ev = await collectEvents(csv, text)
  t.same(info(ev, 'columns'), ['id', 'na,me'])
  // The header's own context is itself: a chunk holding only the header says it too.
  t.same(records(ev).map((r) => [r.kind, r.label, r.context]), [['header', 'header', 'id,"na,me"'], ['row', 'row 1', 'id,"na,me"'], ['row', 'row 2', 'id,"na,me"']])
  const noHeader = await collectEvents(csv, text, { header: false })
  t.equal(info(noHeader, 'columns'), undefined)
  t.same(records(noHeader).map((r) => [r.kind, r.label, r.context]), [['row', 'row 1', undefined], ['row', 'row 2', undefined], ['row', 'row 3', undefined]])
})

const titled = 'Sales report 2024\nExported "Q1"\n\nid,name\n1,"a\nb"\n2,c\n'

t.test('header_row: the header is the row on that line; the title lines above it carry no context', async (t) => {
  const text = titled
  const ev = await collectEvents(csv, text, { header_row: 4 })
  t.same(info(ev, 'columns'), ['id', 'name'])
  t.same(records(ev).map((r) => [r.kind, r.label, r.context]), [
    ['row', 'row 1', undefined], ['row', 'row 2', undefined], ['header', 'header', 'id,name'], ['row', 'row 3', 'id,name'], ['row', 'row 4', 'id,name'],
  ])
  assertTiles(ev, text)
  t.same(await collectEvents(csv, text, { header_row: 4 }, 1), ev, 'the same read a character at a time')
  t.same(records(await collectEvents(csv, text, { header_row: 1 })).map((r) => r.kind), ['header', 'row', 'row', 'row', 'row'], 'line 1: the first row, as by default')
  for (const [line, why] of [[3, 'an empty line'], [6, 'inside a quoted field'], [9, 'past the end']] as const) {
    await t.rejects(collectEvents(csv, text, { header_row: line }), { code: 'DOCSPLIT_INVALID_OPTION', message: `header_row ${line}: no row starts on line ${line} (it is empty, inside a quoted field, or past the end)` }, why)
  }
  await t.rejects(collectEvents(csv, text, { header_row: 2, header: false }), { code: 'DOCSPLIT_INVALID_OPTION', message: 'header_row cannot be combined with header: false' })
})

t.test('delimiters: explicit, auto and the tsv default', async (t) => {
  for (const d of [',', ';', '|', '\t']) {
    const text = ['a', 'b', 'c'].join(d) + '\n' + ['1', '"2' + d + '2"', '3'].join(d) + '\n' + ['4', '5', '6'].join(d) + '\n'
    const auto = await collectEvents(csv, text)
    t.equal(info(auto, 'delimiter'), d, `auto finds ${JSON.stringify(d)}`)
    t.same(info(auto, 'columns'), ['a', 'b', 'c'])
    t.same(await collectEvents(csv, text, { delimiter: d }), auto)
  }
  t.same(await collectEvents(csv, 'a;b\tc\n1;2\t3\n', { delimiter: 'tab' }), await collectEvents(csv, 'a;b\tc\n1;2\t3\n', { delimiter: '\t' }), '"tab" names the tab')
  t.same(await collectEvents(csv, 'a;b\tc\n1;2\t3\n', { delimiter: '\\t' }), await collectEvents(csv, 'a;b\tc\n1;2\t3\n', { delimiter: '\t' }), 'a backslash and a t (a shell passes that for \\t) name the tab too')
  const tsv = await collectEvents(csv, 'a,b\tc\n1,2\t3\n', { input_format: 'tsv' })
  t.equal(info(tsv, 'delimiter'), '\t', 'tsv defaults to tab without sniffing')
  t.same(info(tsv, 'columns'), ['a,b', 'c'])
  const single = await collectEvents(csv, 'name\nAnn\nBob\n')
  t.equal(info(single, 'delimiter'), ',', 'one column: comma')
  t.equal(records(single).length, 3)
})

t.test('Excel\'s sep= first line: a record of its own before the header, naming the delimiter', async (t) => {
  // Semicolons and commas both split every row into two fields: without the line, auto would pick `,`.
  const text = 'sep=;\r\nname;city,country\r\nAnna;Berlin,DE\r\nBob;Paris,FR\r\n'
  const ev = await collectEvents(csv, text)
  t.equal(info(ev, 'delimiter'), ';')
  t.same(info(ev, 'columns'), ['name', 'city,country'])
  t.same(records(ev).map((r) => [r.kind, r.label, r.context]), [['sep', 'sep', undefined], ['header', 'header', 'name;city,country'], ['row', 'row 1', 'name;city,country'], ['row', 'row 2', 'name;city,country']])
  assertTiles(ev, text)
  for (const size of [1, 3]) t.same(await collectEvents(csv, text, {}, size), ev, `pieces of ${size}`)
  t.equal(info(await collectEvents(csv, 'SEP=|\na|b\n1|2\n'), 'delimiter'), '|', 'any case, any of the delimiters')
  const given = await collectEvents(csv, text, { delimiter: ',' })
  t.same(records(given).map((r) => r.kind), ['sep', 'header', 'row', 'row'], 'a delimiter given wins; the line is still no header')
  t.same(records(await collectEvents(csv, 'a,b\nsep=;\n1,2\n')).map((r) => r.kind), ['header', 'row', 'row'], 'only as the first line')
  t.ok(csv.detect!(text) > 0.5, 'detected as CSV by content')
  t.ok(csv.detect!('sep=;\nname\nAnna\nBob\n') > 0.5, 'one column under the line too')
  t.same(records(await collectEvents(csv, '\ufeff' + text)).map((r) => r.kind), ['sep', 'header', 'row', 'row'], 'after a byte order mark kept in the text')
  await t.rejects(collectEvents(csv, text, { header_row: 1 }), { code: 'DOCSPLIT_INVALID_OPTION', message: /line 1 is Excel's `sep=` line/ }, 'header_row 1 names the sep line')
  t.same(records(await collectEvents(csv, text, { header_row: 2 })).map((r) => r.kind), ['sep', 'header', 'row', 'row'])
})

t.test('unterminated quote: DOCSPLIT_PARSE_ERROR with the line, without document text', async (t) => {
  const secret = 'TOP-SECRET-VALUE'
  const text = `a,b\n1,${secret}\n2,"${secret} never closed\nmore ${secret}\n`
  for (const size of [Infinity, 1, 5]) {
    const error = await collectEvents(csv, text, {}, size).then(() => undefined, (e: unknown) => e)
    t.ok(error instanceof DocsplitError, 'a DocsplitError')
    const e = error as DocsplitError
    t.equal(e.code, 'DOCSPLIT_PARSE_ERROR')
    t.match(e.message, /^CSV parse error at line 3: /)
    t.notOk(e.message.includes(secret), 'no document content in the message')
  }
  // A closing quote at the very end is fine, and so is a stray quote inside an unquoted field.
  const ok = 'a,b\n1,"x"\n2,y"z\n3,w\n'
  const ev = await collectEvents(csv, ok)
  assertTiles(ev, ok)
  checkRecordsWhole(ev, ok, true)
  t.equal(records(ev).length, 4)
})

t.test('quoted fields that run long, and hostile input, finish', async (t) => {
  const big = 'a,b\n1,"' + 'x,\n'.repeat(200_000) + '"\n2,y\n'
  const ev = await collectEvents(csv, big, {}, 1 << 16)
  assertTiles(ev, big)
  t.equal(records(ev).length, 3)
  const quotes = 'x,' + '"'.repeat(1 << 20) + '\n'
  const ev2 = await collectEvents(csv, quotes, {}, 4096)
  assertTiles(ev2, quotes)
})

t.test('detect: delimited text scores, prose and logs do not', async (t) => {
  t.ok(csv.detect!('id,name,city\n1,Ann,Paris\n2,Bob,Rome\n3,Cy,Oslo\n') > 0.5)
  t.ok(csv.detect!('id\tname\n1\tAnn\n2\tBob\n') > 0.5)
  t.equal(csv.detect!('{"a":1,"b":2,"c":3}\n{"a":3,"b":4,"c":5}\n{"a":5,"b":6,"c":7}\n'), 0, 'JSON lines are not CSV')
  t.equal(csv.detect!('# Title\n\nSome prose, with a comma.\nAnother line.\n'), 0)
  const timestamped = 'time,level,message\n' + Array.from({ length: 20 }, (_, i) => `2024-01-01 10:00:${String(i).padStart(2, '0')},INFO,"event ${i}"`).join('\n')
  t.ok(csv.detect!(timestamped) > log.detect!(timestamped), 'a CSV whose rows start with timestamps is CSV')
  t.equal(csv.detect!('2015-10-18 18:01:47,978 INFO [main] a: b, c\n2015-10-18 18:01:48,963 INFO [main] d\n2015-10-18 18:01:48,963 INFO x, y, z\n'), 0)
  const nginxError = Array.from({ length: 10 }, (_, i) => `2024/03/05 10:00:0${i} [error] 31#31: *${i} upstream timed out, client: 10.0.0.${i}, server: _, request: "GET / HTTP/1.1", host: "example.com"\n`).join('')
  t.equal(csv.detect!(nginxError), 0, 'quotes after text in unquoted fields, on most rows: a log, not CSV')
  t.ok(csv.detect!('a, b, c\n1, "x", 2\n3, "y", 4\n5, "z", 6\n') > 0.5, 'a field quoted after a space is still CSV')
})

// ---- end to end, through split() and the record splitter ----

const { split, splitStream } = await import('../../../index.js')
const tokenizer = 'approx'

async function checkSplit (t: Test, text: string, options: Record<string, unknown>, what: string): Promise<void> {
  const maxTokens = options.max_tokens as number
  const response = await split(text, { tokenizer, ...options })
  const chunks = response.chunks
  t.equal(chunks.map((c) => c.text).join(''), text, `${what}: lossless`)
  t.ok(chunks.every((c) => c.protected === true || c.token_count <= maxTokens), `${what}: within budget unless protected`)
  const events = await collectEvents(csv, text, options)
  const ends = new Set(records(events).map((r) => r.end))
  let pos = 0
  const header = options.header !== false
  const delimiter = info(events, 'delimiter') as string
  const rows: string[][] = []
  for (const c of chunks) {
    pos += c.text.length
    if (!ends.has(pos)) t.fail(`${what}: chunk ${c.index} ends inside a record`)
    rows.push(...parseCsv(c.text, delimiter))
    if (header && c.index > 0 && c.context !== records(events)[1]?.context) t.fail(`${what}: chunk ${c.index} lacks the header context`)
  }
  t.same(rows, parseCsv(text, delimiter), `${what}: chunks parse back to the document's rows`)
  if (header && chunks.length > 0) t.same(response.document.info.columns, parseCsv(text, delimiter)[0], `${what}: columns`)
}

t.test('split() with header_row: the title lines go without context, listed as in effect', async (t) => {
  for (const maxTokens of [16, 512]) {
    const r = await split(titled, { input_format: 'csv', header_row: 4, max_tokens: maxTokens })
    t.equal(r.metadata.options.header_row, 4)
    // they never share a chunk with the header's rows, whose context is not theirs
    t.same(r.chunks.map((c) => [c.text, c.context]), [['Sales report 2024\nExported "Q1"\n\n', null], ['id,name\n1,"a\nb"\n2,c\n', 'id,name']], `${maxTokens} tokens`)
  }
})

t.test('split(): records whole, context on every chunk', async (t) => {
  await checkSplit(t, 'id,"na,me"\r\n1,"x\r\ny"\r\n2,z\r\n3,"😀 ""q"""\r\n', { input_format: 'csv', max_tokens: 8 }, 'small')
  await checkSplit(t, 'a\tb\n1\t2\n3\t4\n', { input_format: 'tsv', max_tokens: 8, header: false }, 'tsv without header')
  await fc.assert(fc.asyncProperty(generatedCsv, fc.constantFrom(8, 16, 64), async (g, maxTokens) => {
    const response = await split(g.text, { tokenizer, input_format: 'csv', delimiter: g.delimiter, max_tokens: maxTokens })
    if (response.chunks.map((c) => c.text).join('') !== g.text) throw new Error('not lossless')
    const rows = response.chunks.flatMap((c) => parseCsv(c.text, g.delimiter))
    deepStrictEqual(rows, g.expected)
  }), { numRuns: Number(process.env.DOCSPLIT_FC_RUNS ?? 60) })
})

t.test('split(): corpus CSV at 64 tokens', { skip: corpusMissing }, async (t) => {
  for (const file of corpusFiles('csv', ['.csv', '.tsv'])) {
    if (LATIN1.test(file)) {
      const response = await split(readFileSync(file), { tokenizer, input_format: 'csv', encoding: 'latin1', max_tokens: 64 })
      t.equal(response.chunks.map((c) => c.text).join(''), new TextDecoder('latin1').decode(readFileSync(file)), `${basename(file)}: latin1 lossless`)
      continue
    }
    const text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '')
    await checkSplit(t, text, { input_format: file.endsWith('.tsv') ? 'tsv' : 'csv', max_tokens: 64 }, basename(file))
  }
})

t.test('a row past 64 MiB (a quote never closed) is a limit, not a crash', async (t) => {
  const err = await split('a,b\n"' + 'x'.repeat((64 << 20) + 10), { input_format: 'csv' }).catch((e: unknown) => e) as { code?: string, message?: string }
  t.equal(err.code, 'DOCSPLIT_LIMIT_EXCEEDED')
  t.match(err.message, /CSV row at line 2: longer than 64 MiB characters/)
  // a long row that ends within one piece of the input: measured too, the rows before it out first
  const long = 'h1,h2\n1,first\n2,' + 'x'.repeat((64 << 20) + 10) + '\n3,after\n'
  const pieces = (async function * () { yield long })()
  const seen: string[] = []
  const stream = splitStream(pieces, { input_format: 'csv' })
  stream.summary.catch(() => {})
  const code = await (async () => { try { for await (const c of stream) seen.push(c.text) } catch (e) { return (e as { code?: string }).code } return 'none' })()
  t.equal(code, 'DOCSPLIT_LIMIT_EXCEEDED', 'one piece of 64 MiB and more: the same limit')
  t.same(seen.join(''), 'h1,h2\n1,first\n', 'the rows before it')
})

t.test('a chunk of the header row alone carries it as context, as every chunk does', async (t) => {
  const r = await split('name,value\n' + Array.from({ length: 6 }, (_, i) => `row${i},${i}`).join('\n') + '\n', { input_format: 'csv', max_tokens: 12, overlap_tokens: 6, tokenizer: 'o200k_base' })
  t.equal(r.chunks[0]!.text, 'name,value\n', 'the header alone')
  t.ok(r.chunks.every((c) => c.context === 'name,value'), r.chunks.map((c) => JSON.stringify(c.context)).join(' '))
})

t.test('with overlap, the header row is not repeated as a record: it travels as context', async (t) => {
  // Header and first row together are over max_tokens - overlap_tokens: the header goes alone.
  const rows = Array.from({ length: 4 }, (_, i) => `${i},name${i},${Array.from({ length: 12 }, (_, k) => `word${i * 12 + k}`).join(' ')}\n`)
  for (const blanks of ['', '\n\n']) {
    const text = `id,name,description\n${blanks}` + rows.join('')
    const r = await split(text, { input_format: 'csv', max_tokens: 60, overlap_tokens: 20 })
    t.equal(r.chunks[0]!.text, `id,name,description\n${blanks}`, 'the header alone')
    t.equal(r.chunks[1]!.char_start, r.chunks[0]!.char_end, 'the next chunk does not start with the header again')
    t.ok(r.chunks.every((c) => !c.text.startsWith('id,name') || c.index === 0), r.chunks.map((c) => JSON.stringify(c.text.slice(0, 12))).join(' '))
    t.ok(r.chunks.slice(1).every((c) => c.context === 'id,name,description'), 'every row chunk carries the header as context')
  }
  // Rows still overlap rows, and a header packed with rows is never part of the overlap.
  const small = 'k,v\n' + Array.from({ length: 8 }, (_, i) => `row${i},${i}\n`).join('')
  // exact counts: a row (5 tokens) fits in the overlap
  const r = await split(small, { input_format: 'csv', max_tokens: 16, overlap_tokens: 6, tokenizer: 'o200k_base' })
  t.ok(r.chunks.slice(1).some((c, i) => c.char_start < r.chunks[i]!.char_end), 'rows overlap')
  t.ok(r.chunks.slice(1).every((c) => c.char_start >= 4), 'no chunk after the first repeats the header')
})

t.test('a title row above the table (a spreadsheet export\'s) is not the header', async (t) => {
  const table = 'Department,Date,Supplier,Amount\nHealth,31/01/2014,ACME LTD,31896.06\nHealth,17/01/2014,ABBOTT,77775.13\n'
  for (const above of ['"Expenditure over £25,000 - January 2014",,,\n,,,\n', 'Transparency Q2 as at 28.10.11,,,\n']) {
    const r = await split(above + table, { input_format: 'csv', max_tokens: 16 })
    t.same(r.document.info.columns, ['Department', 'Date', 'Supplier', 'Amount'], 'the columns are the table\'s')
    t.ok(r.chunks.filter((c) => c.kinds.includes('row') && c.char_start >= above.length).every((c) => c.context === 'Department,Date,Supplier,Amount'), 'every row of the table carries its header')
  }
  // A header of one name over empty columns, a one-column file, a plain table: the first row.
  for (const [text, columns] of [['id,,,\n1,2,3,4\n', ['id', '', '', '']], ['name\nalice\n', ['name']], ['a b,c,d\n1,2,3\n', ['a b', 'c', 'd']]] as const) {
    t.same((await split(text, { input_format: 'csv' })).document.info.columns, columns, JSON.stringify(text))
  }
  // header_row still names the line.
  t.same((await split('Title of it,,\nx,y,z\n', { input_format: 'csv', header_row: 1 })).document.info.columns, ['Title of it', '', ''])
})
