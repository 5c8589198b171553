/**
 * xlsx: Excel workbooks (the `spreadsheets` extra, `@e965/xlsx`), read from bytes.
 *
 * The text the events cover is a virtual text: every selected sheet's rows as CSV lines
 * (RFC 4180 quoting, `\n` after every row), sheet after sheet. Each sheet is a container
 * (`enter {kind:'sheet', label: name}` ... `exit`) holding one record per non-empty row: the
 * header row (kind `header`) then data rows (kind `row`), all carrying the header line as
 * `context` and `fields {sheet, row_start, row_end}` with the sheet's own 1-based row numbers.
 *
 * Untrusted input: the bytes are buffered in memory (bounded), checked by the zip guard
 * (zip-guard.ts) and only then parsed by SheetJS with `sheetRows`. See README.md.
 */
import { Type } from 'typebox'
import { DocsplitError } from '../../../core/errors.js'
import { definePlugin } from '../../../core/registry.js'
import type { BytesParserPlugin, ParserContext, ParserHandler } from '../../../core/types.js'
import type { ZipLimits } from './zip-guard.js'
import type { Budget, SheetLike } from './sheet.js'

/** The zip guard and the sheet reader: loaded with the first workbook. */
interface Readers {
  checkXlsxZip: typeof import('./zip-guard.js').checkXlsxZip
  sheetToCsv: typeof import('./sheet.js').sheetToCsv
  defaultHeaderRow: typeof import('./sheet.js').defaultHeaderRow
}
import { DEFAULT_MAX_INFLATED_BYTES, INFLATED_ENV, MAX_INFLATED_BYTES as MAX_INFLATED, MIN_INFLATED_BYTES as MIN_INFLATED } from './limits.js'
import { OLE_MAGIC } from './signatures.js'

/** The part of the `@e965/xlsx` module this plugin uses. */
export interface XlsxModule {
  read (data: unknown, options: Record<string, unknown>): WorkbookLike
}

interface WorkbookLike {
  SheetNames?: string[]
  Sheets?: Record<string, SheetLike>
  Workbook?: { Sheets?: Array<{ name?: string, Hidden?: number }> }
}

export interface XlsxLimits extends ZipLimits {
  /** Characters of virtual text (all selected sheets as CSV). Default: maxInflatedBytes. */
  maxTextChars?: number
}

export { INFLATED_ENV, DEFAULT_MAX_INFLATED_BYTES, MIN_INFLATED_BYTES, MAX_INFLATED_BYTES } from './limits.js'

export const DEFAULT_LIMITS: Omit<XlsxLimits, 'maxInflatedBytes'> = {
  maxEntries: 10_000,
  maxRatio: 250,
  ratioFloorBytes: 2 ** 20,
  maxSheets: 1000,
  maxRows: 250_000,
  maxCells: 2_000_000,
  maxMerges: 100_000,
}

export const EXTRA_MESSAGE = 'xlsx needs the spreadsheets extra: npm install @e965/xlsx'

export interface XlsxPluginOptions {
  /** Loads SheetJS; a test passes a failing loader to simulate a missing extra. */
  load?: () => Promise<XlsxModule>
  /** Overrides of the default limits (tests; embedders with other budgets). */
  limits?: Partial<XlsxLimits>
}

/**
 * The inflated-size budget from the environment, or the default. The service checks the
 * variable at start (server/env.ts); the library and the CLI read it here, per split.
 */
export function maxInflatedFromEnv (ctx: Pick<ParserContext, 'fail'>, env: Record<string, string | undefined> = process.env): number {
  const raw = env[INFLATED_ENV]
  if (raw === undefined || raw.trim() === '') return DEFAULT_MAX_INFLATED_BYTES
  const n = /^\d{1,10}$/.test(raw.trim()) ? Number(raw.trim()) : NaN
  if (!Number.isInteger(n) || n < MIN_INFLATED || n > MAX_INFLATED) {
    ctx.fail('DOCSPLIT_INVALID_OPTION', `${INFLATED_ENV} must be an integer number of bytes from ${MIN_INFLATED} to ${MAX_INFLATED}`)
  }
  return n
}

