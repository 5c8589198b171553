import t, { type Test } from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import type { DocEvent, RecordEvent } from '../../../core/events.js'
import { DocsplitError } from '../../../core/errors.js'
import { assertTiles, collectEvents } from '../../helpers/events.js'
import { corpusFiles, corpusMissing } from '../../helpers/corpus.js'
import { buildXlsx, dateSerial, deflatedZeros, makeZip, patchZip, readZip, XLSX } from '../../helpers/xlsx-build.js'
import plugin, { createXlsxPlugin, DEFAULT_MAX_INFLATED_BYTES, MAX_INFLATED_BYTES, MIN_INFLATED_BYTES, EXTRA_MESSAGE, type XlsxPluginOptions } from '../../../plugins/formats/xlsx/index.js'
import { cellText, csvField, dateFormatKind, generalNumber } from '../../../plugins/formats/xlsx/sheet.js'
import { split, register, definePlugin, listTokenizers } from '../../../index.js'

// A private tokenizer, so the end-to-end tests do not depend on which tokenizers are installed.
const TOKENIZER = 'xlsx-test-quarter'
if (!listTokenizers().some((p) => p.name === TOKENIZER)) {
  register(definePlugin({ kind: 'tokenizer', name: TOKENIZER, docsplit: '^1', load: () => ({ name: TOKENIZER, count: (s: string) => Math.ceil(s.length / 4), cheap: true }) }))
}

const records = (events: DocEvent[]): RecordEvent[] => events.filter((e): e is RecordEvent => e.type === 'record')
const virtualText = (events: DocEvent[]): string => records(events).map((r) => r.text).join('')
const texts = (events: DocEvent[]): string[] => records(events).map((r) => r.text)
const sheetsInfo = (events: DocEvent[]): Array<Record<string, unknown>> =>
  (events.find((e) => e.type === 'info' && e.key === 'sheets') as { value: Array<Record<string, unknown>> }).value

/** Splits one CSV line (RFC 4180, may hold quoted line breaks) into fields. */
function parseCsvLine (line: string): string[] {
  const out: string[] = []
  let i = 0
  for (;;) {
    let field = ''
    if (line[i] === '"') {
      i++
      for (;;) {
        const q = line.indexOf('"', i)
        if (q < 0) throw new Error('unterminated quote')
        field += line.slice(i, q)
        if (line[q + 1] === '"') { field += '"'; i = q + 2 } else { i = q + 1; break }
      }
    } else {
      const comma = line.indexOf(',', i)
      const stop = comma < 0 ? line.length : comma
      field = line.slice(i, stop)
      i = stop
    }
    out.push(field)
    if (i >= line.length) return out
    if (line[i] !== ',') throw new Error(`bad CSV at ${i}`)
    i++
  }
}

/** The structural rules every xlsx event stream follows, whatever the workbook. */
function checkStructure (t: Test, events: DocEvent[]): void {
  const text = virtualText(events)
  t.doesNotThrow(() => { assertTiles(events, text) }, 'events tile the virtual text')
  const info = sheetsInfo(events)
  const enters = events.filter((e) => e.type === 'enter')
  t.same(enters.map((e) => e.type === 'enter' && e.label), info.map((s) => s.name), 'one sheet container per listed sheet, in order')
  let sheet: string | undefined
  let last = 0
  let header: string | undefined
  let depth = 0
  let pos = 0
  for (const e of events) {
    if (e.type === 'enter') {
      t.equal(e.kind, 'sheet')
      t.equal(e.start, pos, 'a sheet starts where the previous ended')
      depth++
      sheet = e.label
      last = 0
      header = undefined
    } else if (e.type === 'exit') {
      t.equal(e.end, pos, 'a sheet ends after its last row')
      depth--
    } else if (e.type === 'record') {
      if (depth !== 1) t.fail('record outside a sheet')
      pos = e.end
      const f = e.fields ?? {}
      if (f.sheet !== sheet) t.fail(`record of sheet ${String(f.sheet)} inside ${String(sheet)}`)
      if (f.row_start !== f.row_end || typeof f.row_start !== 'number' || f.row_start <= last) t.fail(`row numbers out of order at ${String(f.row_start)}`)
      last = f.row_start as number
      if (!e.text.endsWith('\n')) t.fail('a row ends with a line break')
      if (e.kind === 'header') {
        if (header !== undefined) t.fail('two header rows in one sheet')
        header = e.text.slice(0, -1)
        t.equal(e.context, header, 'the header row is its own context')
      } else if (e.kind === 'row') {
        if (header !== undefined && e.context !== header) t.fail(`row ${last} lacks the header context`)
      } else {
        t.fail(`unexpected record kind ${String(e.kind)}`)
      }
    }
  }
  t.equal(depth, 0)
}

const parse = async (bytes: Uint8Array, options: Record<string, unknown> = {}, pluginOptions?: XlsxPluginOptions): Promise<DocEvent[]> =>
  await collectEvents(pluginOptions === undefined ? plugin : createXlsxPlugin(pluginOptions), bytes, options)

async function rejects (t: Test, bytes: Uint8Array, code: string, message?: RegExp | string, options: Record<string, unknown> = {}, pluginOptions?: XlsxPluginOptions): Promise<void> {
  try {
    await parse(bytes, options, pluginOptions)
    t.fail(`expected ${code}`)
  } catch (err) {
    t.ok(err instanceof DocsplitError, 'a DocsplitError, not a crash')
    t.equal((err as DocsplitError).code, code, (err as Error).message)
    if (typeof message === 'string') t.equal((err as Error).message, message)
    else if (message !== undefined) t.match((err as Error).message, message)
  }
}

