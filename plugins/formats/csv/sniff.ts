/**
 * Delimiter detection for CSV and TSV: the candidate that splits the sample rows into the same
 * number of fields most consistently.
 */

export const DELIMITERS = [',', '\t', ';', '|'] as const
export type Delimiter = typeof DELIMITERS[number]

/**
 * Excel's delimiter line (`sep=;`, written by exports for locales whose lists use `;`): the
 * first line of the document (after a byte order mark left in text given as a string), naming
 * one of DELIMITERS. Excel reads it and shows the next row as the first; so does the parser (a
 * record of kind `sep`, before the header).
 */
export const SEP_LINE = /^\uFEFF?sep=([,\t;|])[ \t]*(?:\r\n|\n|\r|$)/i

/** The delimiter a sample's `sep=` line names, if it starts with one. */
export function sepDelimiter (sample: string): Delimiter | undefined {
  return SEP_LINE.exec(sample)?.[1] as Delimiter | undefined
}

/** The sample after its `sep=` line, if it has one. */
function afterSep (sample: string): string {
  const m = SEP_LINE.exec(sample)
  return m === null ? sample : sample.slice(m[0].length)
}

/**
 * For each row of a sample, how many times `delimiter` separates fields, with the parser's own
 * quoting rules (a quote opens a quoted field only at the start of a field). `stray` counts the
 * other quotes, and the rows that hold one after text (`a "b"`; not `, "b"`, a common laxity).
 */
function countRows (sample: string, complete: boolean, delimiter: number, stray?: { count: number, rows?: number }): number[] {
  const rows: number[] = []
  let count = 0
  let inQuote = false
  let fieldStart = true
  let rowHasContent = false
  let rowHasStray = false
  let fieldHasText = false
  let laxQuote = false
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i)
    if (inQuote) {
      if (c === 34) {
        if (sample.charCodeAt(i + 1) === 34) i++
        else inQuote = false
      }
      continue
    }
    if (c === 10 || c === 13) {
      if (rowHasContent) rows.push(count)
      if (rowHasStray && stray !== undefined) stray.rows = (stray.rows ?? 0) + 1
      count = 0
      rowHasContent = false
      rowHasStray = false
      fieldHasText = laxQuote = false
      fieldStart = true
      continue
    }
    rowHasContent = true
    if (c === delimiter) {
      count++
      fieldStart = true
      fieldHasText = laxQuote = false
    } else if (c === 34) {
      if (fieldStart) inQuote = true
      else if (stray !== undefined) {
        stray.count++
        // `, "b"` (quoted after a space) is a common laxity; a quote after text is no quoting.
        if (!fieldHasText) laxQuote = true
        else if (!laxQuote) rowHasStray = true
        fieldHasText = true
      }
      fieldStart = false
    } else {
      fieldStart = false
      if (c !== 32 && c !== 9) fieldHasText = true
    }
  }
  // The last row of a cut sample may be partial: count it only when the sample is the document.
  if (rowHasContent && complete && !inQuote) rows.push(count)
  return rows
}

/**
 * The delimiter of a sample. `complete` says whether the sample is the whole document.
 * Among candidates that occur outside quotes: the one that leaves the fewest quotes inside
 * unquoted fields (a quote that opens a field under the right delimiter is stray under a wrong
 * one), then the most rows with the most common count, then the larger count, then the order
 * of DELIMITERS. No candidate at all: `fallback`.
 */
export function sniffDelimiter (sample: string, complete: boolean, fallback: Delimiter = ','): Delimiter {
  const sep = sepDelimiter(sample)
  if (sep !== undefined) return sep
  let best: Delimiter = fallback
  let bestRows = 0
  let bestCount = 0
  let bestStray = 0
  for (let d = 0; d < DELIMITERS.length; d++) {
    const freq = new Map<number, number>()
    const stray = { count: 0 }
    for (const n of countRows(sample, complete, DELIMITERS[d]!.charCodeAt(0), stray)) {
      if (n > 0) freq.set(n, (freq.get(n) ?? 0) + 1)
    }
    let modeCount = 0
    let modeRows = 0
    for (const [count, nrows] of freq) {
      if (nrows > modeRows || (nrows === modeRows && count > modeCount)) { modeCount = count; modeRows = nrows }
    }
    if (modeRows === 0) continue
    const better = bestRows === 0 || stray.count < bestStray ||
      (stray.count === bestStray && (modeRows > bestRows || (modeRows === bestRows && modeCount > bestCount)))
    if (better) {
      best = DELIMITERS[d]!
      bestRows = modeRows
      bestCount = modeCount
      bestStray = stray.count
    }
  }
  return best
}

