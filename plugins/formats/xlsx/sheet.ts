/**
 * One SheetJS worksheet (dense mode, read with `cellDates`, `cellNF`) to CSV rows: the values
 * as the sheet shows them, merged ranges filled from their top-left value, empty rows and the
 * empty columns around the data left out.
 */

/** The part of a SheetJS cell object this module reads. */
export interface CellLike {
  t?: string
  v?: unknown
  w?: string
  z?: string | number
}

export interface RangeLike {
  s: { r: number, c: number }
  e: { r: number, c: number }
}

/** The part of a SheetJS worksheet this module reads (`dense: true`). */
export interface SheetLike {
  '!data'?: Array<Array<CellLike | undefined> | undefined>
  '!merges'?: RangeLike[]
  '!type'?: string
}

export interface CsvRow {
  /** Row number as the spreadsheet shows it (1-based). */
  row: number
  /** The row as one CSV line, without its line break. */
  csv: string
  /**
   * How many values it holds once only, for the first HEADER_SCAN rows: a cell merged across
   * columns shows its value in each (a title, a note), and counts for none of them.
   */
  distinct?: number
}

/** How many of a row's values stand in one of its cells only. */
function valuesOnce (row: unknown[]): number {
  const times = new Map<unknown, number>()
  for (const v of row) if (v !== undefined) times.set(v, (times.get(v) ?? 0) + 1)
  let once = 0
  for (const n of times.values()) if (n === 1) once++
  return once
}

/** Non-empty rows of a sheet among which the default header row is chosen (see defaultHeaderRow). */
export const HEADER_SCAN = 10

/**
 * The row a sheet's header is by default: the first of its first HEADER_SCAN non-empty rows that
 * holds at least half as many values (each in one cell only) as the widest of them, so that a
 * title above the header (one value, or one merged across the columns) and notes under it are
 * passed over (a row of a few labels and notes merged over several columns each, too); the first
 * row when none holds two.
 */
export function defaultHeaderRow (rows: CsvRow[]): number | undefined {
  const head = rows.slice(0, HEADER_SCAN)
  const widest = Math.max(0, ...head.map((r) => r.distinct ?? 0))
  if (widest < 2) return rows[0]?.row
  return head.find((r) => 2 * (r.distinct ?? 0) >= widest)?.row
}

export interface SheetText {
  rows: CsvRow[]
  /** Fields per row (the used columns). */
  columns: number
}

export interface SheetLimits {
  /** Rows with values beyond this row number are refused. */
  maxRows: number
  /** Cells (stored plus filled by merges) in the workbook. */
  maxCells: number
}

/** Shared across the sheets of one workbook: what may still be spent. */
export interface Budget {
  cells: number
  chars: number
}

export type LimitFail = (message: string) => never

/** Excel's last column is XFD. */
const MAX_COLUMN = 16383

/** "General" numbers: 15 significant digits, as Excel stores them, without float noise. */
export function generalNumber (v: number): string {
  if (!Number.isFinite(v)) return Number.isNaN(v) ? '#NUM!' : '#DIV/0!'
  const s = String(Number(v.toPrecision(15)))
  return s === '-0' ? '0' : s
}

function isGeneral (z: string | number | undefined): boolean {
  return z === undefined || z === 0 || (typeof z === 'string' && /^general$/i.test(z.trim()))
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0')

/** What a date format shows: an elapsed time, a date, a time, both, or (unknown) decide by value. */
export function dateFormatKind (z: string | number | undefined): 'elapsed' | 'date' | 'time' | 'datetime' | 'unknown' {
  if (typeof z !== 'string' || isGeneral(z)) return 'unknown'
  // First section only; no quoted text, escapes, padding or fill characters.
  let s = z.replace(/"[^"]*"/g, '').replace(/\\./g, '').replace(/[_*]./g, '')
  s = s.split(';')[0] ?? ''
  if (/\[(h+|m+|s+)\]/i.test(s)) return 'elapsed'
  s = s.replace(/\[[^\]]*\]/g, '')
  const date = /[ydeb]/i.test(s) || /m{3,}/i.test(s) || (/m/i.test(s) && !/[hs]/i.test(s))
  const time = /[hs]/i.test(s) || /am\/pm|a\/p/i.test(s)
  if (date && time) return 'datetime'
  if (date) return 'date'
  if (time) return 'time'
  return 'unknown'
}

/** A date cell as ISO 8601: `2024-03-15`, `13:45:00`, `2024-03-15T13:45:00`. SheetJS dates are UTC. */
export function isoDate (d: Date, z: string | number | undefined, shown: string | undefined): string {
  const t = d.getTime()
  if (!Number.isFinite(t)) return shown?.trim() ?? ''
  let kind = dateFormatKind(z)
  if (kind === 'elapsed') return shown?.trim() ?? ''
  const fraction = typeof z === 'string' && /s+\.0/i.test(z)
  const x = new Date(fraction ? t : Math.round(t / 1000) * 1000)
  const datePart = `${x.getUTCFullYear() < 0 ? '-' : ''}${pad(Math.abs(x.getUTCFullYear()), 4)}-${pad(x.getUTCMonth() + 1)}-${pad(x.getUTCDate())}`
  const ms = x.getUTCMilliseconds()
  const timePart = `${pad(x.getUTCHours())}:${pad(x.getUTCMinutes())}:${pad(x.getUTCSeconds())}${ms !== 0 ? `.${pad(ms, 3)}` : ''}`
  if (kind === 'unknown') {
    const midnight = x.getUTCHours() === 0 && x.getUTCMinutes() === 0 && x.getUTCSeconds() === 0 && ms === 0
    kind = midnight ? 'date' : x.getUTCFullYear() < 1900 ? 'time' : 'datetime'
  }
  if (kind === 'date') return datePart
  if (kind === 'time') return timePart
  return `${datePart}T${timePart}`
}