// ---------------------------------------------------------------------------------------------

t.test('corpus workbooks', { skip: corpusMissing }, async (t) => {
  const files = corpusFiles('xlsx', ['.xlsx'])
  t.ok(files.length > 0, 'the corpus has xlsx files')
  for (const file of files) {
    await t.test(basename(file), async (t) => {
      const bytes = readFileSync(file)
      const events = await parse(bytes)
      checkStructure(t, events)
      // Independent read: every sheet is there, and every text cell appears in its row.
      const wb = XLSX.read(bytes, { type: 'buffer', dense: true })
      t.same(sheetsInfo(events).map((s) => s.name), wb.SheetNames, 'every sheet, in workbook order')
      const rowsBySheet = new Map<string, Map<number, string[]>>()
      for (const r of records(events)) {
        const sheet = String(r.fields?.sheet)
        if (!rowsBySheet.has(sheet)) rowsBySheet.set(sheet, new Map())
        rowsBySheet.get(sheet)!.set(r.fields?.row_start as number, parseCsvLine(r.text.slice(0, -1)))
      }
      let checked = 0
      for (const name of wb.SheetNames) {
        const data = (wb.Sheets[name]?.['!data'] ?? []) as Array<Array<XLSX.CellObject | undefined> | undefined>
        data.forEach((row, r) => row?.forEach((cell) => {
          if (cell?.t !== 's' || typeof cell.v !== 'string' || cell.v === '') return
          const fields = rowsBySheet.get(name)?.get(r + 1)
          if (fields === undefined || !fields.includes(cell.v)) t.fail(`${name} row ${r + 1}: text cell missing`)
          checked++
        }))
      }
      t.pass(`${checked} text cells found in their rows`)
    })
  }
  t.test('through split() with the record splitter', async (t) => {
    for (const file of files) {
      const res = await split(readFileSync(file), { input_format: 'xlsx', max_tokens: 64, tokenizer: TOKENIZER })
      let pos = 0
      for (const c of res.chunks) {
        if (c.char_start !== pos) t.fail(`${basename(file)}: chunks do not tile`)
        pos = c.char_end
        const ch = c as unknown as Record<string, unknown>
        if (typeof ch.sheet !== 'string' || (ch.row_start as number) > (ch.row_end as number)) t.fail(`${basename(file)}: chunk ${c.index} lacks its rows`)
        if (c.path[0] !== ch.sheet) t.fail(`${basename(file)}: chunk ${c.index} path is not its sheet`)
      }
      t.equal(pos, res.document.char_count, `${basename(file)}: chunks cover the virtual text`)
    }
  })
})

// ---------------------------------------------------------------------------------------------

t.test('values as the sheet shows them', async (t) => {
  const bytes = buildXlsx([
    {
      name: 'Orders',
      rows: [
        ['Customer', 'Date', 'Time', 'Stamp', 'Qty', 'Price', 'Total', 'Paid', 'Share', 'Note'],
        ['Zoë "Z" Ångström', new Date(Date.UTC(2024, 2, 15)), { t: 'n', v: 0.5625, z: 'hh:mm' },
          { t: 'n', v: dateSerial(new Date(Date.UTC(2024, 2, 15, 13, 45, 30))), z: 'yyyy-mm-dd hh:mm:ss' },
          3, { t: 'n', v: 1234.5, z: '#,##0.00' }, { t: 'n', v: 3703.5, f: 'E2*F2', z: '#,##0.00' }, true,
          { t: 'n', v: 0.125, z: '0.0%' }, 'line one\nline two, with comma'],
        ['日本語テキスト 🎉', { t: 'n', v: 45000, z: 'd-mmm-yy' }, null, null, { t: 'n', v: 0.1 + 0.2 }, { t: 'n', v: 123456789012345 },
          { t: 'e', v: 7, w: '#DIV/0!' }, false, { t: 'n', v: 2, f: '1+1' }, '  padded  '],
      ],
    },
    { name: 'Empty', rows: [] },
    {
      name: 'Merged',
      rows: [
        [null, null, null],
        [null, 'Quarterly report', null, null],
        [null, 'Region', 'Q1', 'Q2'],
        [null, 'North', 10, 20],
        [null, null, 30, 40],
        [],
        [null, 'South', 50, 60],
      ],
      merges: ['B2:D2', 'B4:B5'],
    },
  ])
  const events = await parse(bytes)
  checkStructure(t, events)
  t.same(texts(events), [
    'Customer,Date,Time,Stamp,Qty,Price,Total,Paid,Share,Note\n',
    '"Zoë ""Z"" Ångström",2024-03-15,13:30:00,2024-03-15T13:45:30,3,"1,234.50","3,703.50",TRUE,12.5%,"line one\nline two, with comma"\n',
    '日本語テキスト 🎉,2023-03-15,,,0.3,123456789012345,#DIV/0!,FALSE,2,  padded  \n',
    'Quarterly report,Quarterly report,Quarterly report\n',
    'Region,Q1,Q2\n',
    'North,10,20\n',
    'North,30,40\n',
    'South,50,60\n',
  ], 'dates ISO, formulas as cached values, formats applied, merges filled, empty rows and columns left out')
  t.same(sheetsInfo(events), [
    { name: 'Orders', index: 1, rows: 3, columns: 10, header_row: 1 },
    { name: 'Empty', index: 2, rows: 0, columns: 0, header_row: null },
    { name: 'Merged', index: 3, rows: 5, columns: 3, header_row: 3 },
  ])
  const merged = records(events).filter((r) => r.fields?.sheet === 'Merged')
  t.same(merged.map((r) => [r.kind, r.fields?.row_start, r.context]), [
    ['row', 2, undefined],
    ['header', 3, 'Region,Q1,Q2'],
    ['row', 4, 'Region,Q1,Q2'],
    ['row', 5, 'Region,Q1,Q2'],
    ['row', 7, 'Region,Q1,Q2'],
  ], 'row numbers are the sheet\'s own; the header by default is the first row as wide as the others, not a title merged across them')
  const titled = buildXlsx([{ name: 'T', rows: [['Q3 report'], ['Source: ledger'], ['Region', 'Revenue', 'Growth'], ['North', 10, '5%'], ['South', 20, '7%']] }, { name: 'Plain', rows: [['a', 'b'], [1, 2]] }, { name: 'One', rows: [['x'], ['y']] },
    // A form's top row: labels, and a title and a note each merged over columns (so repeated).
    { name: 'Form', rows: [['Kunde:', 'Filiale:', '', 'Liste', 'Liste', 'Je Filiale max. 500', 'Je Filiale max. 500', 'Je Filiale max. 500', 'Je Filiale max. 500', 'Datum:'], ['Pos', 'Artikel', 'Name', 'Preis', 'Menge', 'VKE', 'Gebraucht', 'Bestand', 'Bedarf', 'Tour'], [1, 500, 'Filter', 9.5, 2, 'St', 0, 1, 1, 'A']] }])
  t.same(sheetsInfo(await parse(titled)).map((s) => s.header_row), [3, 1, 1, 2], 'a title and a note above the header are passed over; a one-column sheet starts with its header; merged values count once')
  const enterEmpty = events.findIndex((e) => e.type === 'enter' && e.label === 'Empty')
  t.equal(events[enterEmpty + 1]?.type, 'exit', 'an empty sheet is an empty container')
})

