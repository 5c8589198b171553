/**
 * The `csv` parser plugin (formats `csv` and `tsv`): one record per row, the header row first
 * (or the row `header_row` names), every later row carrying the header row as `context`. Its
 * `header` and `header_row` options serve xlsx's sheets too: xlsx declares them alike, and the
 * registry refuses the pair at start if the two schemas drift apart.
 */
import { Type } from 'typebox'
import { definePlugin } from '../../../core/registry.js'
import type { ParserHandler } from '../../../core/types.js'
import { delimitedScore, sniffDelimiter, type Delimiter } from './sniff.js'

export default definePlugin({
  kind: 'parser',
  name: 'csv',
  docsplit: '^1',
  description: 'CSV and TSV: one record per row (quoted fields may hold delimiters, quotes and line breaks); every chunk carries the header row as context.',
  formats: ['csv', 'tsv'],
  extensions: ['.csv', '.tsv'],
  extensionFormats: { '.tsv': 'tsv' },
  reads: 'text',
  defaultSplitter: 'record',
  options: Type.Object({
    delimiter: Type.Optional(Type.Union([
      Type.Literal(','), Type.Literal(';'), Type.Literal('|'), Type.Literal('\t'), Type.Literal('\\t'), Type.Literal('tab'), Type.Literal('auto'),
    ], { description: 'CSV/TSV: the field delimiter: `,`, `;`, `|`, a tab (the character, or `\\t` as typed in a shell, or the word `tab`), or `auto` to detect it from the first lines (a first line `sep=;`, as Excel writes it, names it). Default: `auto` for csv, a tab for tsv.' })),
    header: Type.Optional(Type.Boolean({
      default: true,
      description: 'CSV/TSV and xlsx: the first row is a header: it is reported as `columns` and every chunk carries it as `context`.',
    })),
    header_row: Type.Optional(Type.Integer({
      minimum: 1,
      maximum: 1_048_576,
      description: 'CSV/TSV and xlsx: the 1-based number of the header row, whose line is every later row\'s `context`; rows above it (a title, notes) carry none. CSV/TSV: the row that starts on that line. xlsx: that row of every selected sheet. Default: the first row, passing over up to 10 rows of a title above the table (CSV/TSV: rows of three fields or more, none filled but one that holds words, or none at all, as `"Expenditure over £25,000 - January 2014",,,,,,,` in a spreadsheet export; xlsx: in each sheet, the first of its first 10 non-empty rows with at least half as many values as the widest of them, counting only values that stand in one cell of the row, so that a title or note merged across columns counts for none).',
    })),
  }),
  detect (sample: string): number {
    return delimitedScore(sample.slice(0, 16 * 1024))
  },
  /** Chosen by content: tab-separated is `tsv` (reported so, and split with tabs). */
  formatOf (sample: string): string {
    const head = sample.slice(0, 16 * 1024)
    return sniffDelimiter(head, head.length === sample.length) === '\t' ? 'tsv' : 'csv'
  },
  async create (ctx): Promise<ParserHandler<string>> {
    // The parser (and csv-parse under it) loads with the first CSV document.
    const { CsvParser, loadCsvParse } = await import('./parse.js')
    await loadCsvParse()
    const tsv = ctx.options.input_format === 'tsv' ||
      (typeof ctx.options.filename === 'string' && ctx.options.filename.toLowerCase().endsWith('.tsv'))
    const option = ctx.options.delimiter as Delimiter | 'tab' | '\\t' | 'auto' | undefined
    const given = option === 'tab' || option === '\\t' ? '\t' : option
    if (ctx.options.header === false && ctx.options.header_row !== undefined) ctx.fail('DOCSPLIT_INVALID_OPTION', 'header_row cannot be combined with header: false')
    const parser = new CsvParser(
      (event) => { ctx.emit(event) },
      (line, reason, why) => why === 'option'
        ? ctx.fail('DOCSPLIT_INVALID_OPTION', reason)
        : why === 'limit'
          ? ctx.fail('DOCSPLIT_LIMIT_EXCEEDED', `CSV row at line ${line}: ${reason}`)
          : ctx.fail('DOCSPLIT_PARSE_ERROR', `CSV parse error at line ${line}: ${reason}`),
      {
        delimiter: given ?? (tsv ? '\t' : 'auto'),
        fallback: tsv ? '\t' : ',',
        header: ctx.options.header !== false,
        headerRow: ctx.options.header_row,
      },
    )
    return {
      write: (piece) => { parser.write(piece) },
      end: () => { parser.end() },
    }
  },
})
