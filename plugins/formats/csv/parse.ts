/**
 * The CSV/TSV parser: one `record` per row, the header row first (kind `header`), then rows
 * (kind `row`) that carry the header row as `context`. With `headerRow`, the rows above the
 * header (a title, notes) are rows without context.
 *
 * Rows are found by a small state machine over string indices, with the quoting rules of
 * csv-parse (`relax_quotes`, record delimiters `\r\n`, `\n` and `\r`): a quote opens a quoted
 * field only at the start of a field; inside it `""` is a quote and a quote before anything
 * else closes it; line breaks inside quotes are data. Empty lines belong to the row before them
 * (leading ones to the first row). csv-parse parses the header row into `columns`.
 *
 * Streaming: the parser holds the current row and, until the delimiter is chosen, a sample
 * (SAMPLE_LINES lines or SAMPLE_CHARS characters). Output does not depend on how the input is
 * cut into pieces.
 */
import { SampleBuffer } from '../../../core/structure.js'
import type { DocEvent } from '../../../core/events.js'
import { SEP_LINE, sniffDelimiter, type Delimiter } from './sniff.js'

export const SAMPLE_LINES = 50
export const SAMPLE_CHARS = 64 * 1024
/** Characters a row may have: a row is one record, kept whole, and held whole until it ends. */
export const MAX_ROW_CHARS = 64 << 20

/** Rows above the header passed over as titles, at most: the next row is the header whatever it holds. */
const MAX_TITLE_ROWS = 10

/**
 * A row that is a spreadsheet export's title or spacing above the table, not its header: three
 * fields or more, none filled but (at most) one that holds words (`"Expenditure over £25,000 -
 * January 2014",,,,,,,`). A header names its columns; `id,,,` keeps its one name as a header.
 */
function isTitleRow (fields: string[]): boolean {
  if (fields.length < 3) return false
  const filled = fields.filter((f) => f.trim() !== '')
  return filled.length === 0 || (filled.length === 1 && /\S\s+\S/.test(filled[0]!.trim()))
}

export interface CsvParserOptions {
  /** A delimiter, or `auto` to detect it (falling back to `fallback`). */
  delimiter: Delimiter | 'auto'
  fallback: Delimiter
  header: boolean
  /** The line the header row starts on (1-based); rows above it carry no context. Default: the first row. */
  headerRow?: number | undefined
}

let parse: typeof import('csv-parse/sync').parse | undefined

/** csv-parse loads with the first CSV document: it costs every other start of docsplit ~20 ms. */
export async function loadCsvParse (): Promise<void> {
  parse ??= (await import('csv-parse/sync')).parse
}

/** Parses one row (no line ending) as csv-parse does with the parser's quoting rules. */
export function parseRow (text: string, delimiter: string): string[] {
  if (parse === undefined) throw new Error('loadCsvParse() must run before a CSV header is parsed')
  const rows = parse(text, {
    delimiter,
    relax_quotes: true,
    relax_column_count: true,
    record_delimiter: ['\r\n', '\n', '\r'],
  }) as string[][]
  return rows[0] ?? []
}

export class CsvParser {
  private readonly emit: (event: DocEvent) => void
  /** `limit`: the input is over a limit (DOCSPLIT_LIMIT_EXCEEDED); `option`: an option does not fit the input. */
  private readonly fail: (line: number, reason: string, why?: 'limit' | 'option') => never
  private readonly options: CsvParserOptions
  private delimiter: Delimiter | undefined
  private delimCode = 44

  private readonly sample = new SampleBuffer(SAMPLE_LINES, SAMPLE_CHARS)

  private docPos = 0
  private recStart = 0
  /** The line the current record starts on. */
  private recLine = 1
  private pre = ''
  private rowStart = 0
  /** The line the current row starts on. */
  private rowLine = 1
  private rowEnd = 0
  private inRow = false
  private afterRow = false
  private inQuote = false
  private quotePending = false
  private fieldStart = true
  private prevCR = false
  private line = 1
  private quoteLine = 1
  private rows = 0
  private headerText: string | undefined

  constructor (emit: (event: DocEvent) => void, fail: (line: number, reason: string, why?: 'limit' | 'option') => never, options: CsvParserOptions) {
    this.emit = emit
    this.fail = fail
    this.options = options
  }

  write (piece: string): void {
    if (piece.length === 0) return
    if (this.delimiter === undefined && this.options.delimiter !== 'auto') this.decide(this.options.delimiter)
    if (this.delimiter === undefined) {
      if (!this.sample.add(piece)) return
      this.decide(sniffDelimiter(this.sample.sample(false), false, this.options.fallback))
      this.scan(this.sample.take())
      return
    }
    this.scan(piece)
  }

  end (): void {
    if (this.delimiter === undefined) {
      const held = this.sample.take()
      if (held.length === 0) return // empty document: no events
      this.decide(sniffDelimiter(held, true, this.options.fallback))
      this.scan(held)
    }
    if (this.quotePending) {
      this.quotePending = false
      this.inQuote = false
    }
    if (this.inQuote) this.fail(this.quoteLine, 'a quoted field is not closed (a closing quote is missing)')
    if (this.inRow) {
      this.rowEnd = this.docPos
      this.inRow = false
      this.afterRow = true
    }
    if (this.docPos > this.recStart) {
      if (this.afterRow) this.record(this.pre, this.recStart, this.docPos)
      else this.emit({ type: 'record', kind: 'blank', start: this.recStart, end: this.docPos, text: this.pre })
    }
    this.pre = ''
    if (this.options.header && this.headerText === undefined && this.options.headerRow !== undefined) this.noHeaderRow()
  }