t.test('cell text helpers', async (t) => {
  t.equal(generalNumber(0.1 + 0.2), '0.3')
  t.equal(generalNumber(-0), '0')
  t.equal(generalNumber(1 / 3), '0.333333333333333')
  t.equal(csvField('a,b'), '"a,b"')
  t.equal(csvField('say "hi"'), '"say ""hi"""')
  t.equal(csvField('cr\rlf'), '"cr\rlf"')
  t.equal(csvField('plain text'), 'plain text')
  t.equal(dateFormatKind('[h]:mm:ss'), 'elapsed')
  t.equal(dateFormatKind('yyyy-mm-dd'), 'date')
  t.equal(dateFormatKind('mmm yyyy'), 'date')
  t.equal(dateFormatKind('h:mm AM/PM'), 'time')
  t.equal(dateFormatKind('m/d/yy h:mm'), 'datetime')
  t.equal(dateFormatKind('[$-409]dddd, mmmm d, yyyy'), 'date')
  t.equal(cellText({ t: 'd', v: new Date(Date.UTC(1899, 11, 31, 6, 30)) }), '06:30:00', 'a bare time has no date part')
  t.equal(cellText({ t: 'd', v: new Date(Date.UTC(2024, 0, 2, 0, 0, 0, 400)), z: 'yyyy-mm-dd hh:mm:ss' }), '2024-01-02T00:00:00', 'rounded to the second')
  t.equal(cellText({ t: 'd', v: new Date(Date.UTC(2024, 0, 2, 0, 0, 0, 400)), z: 'hh:mm:ss.00' }), '00:00:00.400', 'fractions kept when shown')
  t.equal(cellText({ t: 'd', v: new Date(Date.UTC(1900, 0, 1, 12)), z: '[h]:mm', w: '36:00' }), '36:00', 'durations as shown')
  t.equal(cellText({ t: 'n', v: 5, z: ';;;', w: '' }), '', 'a hidden value shows nothing')
  t.equal(cellText({ t: 's', v: 'ab\uD800c' }), 'ab\uD800c', 'cell text as is (lone surrogates are replaced per row)')
})