/**
 * Two fields, a blank line between nearly every two lines, and most lines prose outside quotes
 * (eight words or more): paragraphs with a comma each (a glossary, a transcript), not rows.
 */
function paragraphs (raw: string[], lines: string[]): boolean {
  let afterBlank = 0
  for (let i = 1; i < raw.length; i++) if (raw[i]!.trim() !== '' && raw[i - 1]!.trim() === '') afterBlank++
  if (lines.length <= 2 || afterBlank < (lines.length - 1) * 0.8) return false
  const prose = lines.filter((l) => l.slice(0, 1024).replace(/"[^"]*"/g, '').split(/\s+/, 8).length >= 8).length
  return prose * 2 >= lines.length
}

/**
 * A markdown table's delimiter row: cells of dashes (with alignment colons) and pipes, one cell
 * too (`| --- |`, `| ---`, `--- |`); the caller asks for a pipe.
 */
const MARKDOWN_TABLE_RULE = /^[ \t]*(?:\|[ \t]*)?:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*(?:\|[ \t]*)?\r?$/

/**
 * How much a sample looks like delimited rows (for `detect`): 0 to 0.85. Excel's `sep=` line
 * is a sign of its own, 0.6 at least: a file of one column under it has no delimiter to count.
 */
export function delimitedScore (sample: string): number {
  const rows = rowsScore(afterSep(sample))
  return sepDelimiter(sample) === undefined ? rows : Math.max(rows, 0.6)
}

function rowsScore (sample: string): number {
  // A short sample is likely the whole document: its last row counts even without a line end.
  const cut = sample.lastIndexOf('\n')
  const complete = sample.length < 8192
  const text = complete || cut === -1 ? sample : sample.slice(0, cut + 1)
  // JSON lines have commas too.
  const raw = text.split('\n', 50)
  const lines = raw.filter((l) => l.trim() !== '')
  if (lines.filter((l) => /^\s*[{[]/.test(l)).length * 2 >= lines.length) return 0
  let best = 0
  let fields = 0
  let strayRows = 0
  let rowCount = 0
  // A row of dashes between pipes under the first (`|---|:-:|`) is a markdown table, not data.
  const tableRule = lines.length >= 2 && lines[1]!.includes('|') && MARKDOWN_TABLE_RULE.test(lines[1]!)
  for (const d of DELIMITERS) {
    if (d === '|' && tableRule) continue
    const stray = { count: 0, rows: 0 }
    const all = countRows(text, true, d.charCodeAt(0), stray)
    const rows = all.slice(0, 50)
    if (rows.length < 2) return 0
    const first = rows[0]!
    if (first === 0) continue
    let same = 0
    for (const n of rows) if (n === first) same++
    if (same / rows.length > best) {
      best = same / rows.length
      fields = first + 1
      strayRows = stray.rows
      rowCount = all.length
    }
  }
  // Quotes inside unquoted fields in most rows are not CSV quoting: a log or an access log
  // quotes its request and user agent mid-line (`client: 10.0.0.1, request: "GET / HTTP/1.1"`).
  if (strayRows * 2 > rowCount) return 0
  if (fields <= 2 && paragraphs(raw, lines)) return 0
  // Three or more fields in nearly every row beats a log whose lines start with a timestamp;
  // two fields (one delimiter) is a weaker sign.
  if (best >= 0.9) return fields >= 3 ? 0.85 : 0.6
  return best >= 0.75 && fields >= 3 ? 0.55 : 0
}