  /**
   * Whether the row ending now is the header: the one on line `headerRow`, or else the first
   * row that is no title above the table (see isTitleRow), among the first MAX_TITLE_ROWS.
   */
  private isHeader (row: string): boolean {
    const wanted = this.options.headerRow
    if (wanted === undefined) return this.rows >= MAX_TITLE_ROWS || !isTitleRow(parseRow(row, this.delimiter!))
    if (this.rowLine === wanted) return true
    // A row past that line: none starts on it.
    if (this.rowLine > wanted) this.noHeaderRow()
    return false
  }

  private noHeaderRow (): never {
    const wanted = this.options.headerRow!
    return this.fail(wanted, `header_row ${wanted}: no row starts on line ${wanted} (it is empty, inside a quoted field, or past the end)`, 'option')
  }

  private decide (delimiter: Delimiter): void {
    this.delimiter = delimiter
    this.delimCode = delimiter.charCodeAt(0)
    this.emit({ type: 'info', key: 'delimiter', value: delimiter })
  }

  /** Emits the record [start, end) whose row is [rowStart, rowEnd). */
  private record (text: string, start: number, end: number): void {
    // However the input was cut: a row read whole within one piece is measured here.
    if (text.length > MAX_ROW_CHARS) {
      this.fail(this.recLine, `longer than ${MAX_ROW_CHARS >> 20} MiB characters with the blank lines after it (a quoted field not closed?): a row is kept whole, so one this long is refused`, 'limit')
    }
    if (start === 0 && this.rows === 0 && SEP_LINE.test(text)) {
      // Excel's delimiter line: not the header, not data.
      if (this.options.headerRow === 1) this.fail(1, 'header_row 1: line 1 is Excel\'s `sep=` line, which names the delimiter; the header is the row after it (leave header_row out, or give the line it starts on)', 'option')
      this.emit({ type: 'record', kind: 'sep', label: 'sep', start, end, text })
      return
    }
    const row = text.slice(this.rowStart - start, this.rowEnd - start)
    if (this.options.header && this.headerText === undefined && this.isHeader(row)) {
      this.headerText = row
      this.emit({ type: 'info', key: 'columns', value: parseRow(row, this.delimiter!) })
      // Its own context too: a chunk of the header alone says which header it is, as every other does.
      this.emit({ type: 'record', kind: 'header', label: 'header', start, end, text, context: row })
      return
    }
    this.rows++
    const event: DocEvent = { type: 'record', kind: 'row', label: `row ${this.rows}`, start, end, text }
    if (this.headerText !== undefined) event.context = this.headerText
    this.emit(event)
  }

  private scan (piece: string): void {
    const base = this.docPos
    const n = piece.length
    const delim = this.delimCode
    let seg = 0
    let i = 0
    let inQuote = this.inQuote
    let quotePending = this.quotePending
    let fieldStart = this.fieldStart
    let inRow = this.inRow
    let prevCR = this.prevCR
    let line = this.line
    while (i < n) {
      let c = piece.charCodeAt(i)
      if (quotePending) {
        quotePending = false
        if (c === 34) { i++; continue } // "" inside quotes
        inQuote = false
        fieldStart = false
      }
      if (inQuote) {
        const q = piece.indexOf('"', i)
        const stop = q === -1 ? n : q
        for (let k = i; k < stop; k++) {
          c = piece.charCodeAt(k)
          if (c === 10) { if (!prevCR) line++; prevCR = false } else if (c === 13) { line++; prevCR = true } else prevCR = false
        }
        if (q === -1) { i = n; break }
        prevCR = false
        quotePending = true
        i = q + 1
        continue
      }
      if (c === 10 || c === 13) {
        if (c === 10) { if (!prevCR) line++; prevCR = false } else { line++; prevCR = true }
        if (inRow) {
          this.rowEnd = base + i
          inRow = false
          this.afterRow = true
        }
        fieldStart = true
        i++
        continue
      }
      prevCR = false
      if (!inRow) {
        const p = base + i
        if (this.afterRow) {
          // A new row starts: the record before it ends here.
          const text = this.pre.length > 0 ? this.pre + piece.slice(seg, i) : piece.slice(seg, i)
          this.record(text, this.recStart, p)
          this.pre = ''
          seg = i
          this.recStart = p
          this.recLine = line
          this.afterRow = false
        }
        inRow = true
        this.rowStart = p
        this.rowLine = line
        fieldStart = true
      }
      if (c === delim) fieldStart = true
      else if (c === 34 && fieldStart) {
        inQuote = true
        this.quoteLine = line
        fieldStart = false
      } else fieldStart = false
      i++
    }
    this.inQuote = inQuote
    this.quotePending = quotePending
    this.fieldStart = fieldStart
    this.inRow = inRow
    this.prevCR = prevCR
    this.line = line
    this.pre += seg === 0 ? piece : piece.slice(seg)
    this.docPos = base + n
    if (this.pre.length > MAX_ROW_CHARS) {
      this.fail(this.inQuote ? this.quoteLine : line, `longer than ${MAX_ROW_CHARS >> 20} MiB characters with the blank lines after it (a quoted field not closed?): a row is kept whole, so one this long is refused`, 'limit')
    }
  }
}