t.test('options', async (t) => {
  const bytes = buildXlsx([
    { name: 'Alpha', rows: [['a'], ['1']] },
    { name: 'Beta', rows: [['Report title'], [], ['col1', 'col2'], ['x', 'y']] },
    { name: '3', rows: [['three']] },
  ])
  const labels = (events: DocEvent[]): string[] => events.flatMap((e) => e.type === 'enter' ? [e.label] : [])
  t.same(labels(await parse(bytes, { sheets: ['Beta'] })), ['Beta'], 'by name')
  t.same(labels(await parse(bytes, { sheets: ['beta', '1'] })), ['Beta', 'Alpha'], 'case-insensitive name, 1-based position, in the order given')
  t.same(labels(await parse(bytes, { sheets: ['3'] })), ['3'], 'a sheet named "3" wins over position 3')
  t.same(labels(await parse(bytes, { sheets: ['2', 'Beta'] })), ['Beta'], 'duplicates once')
  t.same(labels(await parse(bytes, { sheets: [] })), ['Alpha', 'Beta', '3'], 'an empty list means every sheet')
  await rejects(t, bytes, 'DOCSPLIT_INVALID_OPTION', 'sheets: no sheet "Gamma"; the workbook has 3 sheets: give their names or 1-based positions (1 to 3)', { sheets: ['Gamma'] })
  await rejects(t, bytes, 'DOCSPLIT_INVALID_OPTION', /no sheet "0"/, { sheets: ['0'] })
  await rejects(t, bytes, 'DOCSPLIT_INVALID_OPTION', /no sheet "4"/, { sheets: ['4'] })

  const beta = await parse(bytes, { sheets: ['Beta'], header_row: 3 })
  checkStructure(t, beta)
  t.same(records(beta).map((r) => [r.kind, r.fields?.row_start, r.context ?? null]), [
    ['row', 1, null],
    ['header', 3, 'col1,col2'],
    ['row', 4, 'col1,col2'],
  ], 'rows above header_row carry no context')
  const all = await parse(bytes, { header_row: 3 })
  t.same(sheetsInfo(all).map((s) => s.header_row), [null, 3, null], 'header_row applies where that row has values')
  await rejects(t, bytes, 'DOCSPLIT_INVALID_OPTION', /header_row 9 is empty in every selected sheet/, { header_row: 9 })
  const plain = await parse(bytes, { sheets: ['Beta'], header: false })
  t.same(records(plain).map((r) => [r.kind, r.context ?? null]), [['row', null], ['row', null], ['row', null]], 'header: false: no header, no context')
  await rejects(t, bytes, 'DOCSPLIT_INVALID_OPTION', /cannot be combined/, { header: false, header_row: 2 })
})

t.test('header and header_row, csv\'s options, are xlsx\'s too: listed in metadata.options, checked', async (t) => {
  const bytes = buildXlsx([{ name: 'S', rows: [['Title'], ['k', 'v'], ['a', 'b']] }])
  const given = await split(bytes, { input_format: 'xlsx', header_row: 2, tokenizer: TOKENIZER })
  t.equal(given.metadata.options.header_row, 2, 'header_row given: in effect and listed')
  t.equal(given.metadata.options.header, true, 'header: its default, as for csv')
  t.notOk('encoding' in given.metadata.options, 'encoding, a text option, is not in effect for a workbook')
  t.same(given.chunks.map((c) => [c.text, c.context ?? null]), [['Title,\n', null], ['k,v\na,b\n', 'k,v']], 'and it applies: the title row goes without the header\'s context')
  const off = await split(bytes, { input_format: 'xlsx', header: false, tokenizer: TOKENIZER })
  t.equal(off.metadata.options.header, false)
  t.notOk('header_row' in off.metadata.options, 'not given: not listed (it has no default)')
  t.notOk('delimiter' in given.metadata.options, 'csv\'s other options are still not xlsx\'s')
  await t.rejects(split(bytes, { input_format: 'xlsx', header_row: 0 }), { code: 'DOCSPLIT_INVALID_OPTION', message: /header_row must be an integer from 1 to 1048576/ })
  const csv = await split('k,v\na,b\n', { input_format: 'csv', header_row: 1, sheets: ['S'] })
  t.same(Object.keys(csv.metadata.options), ['input_format', 'max_tokens', 'splitter', 'tokenizer', 'overlap_tokens', 'encoding', 'invalid_bytes', 'header', 'header_row'], 'csv unchanged: xlsx\'s sheets not listed')
})

t.test('hidden sheets are read and marked; hidden_sheets: false leaves them out, but for one named in `sheets`', async (t) => {
  const bytes = buildXlsx([{ name: 'Shown', rows: [['a']] }, { name: 'Lookup', rows: [['b']], hidden: true }])
  t.same(sheetsInfo(await parse(bytes)).map((s) => [s.name, s.hidden ?? false]), [['Shown', false], ['Lookup', true]], 'by default')
  t.same(sheetsInfo(await parse(bytes, { hidden_sheets: false })).map((s) => s.name), ['Shown'], 'hidden_sheets: false')
  t.same(sheetsInfo(await parse(bytes, { hidden_sheets: false, sheets: ['Lookup'] })).map((s) => [s.name, s.hidden ?? false]), [['Lookup', true]], 'named')
  const r = await split(bytes, { input_format: 'xlsx', hidden_sheets: 'false' } as never)
  t.same(r.chunks.map((c) => c.sheet), ['Shown'])
  t.equal(r.metadata.options.hidden_sheets, false, 'the effective value is reported')
})

t.test('with overlap, the header row is not repeated as a record: it travels as context', async (t) => {
  const rows: string[][] = [['id', 'name', 'description']]
  for (let i = 0; i < 4; i++) rows.push([String(i), `name${i}`, Array.from({ length: 12 }, (_, k) => `word${i * 12 + k}`).join(' ')])
  // Header and first row together are over max_tokens - overlap_tokens: the header goes alone.
  const r = await split(buildXlsx([{ name: 'S', rows }]), { input_format: 'xlsx', max_tokens: 60, overlap_tokens: 20, tokenizer: 'approx' })
  t.equal(r.chunks[0]!.text, 'id,name,description\n', 'the header alone')
  t.equal(r.chunks[1]!.char_start, r.chunks[0]!.char_end, 'the next chunk does not start with the header again')
  t.ok(r.chunks.every((c) => c.context === 'id,name,description'))
})