const defaultLoad = async (): Promise<XlsxModule> => {
  const name = '@e965/xlsx'
  // A variable specifier keeps the optional package out of static analysis.
  const mod = await import(name) as XlsxModule & { default?: XlsxModule }
  if (typeof mod.read === 'function') return mod
  if (mod.default !== undefined && typeof mod.default.read === 'function') return mod.default
  throw new Error('@e965/xlsx has no read()')
}

/** The first bytes of an OLE compound file as a format sample decodes them: as UTF-8, and as Latin-1. */
const OLE_AS_UTF8 = new TextDecoder().decode(Uint8Array.from(OLE_MAGIC))
const OLE_AS_LATIN1 = String.fromCharCode(...OLE_MAGIC)

const quote = (s: string, max = 40): string => `"${s.length > max ? `${s.slice(0, max)}…` : s}"`

/**
 * Which sheets to emit, as 0-based positions in the workbook, in the order asked. Each entry of
 * `sheets` is a sheet name (exact, then case-insensitive, as Excel's names are) or, failing
 * that, a 1-based position as the tabs show it (`"1"` is the first sheet).
 */
export function selectSheets (names: string[], wanted: string[] | undefined, fail: ParserContext['fail']): number[] {
  if (wanted === undefined || wanted.length === 0) return names.map((_, i) => i)
  const out: number[] = []
  const unknown: string[] = []
  for (const w of wanted) {
    let i = names.indexOf(w)
    if (i < 0) i = names.findIndex((n) => n.toLowerCase() === w.toLowerCase())
    if (i < 0 && /^\d{1,6}$/.test(w.trim())) {
      const k = Number(w.trim())
      if (k >= 1 && k <= names.length) i = k - 1
    }
    if (i < 0) unknown.push(w)
    else if (!out.includes(i)) out.push(i)
  }
  if (unknown.length > 0) {
    // Sheet names are document content: the message gives their count, never the names.
    fail('DOCSPLIT_INVALID_OPTION',
      `sheets: no sheet ${unknown.slice(0, 3).map((u) => quote(u)).join(', ')}${unknown.length > 3 ? ', …' : ''}; the workbook has ${names.length} sheet${names.length === 1 ? '' : 's'}: give their names or 1-based positions (1 to ${names.length})`)
  }
  return out
}

/** `wb.Sheets[name]` as an own property only (a sheet named `toString` must not find a function). */
function ownSheet (wb: WorkbookLike, name: string): SheetLike | undefined {
  const sheets = wb.Sheets
  if (sheets === undefined || sheets === null) return undefined
  if (name === '__proto__') {
    // SheetJS assigns sheets into a plain object: this name lands on the prototype slot.
    const proto = Object.getPrototypeOf(sheets) as unknown
    return proto !== Object.prototype && proto !== null && typeof proto === 'object' ? proto as SheetLike : undefined
  }
  return Object.prototype.hasOwnProperty.call(sheets, name) ? sheets[name] : undefined
}

/**
 * The options xlsx reads: its own `sheets`, and csv's `header` and `header_row`, declared here
 * too (a plugin imports no other) so that they are validated and reported for xlsx splits even
 * without csv. The registry refuses them unless they are exactly csv's: keep the two alike.
 */