/** The text a cell shows. */
export function cellText (cell: CellLike | undefined): string {
  if (cell === undefined || cell === null || typeof cell !== 'object') return ''
  const { t, v, w, z } = cell
  switch (t) {
    case 's': return typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v)
    case 'b': return v === true ? 'TRUE' : 'FALSE'
    case 'e': return typeof w === 'string' ? w : '#N/A'
    case 'd': return v instanceof Date ? isoDate(v, z, w) : typeof w === 'string' ? w.trim() : ''
    case 'n': {
      if (typeof v !== 'number') return typeof w === 'string' ? w.trim() : ''
      if (isGeneral(z) || typeof w !== 'string') return generalNumber(v)
      return w.trim()
    }
    case 'z': case undefined: return ''
    default: return typeof w === 'string' ? w : v === undefined || v === null ? '' : String(v)
  }
}

const NEEDS_QUOTES = /[",\r\n]/
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** One CSV field, quoted as RFC 4180 asks. */
export function csvField (s: string): string {
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

function validRange (m: unknown): m is RangeLike {
  const r = m as RangeLike | undefined
  return r !== undefined && r !== null && typeof r === 'object' && r.s !== undefined && r.e !== undefined &&
    Number.isInteger(r.s.r) && Number.isInteger(r.s.c) && Number.isInteger(r.e.r) && Number.isInteger(r.e.c) &&
    r.s.r >= 0 && r.s.c >= 0 && r.e.r >= r.s.r && r.e.c >= r.s.c
}

/**
 * The sheet's rows as CSV lines. Rows with no value are left out (row numbers stay those of the
 * sheet); columns left and right of all values are left out; cells inside a merged range take
 * the range's top-left value. Spends `budget` and calls `fail` when a limit is passed.
 */
/**
 * Rows longer than this are visited by their own keys, which are their cells: a row with a value
 * in column A and one in XFD is an array 16,384 long with two cells, and visiting every column
 * of 100,000 such rows (a 768 KB workbook) took 70 s.
 */
const SPARSE_FROM = 1024

export function sheetToCsv (ws: SheetLike, limits: SheetLimits, budget: Budget, fail: LimitFail): SheetText {
  if (ws['!type'] === 'chart') return { rows: [], columns: 0 }
  const data = Array.isArray(ws['!data']) ? ws['!data'] : []
  const values: Array<string[] | undefined> = []
  let minRow = Infinity
  let maxRow = -1
  let minCol = Infinity
  let maxCol = -1
  let rowsWithValues = 0
  const rowCount = data.length
  for (let r = 0; r < rowCount; r++) {
    const cells = data[r]
    if (!Array.isArray(cells)) continue
    let out: string[] | undefined
    // A row wider than SPARSE_FROM is visited by its own keys, its cells (see SPARSE_FROM).
    const keys = cells.length > SPARSE_FROM ? Object.keys(cells) : undefined
    const count = keys?.length ?? cells.length
    for (let k = 0; k < count; k++) {
      const c = keys === undefined ? k : Number(keys[k])
      const text = cellText(cells[c])
      if (text === '') continue
      if (r >= limits.maxRows) fail(`a sheet has values beyond row ${limits.maxRows}`)
      if (c > MAX_COLUMN) fail('a sheet has values beyond column XFD')
      if (out === undefined) out = values[r] = []
      out[c] = text
      if (c < minCol) minCol = c
      if (c > maxCol) maxCol = c
    }
    if (out !== undefined) {
      if (r < minRow) minRow = r
      maxRow = r
      rowsWithValues++
    }
  }
  if (maxRow < 0) return { rows: [], columns: 0 }

  // Merged ranges, clipped to the used area, take their top-left value.
  for (const m of Array.isArray(ws['!merges']) ? ws['!merges'] : []) {
    if (!validRange(m)) continue
    const top = values[m.s.r]?.[m.s.c]
    if (top === undefined) continue
    const r1 = Math.min(m.e.r, maxRow)
    const c0 = Math.max(m.s.c, minCol)
    const c1 = Math.min(m.e.c, maxCol)
    for (let r = Math.max(m.s.r, minRow); r <= r1; r++) {
      for (let c = c0; c <= c1; c++) {
        let row = values[r]
        if (row?.[c] !== undefined) continue
        if (--budget.cells < 0) fail(`the workbook has more than ${limits.maxCells} cells once merged ranges are filled`)
        if (row === undefined) row = values[r] = []
        row[c] = top
      }
    }
  }

  const rows: CsvRow[] = []
  const columns = maxCol - minCol + 1
  // A row's CSV is at least its commas and its line end: a sheet too wide for the text left
  // fails here, before rows of thousands of empty fields are built (merged ranges may add rows).
  if (rowsWithValues * columns > budget.chars) fail('the workbook\'s text is too large')
  for (let r = minRow; r <= maxRow; r++) {
    const row = values[r]
    if (row === undefined) continue
    const fields: string[] = new Array<string>(columns)
    for (let c = minCol; c <= maxCol; c++) {
      const v = row[c]
      fields[c - minCol] = v === undefined ? '' : csvField(v)
    }
    let csv = fields.join(',')
    if (/[\uD800-\uDFFF]/.test(csv)) csv = csv.replace(LONE_SURROGATE, '\uFFFD')
    budget.chars -= csv.length + 1
    if (budget.chars < 0) fail('the workbook\'s text is too large')
    rows.push(rows.length < HEADER_SCAN ? { row: r + 1, csv, distinct: valuesOnce(row) } : { row: r + 1, csv })
    values[r] = undefined
  }
  return { rows, columns }
}