t.test('50,000 rows, end to end through split()', async (t) => {
  const rows: Array<Array<string | number>> = [['id', 'name', 'amount']]
  for (let i = 1; i <= 50_000; i++) rows.push([i, `customer ${i}`, i * 1.25])
  const bytes = buildXlsx([{ name: 'Big', rows }, { name: 'Tail', rows: [['k', 'v'], ['a', 'b']] }])
  const res = await split(bytes, { input_format: 'xlsx', max_tokens: 256, tokenizer: TOKENIZER })
  t.same((res.document.info as { sheets: unknown }).sheets, [
    { name: 'Big', index: 1, rows: 50_001, columns: 3, header_row: 1 },
    { name: 'Tail', index: 2, rows: 2, columns: 2, header_row: 1 },
  ])
  let nextRow = 1
  let sheet = 'Big'
  let bad = 0
  for (const c of res.chunks) {
    const ch = c as unknown as { sheet: string, row_start: number, row_end: number, context?: string }
    if (ch.sheet !== sheet) { sheet = ch.sheet; nextRow = 1 }
    if (ch.row_start !== nextRow) bad++
    nextRow = ch.row_end + 1
    if (c.token_count > 256) bad++
    if (ch.context !== (sheet === 'Big' ? 'id,name,amount' : 'k,v')) bad++
    const lines = c.text.split('\n').length - 1
    if (lines !== ch.row_end - ch.row_start + 1) bad++
  }
  t.equal(bad, 0, 'chunks hold consecutive whole rows of one sheet, under budget, with the header as context')
  t.equal(nextRow, 3, 'the last chunk ends with the last row of the last sheet')
  t.ok(res.chunks.length > 100, 'many chunks')
  t.match(res.chunks.at(-2)?.text, /^\d+,customer \d+,[\d.]+\n/)
  t.equal((res.chunks.at(-2) as unknown as { row_end: number }).row_end, 50_001)
})

t.test('the spreadsheets extra', async (t) => {
  const missing = createXlsxPlugin({ load: async () => { throw Object.assign(new Error("Cannot find package '@e965/xlsx'"), { code: 'ERR_MODULE_NOT_FOUND' }) } })
  try {
    await collectEvents(missing, buildXlsx([{ name: 'A', rows: [['a']] }]))
    t.fail('expected DOCSPLIT_EXTRA_UNAVAILABLE')
  } catch (err) {
    t.equal((err as DocsplitError).code, 'DOCSPLIT_EXTRA_UNAVAILABLE')
    t.equal((err as Error).message, EXTRA_MESSAGE)
  }
  t.equal(plugin.extra, 'spreadsheets')
  t.equal(plugin.reads, 'bytes')
  t.equal(plugin.defaultSplitter, 'record')
  t.same(plugin.formats, ['xlsx'])
  t.same(plugin.extensions, ['.xlsx'])
  t.equal(plugin.detect?.('PK\u0003\u0004\u0014\u0000 xl/workbook.xml'), 0.9)
  t.equal(plugin.detect?.('PK\u0003\u0004 word/document.xml'), 0)
  t.equal(plugin.detect?.('name,value\n'), 0)
})

// ---------------------------------------------------------------------------------------------

t.test('DOCSPLIT_MAX_INFLATED_BYTES', async (t) => {
  const bytes = buildXlsx([{ name: 'A', rows: [['a', 'b'], [1, 2]] }])
  const saved = process.env.DOCSPLIT_MAX_INFLATED_BYTES
  t.teardown(() => {
    if (saved === undefined) delete process.env.DOCSPLIT_MAX_INFLATED_BYTES
    else process.env.DOCSPLIT_MAX_INFLATED_BYTES = saved
  })
  t.equal(DEFAULT_MAX_INFLATED_BYTES, 64 * 2 ** 20)
  // The same range the service checks at start (server/env.ts).
  t.same([MIN_INFLATED_BYTES, MAX_INFLATED_BYTES], [1024, 2 ** 31 - 1])
  const { envSchema } = await import('../../../server/env.js')
  t.match(envSchema.DOCSPLIT_MAX_INFLATED_BYTES, { minimum: MIN_INFLATED_BYTES, maximum: MAX_INFLATED_BYTES, default: DEFAULT_MAX_INFLATED_BYTES })
  for (const bad of ['lots', '-5', '1.5', '12', '99999999999']) {
    process.env.DOCSPLIT_MAX_INFLATED_BYTES = bad
    await rejects(t, bytes, 'DOCSPLIT_INVALID_OPTION', /^DOCSPLIT_MAX_INFLATED_BYTES must be an integer/)
  }
  process.env.DOCSPLIT_MAX_INFLATED_BYTES = '4096'
  await rejects(t, bytes, 'DOCSPLIT_LIMIT_EXCEEDED', /DOCSPLIT_MAX_INFLATED_BYTES/)
  await rejects(t, Buffer.alloc(2 ** 20 + 8192, 1), 'DOCSPLIT_LIMIT_EXCEEDED', /upload is larger/)
  process.env.DOCSPLIT_MAX_INFLATED_BYTES = String(2 ** 20)
  t.equal(texts(await parse(bytes)).join(''), 'a,b\n1,2\n', 'a budget that fits')
})