const xlsxOptions = Type.Object({
  sheets: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
    maxItems: 1000,
    description: 'xlsx: the sheets to split, by name or by 1-based position as the tabs show them ("1" is the first sheet, unless a sheet is named "1": a name wins), in the order given. Default: every sheet.',
  })),
  header: Type.Optional(Type.Boolean({
    default: true,
    description: 'CSV/TSV and xlsx: the first row is a header: it is reported as `columns` and every chunk carries it as `context`.',
  })),
  hidden_sheets: Type.Optional(Type.Boolean({
    default: true,
    description: 'xlsx: split hidden and very hidden sheets too (as every sheet\'s content is split, and as other splitters do). `false` leaves them out (lookup tables, helper data, what the author did not show); a sheet named in `sheets` is split either way. `document.info.sheets` marks the hidden ones.',
  })),
  header_row: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: 1_048_576,
    description: 'CSV/TSV and xlsx: the 1-based number of the header row, whose line is every later row\'s `context`; rows above it (a title, notes) carry none. CSV/TSV: the row that starts on that line. xlsx: that row of every selected sheet. Default: the first row, passing over up to 10 rows of a title above the table (CSV/TSV: rows of three fields or more, none filled but one that holds words, or none at all, as `"Expenditure over £25,000 - January 2014",,,,,,,` in a spreadsheet export; xlsx: in each sheet, the first of its first 10 non-empty rows with at least half as many values as the widest of them, counting only values that stand in one cell of the row, so that a title or note merged across columns counts for none).',
  })),
})

/** The fields xlsx adds to every chunk: the sheet and the sheet's own 1-based rows. */
const xlsxChunkFields = Type.Object({
  sheet: Type.Optional(Type.String({ description: 'xlsx: the sheet the chunk\'s rows are from.' })),
  row_start: Type.Optional(Type.Integer({ minimum: 1, description: 'xlsx: the first row, by the sheet\'s own 1-based number.' })),
  row_end: Type.Optional(Type.Integer({ minimum: 1, description: 'xlsx: the last row, by the sheet\'s own 1-based number.' })),
})

/** The same fields, typed for library users. */
declare module '../../../core/schema.js' {
  interface ChunkFields {
    /** xlsx: the sheet the chunk's rows are from. */
    sheet?: string
    /** xlsx: the first row, by the sheet's own 1-based number. */
    row_start?: number
    /** xlsx: the last row, by the sheet's own 1-based number. */
    row_end?: number
  }
}

export function createXlsxPlugin (pluginOptions: XlsxPluginOptions = {}): BytesParserPlugin<typeof xlsxOptions> {
  const load = pluginOptions.load ?? defaultLoad
  let loaded: Promise<XlsxModule> | undefined

  return definePlugin({
    kind: 'parser',
    name: 'xlsx',
    docsplit: '^1',
    description: 'Excel workbooks (.xlsx): each sheet\'s rows as CSV records with the header row as context (needs the spreadsheets extra).',
    extra: 'spreadsheets',
    formats: ['xlsx'],
    extensions: ['.xlsx'],
    reads: 'bytes',
    defaultSplitter: 'record',
    options: xlsxOptions,
    chunkFields: xlsxChunkFields,
    async available (): Promise<boolean> {
      try {
        await (loaded ??= load())
        return true
      } catch {
        loaded = undefined
        return false
      }
    },
    detect (sample: string): number {
      // A legacy .xls (an OLE compound file), as the sample decodes it (UTF-8 or Latin-1):
      // chosen, so that the split says to save it as .xlsx rather than fail as text that is not UTF-8.
      if (sample.startsWith(OLE_AS_UTF8) || sample.startsWith(OLE_AS_LATIN1)) return 0.95
      if (!sample.startsWith('PK\u0003\u0004')) return 0
      const head = sample.slice(0, 4096)
      if (head.includes('xl/')) return 0.9
      // An OpenDocument spreadsheet (its manifest is XML, which the xml parser would take): chosen
      // to say so.
      if (head.includes('opendocument.spreadsheet')) return 0.95
      if (head.includes('word/') || head.includes('ppt/')) return 0
      return 0.3
    },
    async create (ctx: ParserContext<typeof xlsxOptions>): Promise<ParserHandler<Uint8Array>> {
      let xlsx: XlsxModule
      try {
        loaded ??= load()
        xlsx = await loaded
      } catch {
        loaded = undefined
        return ctx.fail('DOCSPLIT_EXTRA_UNAVAILABLE', EXTRA_MESSAGE)
      }
      const [{ checkXlsxZip }, { sheetToCsv, defaultHeaderRow }] = await Promise.all([import('./zip-guard.js'), import('./sheet.js')])
      const readers: Readers = { checkXlsxZip, sheetToCsv, defaultHeaderRow }
      const maxInflatedBytes = pluginOptions.limits?.maxInflatedBytes ?? maxInflatedFromEnv(ctx)
      const limits: Required<XlsxLimits> = {
        ...DEFAULT_LIMITS,
        maxTextChars: maxInflatedBytes,
        ...pluginOptions.limits,
        maxInflatedBytes,
      }
      const wanted = ctx.options.sheets
      const withHidden = ctx.options.hidden_sheets !== false
      // `header: false`: no header row, rows carry no context.
      const headerRow = ctx.options.header_row
      const noHeader = ctx.options.header === false
      if (noHeader && headerRow !== undefined) ctx.fail('DOCSPLIT_INVALID_OPTION', 'header_row cannot be combined with header: false')
      // A zip is never much larger than what it inflates to (stored entries, headers).
      const maxInput = limits.maxInflatedBytes + Math.ceil(limits.maxInflatedBytes / 16) + 2 ** 20

      let pieces: Uint8Array[] = []
      let size = 0
      return {
        write (piece: Uint8Array): void {
          size += piece.length
          if (size > maxInput) {
            pieces = []
            ctx.fail('DOCSPLIT_LIMIT_EXCEEDED', `the upload is larger than an XLSX file within DOCSPLIT_MAX_INFLATED_BYTES (${limits.maxInflatedBytes} bytes) can be`)
          }
          pieces.push(piece)
        },
        end (): void {
          const buf = Buffer.concat(pieces, size)
          pieces = []
          parseWorkbook(ctx, xlsx, readers, buf, limits, { wanted, withHidden, headerRow: noHeader ? null : headerRow })
        },
      }
    },
  })
}

interface SheetOut {
  index: number
  name: string
  hidden: boolean
  rows: Array<{ row: number, csv: string }>
  columns: number
  header: number | undefined
}

/** What to read: `wanted` sheets (all when undefined), hidden ones too, and the header row (null: none; undefined: each sheet's own, defaultHeaderRow). */
interface Selection {
  wanted: string[] | undefined
  withHidden: boolean
  headerRow: number | null | undefined
}

function parseWorkbook (ctx: ParserContext, xlsx: XlsxModule, readers: Readers, buf: Buffer, limits: Required<XlsxLimits>, selection: Selection): void {
  const fail: ParserContext['fail'] = (code, message) => ctx.fail(code, message)
  let sheets: SheetOut[]
  try {
    sheets = readSheets(fail, xlsx, readers, buf, limits, selection)
  } catch (err) {
    // Our own refusals pass through; anything else thrown while reading hostile bytes is a
    // damaged file, never a crash and never a message with document content.
    if (err instanceof DocsplitError) throw err
    if (err instanceof RangeError) fail('DOCSPLIT_LIMIT_EXCEEDED', 'the workbook is too large to read')
    return fail('DOCSPLIT_PARSE_ERROR', 'not a readable XLSX workbook (damaged or unsupported content)')
  }
  emitSheets(ctx, sheets)
}