t.test('hostile input', async (t) => {
  const good = buildXlsx([{ name: 'A', rows: [['a', 'b'], [1, 2]] }, { name: 'B', rows: [['c']] }])
  const goodEntries = readZip(good)

  t.test('not a zip', async (t) => {
    await rejects(t, Buffer.from('name,value\n1,2\n'), 'DOCSPLIT_PARSE_ERROR', 'not an XLSX file (no zip signature)')
    await rejects(t, new Uint8Array(0), 'DOCSPLIT_PARSE_ERROR', 'not an XLSX file (no zip signature)')
    await rejects(t, Buffer.from('<?xml version="1.0"?><Workbook/>'), 'DOCSPLIT_PARSE_ERROR', 'not an XLSX file (no zip signature)')
    await rejects(t, Buffer.from('<!--'.repeat(150_387)), 'DOCSPLIT_PARSE_ERROR', 'not an XLSX file (no zip signature)', {}, undefined)
    // The signature, then no zip: damaged, not "no signature".
    await rejects(t, Buffer.from('PK\x03\x04garbage-not-a-zip', 'latin1'), 'DOCSPLIT_PARSE_ERROR', 'not a readable XLSX file: damaged zip (21 bytes, shorter than a zip\'s first header)')
    await rejects(t, Buffer.from('PK\x03\x04' + 'garbage-not-a-zip '.repeat(4), 'latin1'), 'DOCSPLIT_PARSE_ERROR', /^not a readable XLSX file: damaged zip \(/)
  })

  t.test('OLE compound files', async (t) => {
    const ole = Buffer.alloc(4096)
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(ole)
    const encrypted = Buffer.from(ole)
    Buffer.from('EncryptedPackage', 'utf16le').copy(encrypted, 1024)
    await rejects(t, encrypted, 'DOCSPLIT_PARSE_ERROR', 'password-protected workbooks are not supported')
    await rejects(t, ole, 'DOCSPLIT_PARSE_ERROR', /password-protected workbooks are not supported, and \.xls/)
  })

  t.test('a legacy .xls or an .ods under auto: read as a workbook, to say to save it as .xlsx', async (t) => {
    const ole = Buffer.alloc(4096)
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(ole)
    // An .ods's manifest is XML, which the xml parser took, and read as UTF-8 it failed at byte 15.
    const mimetype = Buffer.from('application/vnd.oasis.opendocument.spreadsheet')
    // Stored, not deflated, and first, as OpenDocument has it.
    const ods = makeZip([{ name: 'mimetype', method: 0, compressed: mimetype, usize: mimetype.length }, { name: 'META-INF/manifest.xml', data: Buffer.from('<?xml version="1.0" encoding="UTF-8"?><manifest:manifest/>') }])
    for (const [filename, bytes, encoding, message] of [['old.xls', ole, undefined, /\.xls must be saved as \.xlsx/], ['report.bin', ole, 'latin1', /\.xls must be saved as \.xlsx/], ['sheet.ods', ods, undefined, /OpenDocument/]] as const) {
      const error = await split(bytes, { filename, encoding }).then(() => undefined, (e: unknown) => e as DocsplitError)
      t.equal(error?.code, 'DOCSPLIT_PARSE_ERROR', filename)
      t.match(error?.message, message)
    }
  })

  t.test('zip bomb: declared size over the budget', async (t) => {
    const zeros = deflatedZeros(100 * 2 ** 20)
    t.ok(zeros.length < 200_000, 'a small upload')
    const bomb = makeZip([...goodEntries.map((e) => ({ name: e.name, data: e.data })), { name: 'xl/media/zeros.bin', compressed: zeros, usize: 100 * 2 ** 20 }])
    await rejects(t, bomb, 'DOCSPLIT_LIMIT_EXCEEDED', /declares 100 MiB/)

    // The same bomb with lying headers: it claims 1000 bytes.
    const lying = makeZip([...goodEntries.map((e) => ({ name: e.name, data: e.data })), { name: 'xl/media/zeros.bin', compressed: zeros, usize: 1000 }])
    await rejects(t, lying, 'DOCSPLIT_LIMIT_EXCEEDED', /inflates to more than its declared size/)

    // Honest entries, each under the budget, together over it (ratio cap lifted to reach the total).
    const eight = deflatedZeros(8 * 2 ** 20)
    const many = makeZip([...goodEntries.map((e) => ({ name: e.name, data: e.data })),
      ...Array.from({ length: 9 }, (_, i) => ({ name: `xl/media/z${i}.bin`, compressed: eight, usize: 8 * 2 ** 20 }))])
    await rejects(t, many, 'DOCSPLIT_LIMIT_EXCEEDED', /declares more than 64 MiB/, {}, { limits: { maxRatio: 5000 } })
    await rejects(t, many, 'DOCSPLIT_LIMIT_EXCEEDED', /compressed more than 250:1/)
  })

  t.test('lying and damaged headers', async (t) => {
    const sheet = goodEntries.find((e) => e.name === 'xl/worksheets/sheet1.xml')!
    const others = goodEntries.filter((e) => e !== sheet).map((e) => ({ name: e.name, data: e.data }))
    await rejects(t, makeZip([...others, { name: sheet.name, data: sheet.data, usize: sheet.data.length + 10 }]), 'DOCSPLIT_PARSE_ERROR', /damaged zip/)
    await rejects(t, makeZip([...others, { name: sheet.name, data: sheet.data, usize: 10 }]), 'DOCSPLIT_LIMIT_EXCEEDED', /more than its declared size/)
    await rejects(t, makeZip([...others, { name: sheet.name, data: sheet.data, localUsize: 50 * 2 ** 20 }]), 'DOCSPLIT_PARSE_ERROR', /disagree/)
    await rejects(t, makeZip([...others, { name: sheet.name, data: sheet.data, localUsize: 500 * 2 ** 20 }]), 'DOCSPLIT_LIMIT_EXCEEDED', /declares 500 MiB/)
    await rejects(t, makeZip([...others, { name: sheet.name, data: sheet.data, flags: 1 }]), 'DOCSPLIT_PARSE_ERROR', /encrypted/)
    await rejects(t, makeZip([...others, { name: sheet.name, method: 0, compressed: Buffer.from('x'), usize: 5 }]), 'DOCSPLIT_PARSE_ERROR', /damaged zip/)
    await rejects(t, good.subarray(0, Math.floor(good.length / 2)), 'DOCSPLIT_PARSE_ERROR', /damaged zip/)
    await rejects(t, makeZip([{ name: 'mimetype', data: Buffer.from('application/vnd.oasis.opendocument.spreadsheet') }, { name: 'META-INF/manifest.xml', data: Buffer.from('<manifest/>') }]), 'DOCSPLIT_PARSE_ERROR', /OpenDocument/)
    await rejects(t, makeZip([{ name: 'hello.txt', data: Buffer.from('hi') }]), 'DOCSPLIT_PARSE_ERROR', /without \[Content_Types\]\.xml/)
  })

  t.test('a workbook declaring a million sheets', async (t) => {
    const wbXml = '<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>' +
      '<sheet name="S" sheetId="1" r:id="rId1"/>'.repeat(1_000_000) + '</sheets></workbook>'
    const bytes = patchZip(good, { 'xl/workbook.xml': wbXml })
    t.ok(bytes.length < 2 ** 20, 'a small upload')
    await rejects(t, bytes, 'DOCSPLIT_LIMIT_EXCEEDED', /compressed more than 250:1/)
    await rejects(t, bytes, 'DOCSPLIT_LIMIT_EXCEEDED', /more than 1000 sheets/, {}, { limits: { maxRatio: 1e6 } })
  })

  t.test('a sheet with rows up to 1,048,576', async (t) => {
    const head = '<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:A1048576"/><sheetData>'
    const sparse = head + '<row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="A1048576"><v>2</v></c></row></sheetData></worksheet>'
    await rejects(t, patchZip(good, { 'xl/worksheets/sheet1.xml': sparse }), 'DOCSPLIT_LIMIT_EXCEEDED', /values beyond row 250000/)
    // A cell whose own reference points far below its row.
    const hidden = head + '<row r="1"><c r="A1048576"><v>2</v></c></row></sheetData></worksheet>'
    await rejects(t, patchZip(good, { 'xl/worksheets/sheet1.xml': hidden }), 'DOCSPLIT_LIMIT_EXCEEDED', /values beyond row 250000/)
    // Every row present (no r attributes): caught by counting rows.
    const dense = head + '<row><c><v>1</v></c></row>'.repeat(300_000) + '</sheetData></worksheet>'
    await rejects(t, patchZip(good, { 'xl/worksheets/sheet1.xml': dense }), 'DOCSPLIT_LIMIT_EXCEEDED', /more than 250000 rows/, {}, { limits: { maxRatio: 1e6 } })
  })

  t.test('cell and merge caps', async (t) => {
    const grid = Array.from({ length: 20 }, (_, r) => Array.from({ length: 10 }, (_, c) => r * 10 + c))
    const bytes = buildXlsx([{ name: 'Grid', rows: grid }])
    await rejects(t, bytes, 'DOCSPLIT_LIMIT_EXCEEDED', /more than 100 cells/, {}, { limits: { maxCells: 100 } })
    t.equal(records(await parse(bytes, {}, { limits: { maxCells: 300 } })).length, 20)
    const merged = buildXlsx([{ name: 'M', rows: [['top'], ...Array.from({ length: 30 }, () => [null, 'x', 'y'])], merges: ['A1:A31'] }])
    await rejects(t, merged, 'DOCSPLIT_LIMIT_EXCEEDED', /once merged ranges are filled/, {}, { limits: { maxCells: 80 } })
    t.equal(texts(await parse(merged)).at(-1), 'top,x,y\n', 'a vertical merge fills every row')
    await rejects(t, bytes, 'DOCSPLIT_LIMIT_EXCEEDED', /text is too large/, {}, { limits: { maxTextChars: 100 } })
  })

  t.test('rows as wide as the sheet: their cells are read, not their 16,384 columns', async (t) => {
    // Values in A and in XFD: SheetJS reads each row as an array 16,384 long holding two cells.
    const wide = (rows: number): Buffer => patchZip(buildXlsx([{ name: 'Wide', rows: [['x']] }]), {
      'xl/worksheets/sheet1.xml': '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' +
        Array.from({ length: rows }, (_, i) => `<row r="${i + 1}"><c r="A${i + 1}"><v>${i}</v></c><c r="XFD${i + 1}"><v>${i}</v></c></row>`).join('') +
        '</sheetData></worksheet>',
    })
    const rows = texts(await parse(wide(2), { header: false }))
    t.same(rows.map((r) => [r.length, r.split(',').length, r.slice(0, 2), r.slice(-2)]), [[16386, 16384, '0,', '0\n'], [16386, 16384, '1,', '1\n']], 'the CSV of every column between, empty ones too')
    // 20,000 of them are 320 MB of commas, past the text limit: refused (it took 18 s, now under one).
    await rejects(t, wide(20_000), 'DOCSPLIT_LIMIT_EXCEEDED', /text is too large/)
  })

  t.test('a number format longer than Excel writes is refused before SheetJS formats every cell with it', async (t) => {
    const book = buildXlsx([{ name: 'S', rows: [[{ t: 'n', v: 1, z: '0.00' } as never]] }])
    const styles = readZip(book).find((e) => e.name === 'xl/styles.xml')!.data.toString()
    const withFormat = (code: string): Buffer => patchZip(book, { 'xl/styles.xml': styles.replace(/<numFmts[^]*?<\/numFmts>/, `<numFmts count="1"><numFmt numFmtId="164" formatCode="${code}"/></numFmts>`) })
    t.equal(texts(await parse(withFormat('&quot;x&quot;'.repeat(60) + '0.0'))).length, 1, 'one of 123 characters, escaped to 600 bytes, is read')
    await rejects(t, withFormat('#,'.repeat(1500) + '0.0'), 'DOCSPLIT_LIMIT_EXCEEDED', 'a number format is longer than Excel allows (255 characters)')
  })

  t.test('a sheet SheetJS silently drops is an error', async (t) => {
    const withoutSheet = makeZip(goodEntries.filter((e) => e.name !== 'xl/worksheets/sheet2.xml').map((e) => ({ name: e.name, data: e.data })))
    await rejects(t, withoutSheet, 'DOCSPLIT_PARSE_ERROR', 'sheet 2 could not be read: it is damaged or too large')
    const broken = patchZip(good, { 'xl/worksheets/sheet2.xml': '<worksheet><sheetData><row r="1"><c r="A1" t="s"><v>99</v></c></row></sheetData></worksheet>' })
    await rejects(t, broken, 'DOCSPLIT_PARSE_ERROR', 'sheet 2 could not be read: it is damaged or too large')
    t.same(texts(await parse(broken, { sheets: ['A'] })), ['a,b\n', '1,2\n'], 'the other sheets can still be selected')
  })

  t.test('sheet names that are Object.prototype keys', async (t) => {
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const events = await parse(buildXlsx([{ name, rows: [['v']] }, { name: 'Z', rows: [['w']] }]))
      t.same(texts(events), ['v\n', 'w\n'], name)
      t.equal(({} as Record<string, unknown>).v, undefined, 'no prototype pollution')
    }
  })

  t.test('random damage never crashes', async (t) => {
    const small = buildXlsx([{ name: 'A', rows: [['a', 'b'], [1, new Date(Date.UTC(2020, 0, 1))]], merges: ['A1:B1'] }])
    let parsed = 0
    let refused = 0
    await fc.assert(fc.asyncProperty(
      fc.array(fc.tuple(fc.nat({ max: small.length - 1 }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }),
      async (edits) => {
        const bytes = Buffer.from(small)
        for (const [at, value] of edits) bytes[at] = value
        try {
          const events = await parse(bytes)
          assertTiles(events, virtualText(events))
          parsed++
        } catch (err) {
          if (!(err instanceof DocsplitError)) throw err
          refused++
        }
      }), { numRuns: 150, seed: 4242 })
    t.equal(parsed + refused, 150, `${parsed} parsed, ${refused} refused with a DocsplitError`)
  })
  t.end()
})

t.test('input in pieces, auto by file name, formulas without cached values', async (t) => {
  const bytes = buildXlsx([{ name: 'S', rows: [['k', 'v'], ['a', { t: 'n', v: 2, f: '1+1' }]] }])
  const whole = texts(await parse(bytes))
  t.same(texts(await collectEvents(plugin, bytes, {}, 777)), whole, 'pieces of 777 bytes give the same events')
  const res = await split(bytes, { filename: 'report.xlsx', max_tokens: 64, tokenizer: TOKENIZER })
  t.equal(res.document.input_format, 'xlsx', 'auto picks xlsx by extension')
  t.equal(res.chunks.map((c) => c.text).join(''), whole.join(''))
  const noCache = patchZip(bytes, {
    'xl/worksheets/sheet1.xml': '<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' +
      '<row r="1"><c r="A1" t="inlineStr"><is><t>k</t></is></c></row><row r="2"><c r="A2"><f>1+1</f></c></row></sheetData></worksheet>',
  })
  t.same(texts(await parse(noCache)), ['k\n'], 'a formula with no saved value shows nothing (nothing is recalculated)')
})

t.test('a workbook under a text name: the UTF-8 error says its bytes look like xlsx and how to read them so', async (t) => {
  const bytes = buildXlsx([{ name: 'S', rows: [['k', 'v'], ['a', 1]] }])
  for (const options of [{ filename: 'report.txt' }, { input_format: 'markdown' }]) {
    const error = await split(bytes, { ...options, max_tokens: 64, tokenizer: TOKENIZER }).then(() => undefined, (e: unknown) => e)
    t.ok(error instanceof DocsplitError && error.code === 'DOCSPLIT_INVALID_UTF8', JSON.stringify(options))
    t.match((error as Error).message, /^the bytes look like xlsx, not text: pass input_format "xlsx" to read them so; the input is not valid UTF-8 at byte \d+/)
  }
  const other = await split(Buffer.from([0x41, 0xff, 0xfe, 0x00, 0x42]), { filename: 'a.txt' }).then(() => undefined, (e: unknown) => e)
  t.match((other as Error).message, /^the input is not valid UTF-8 at byte 1;/, 'other bytes: no format named')
})