function readSheets (
  fail: ParserContext['fail'], xlsx: XlsxModule, { checkXlsxZip, sheetToCsv, defaultHeaderRow }: Readers, buf: Buffer, limits: Required<XlsxLimits>,
  { wanted, withHidden, headerRow }: Selection,
): SheetOut[] {
  const report = checkXlsxZip(buf, limits, fail)

  const readOptions = {
    type: 'buffer', dense: true, cellDates: true, cellNF: true, sheetRows: limits.maxRows,
    cellFormula: false, cellHTML: false, cellStyles: false, bookVBA: false, bookDeps: false,
  }
  const read = (extra: Record<string, unknown>): WorkbookLike => {
    try {
      return xlsx.read(buf, { ...readOptions, ...extra })
    } catch (err) {
      if (err instanceof RangeError) fail('DOCSPLIT_LIMIT_EXCEEDED', 'the workbook is too large to read')
      return fail('DOCSPLIT_PARSE_ERROR', 'not a readable XLSX workbook (damaged or unsupported content)')
    }
  }

  // With `sheets`, a first pass reads only the names, so unselected sheets are never built.
  let names: string[] | undefined
  if (wanted !== undefined && wanted.length > 0) names = read({ bookSheets: true }).SheetNames ?? []
  const selectedFirst = names === undefined ? undefined : selectSheets(names, wanted, fail)
  const wb = read(selectedFirst === undefined ? {} : { sheets: selectedFirst })
  names = Array.isArray(wb.SheetNames) ? wb.SheetNames.map(String) : []
  if (names.length > limits.maxSheets) fail('DOCSPLIT_LIMIT_EXCEEDED', `the workbook declares more than ${limits.maxSheets} sheets`)
  const isHidden = (index: number): boolean => (wb.Workbook?.Sheets?.[index]?.Hidden ?? 0) !== 0
  // Every sheet, less the hidden ones with `hidden_sheets: false`; sheets named in `sheets` whatever they are.
  const selected = selectedFirst ?? selectSheets(names, wanted, fail).filter((index) => withHidden || !isHidden(index))
  const lower = names.map((n) => n.toLowerCase())
  if (new Set(lower).size !== lower.length) fail('DOCSPLIT_PARSE_ERROR', 'not a readable XLSX workbook: two sheets have the same name')

  const budget: Budget = { cells: Math.max(0, limits.maxCells - report.cells), chars: limits.maxTextChars }
  const sheets: SheetOut[] = []
  for (const index of selected) {
    const name = names[index]
    if (name === undefined) fail('DOCSPLIT_PARSE_ERROR', 'not a readable XLSX workbook (sheet list changed while reading)')
    const ws = ownSheet(wb, name)
    // SheetJS swallows a sheet's parse error and leaves the sheet out: never pass that on silently.
    if (ws === undefined || ws === null || typeof ws !== 'object') {
      fail('DOCSPLIT_PARSE_ERROR', `sheet ${index + 1} could not be read: it is damaged or too large`)
    }
    const text = sheetToCsv(ws, limits, budget, (message) => fail('DOCSPLIT_LIMIT_EXCEEDED', message))
    // headerRow: undefined = the sheet's own (defaultHeaderRow); null = no header (`header: false`).
    const header = headerRow === null
      ? undefined
      : headerRow === undefined
        ? defaultHeaderRow(text.rows)
        : text.rows.some((r) => r.row === headerRow) ? headerRow : undefined
    sheets.push({ index, name, hidden: isHidden(index), rows: text.rows, columns: text.columns, header })
    ws['!data'] = [] // let SheetJS's cells go while the next sheet is converted
  }
  if (typeof headerRow === 'number' && sheets.some((s) => s.rows.length > 0) && sheets.every((s) => s.header === undefined)) {
    fail('DOCSPLIT_INVALID_OPTION', `header_row ${headerRow} is empty in every selected sheet`)
  }
  return sheets
}

function emitSheets (ctx: ParserContext, sheets: SheetOut[]): void {
  ctx.emit({
    type: 'info',
    key: 'sheets',
    value: sheets.map((s) => ({
      name: s.name,
      index: s.index + 1,
      rows: s.rows.length,
      columns: s.columns,
      header_row: s.header ?? null,
      ...(s.hidden ? { hidden: true } : {}),
    })),
  })

  let pos = 0
  for (const s of sheets) {
    ctx.emit({ type: 'enter', kind: 'sheet', label: s.name, start: pos })
    const headerLine = s.header === undefined ? undefined : s.rows.find((r) => r.row === s.header)?.csv
    for (const r of s.rows) {
      const text = `${r.csv}\n`
      const isHeader = r.row === s.header
      const below = s.header !== undefined && r.row > s.header
      ctx.emit({
        type: 'record',
        kind: isHeader ? 'header' : 'row',
        start: pos,
        end: pos + text.length,
        text,
        ...(isHeader || below ? { context: headerLine } : {}),
        fields: { sheet: s.name, row_start: r.row, row_end: r.row },
      })
      pos += text.length
    }
    s.rows = []
    ctx.emit({ type: 'exit', end: pos })
  }
}

export default createXlsxPlugin()
