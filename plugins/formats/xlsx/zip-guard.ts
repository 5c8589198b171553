/**
 * The zip pre-check that runs before SheetJS ever sees an upload (DEPENDENCIES.md §4).
 *
 * SheetJS builds every entry of the zip and every cell of every sheet in memory, so a small
 * hostile upload can cost gigabytes. This guard reads the zip the way SheetJS's own reader
 * does (end-of-central-directory found from the end, entry count at +8, the *local* header's
 * name, method, sizes and zip64 fields), then:
 *
 * 1. rejects anything that is not a zip (with a dedicated message for OLE files: password-
 *    protected workbooks and legacy .xls), and zips that are not XLSX (OpenDocument, Numbers,
 *    XLSB);
 * 2. caps the entry count and, before inflating anything, every declared size (per entry and in
 *    total) and the compression ratio of large entries;
 * 3. inflates every entry with `zlib.inflateRawSync` bounded by its declared size, from the
 *    same offset SheetJS will read, so a lying header is caught after at most `declared + 1`
 *    bytes of output; declared sizes are never trusted;
 * 4. while each entry is inflated, scans its XML for the structures SheetJS would build:
 *    `<sheet>` elements (the sheets a workbook declares), `<row>` and `<c>` elements, the
 *    highest row number that holds a value, and `<mergeCell>` elements. Over a cap, the upload
 *    is refused before SheetJS runs.
 *
 * Uses only node:zlib; nothing is written to disk; peak memory is one inflated entry.
 */
import zlib from 'node:zlib'
import { OLE_MAGIC } from './signatures.js'

export interface ZipLimits {
  /** Total inflated bytes of all entries (also the cap of one entry). */
  maxInflatedBytes: number
  /** Entries in the central directory. */
  maxEntries: number
  /** Inflated/compressed ratio allowed for entries declared larger than `ratioFloorBytes`. */
  maxRatio: number
  ratioFloorBytes: number
  /** `<sheet>` elements declared by the workbook. */
  maxSheets: number
  /** Highest row number holding a value, and `<row>` elements, per worksheet part. */
  maxRows: number
  /** `<c>` elements in the whole workbook. */
  maxCells: number
  /** `<mergeCell>` elements in the whole workbook. */
  maxMerges: number
}

export interface ZipReport {
  entries: number
  /** Real inflated bytes of all entries. */
  inflatedBytes: number
  sheets: number
  cells: number
  merges: number
  /** Highest row number (1-based) holding a value, over all parts. */
  maxDataRow: number
}

/** How the guard reports a problem: `ctx.fail` in the plugin. */
export type Fail = (code: 'DOCSPLIT_PARSE_ERROR' | 'DOCSPLIT_LIMIT_EXCEEDED', message: string) => never

const SIG_LOCAL = 0x04034b50
const SIG_CENTRAL = 0x02014b50
const EOCD_BYTES = Buffer.from([0x50, 0x4b, 0x05, 0x06])

const MiB = 2 ** 20

function fmtBytes (n: number): string {
  return n >= MiB ? `${Math.round(n / MiB * 10) / 10} MiB` : `${n} bytes`
}

interface Entry {
  name: string
  method: number
  /** Where the entry's data starts, as SheetJS computes it from the local header. */
  dataStart: number
  /** Declared uncompressed size (central directory, zip64-aware). */
  usize: number
  csize: number
  /** Every uncompressed size some header declares (local, central, zip64 fields), non-zero ones. */
  usizes: number[]
  csizes: number[]
}

/** The zip64 extended-information extra field (0x0001), read as SheetJS reads it. */
function zip64Sizes (buf: Buffer, start: number, length: number): { usize?: number, csize?: number } {
  let p = start
  const end = start + length
  let out: { usize?: number, csize?: number } = {}
  while (p + 4 <= end) {
    const type = buf.readUInt16LE(p)
    const size = buf.readUInt16LE(p + 2)
    if (type === 0x0001) {
      const read64 = (q: number): number | undefined => q + 8 <= end ? buf.readUInt32LE(q + 4) * 2 ** 32 + buf.readUInt32LE(q) : undefined
      out = { usize: read64(p + 4), csize: read64(p + 12) }
    }
    p += 4 + size
  }
  return out
}

function isOle (buf: Buffer): boolean {
  return buf.length >= 8 && OLE_MAGIC.every((b, i) => buf[i] === b)
}

/**
 * Throws (through `fail`) unless `bytes` is a zip that SheetJS may safely read as XLSX. Takes a
 * Uint8Array so that the package's declarations need no Node types.
 */
export function checkXlsxZip (bytes: Uint8Array, limits: ZipLimits, fail: Fail): ZipReport {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (isOle(buf)) {
    // Encrypted OOXML is an OLE compound file holding EncryptionInfo + EncryptedPackage streams.
    if (buf.indexOf(Buffer.from('EncryptedPackage', 'utf16le')) >= 0 || buf.indexOf(Buffer.from('EncryptionInfo', 'utf16le')) >= 0) {
      fail('DOCSPLIT_PARSE_ERROR', 'password-protected workbooks are not supported')
    }
    fail('DOCSPLIT_PARSE_ERROR',
      'not an XLSX file: an OLE compound file (a legacy .xls workbook, or a password-protected workbook); password-protected workbooks are not supported, and .xls must be saved as .xlsx')
  }
  const damaged = (what: string): never => fail('DOCSPLIT_PARSE_ERROR', `not a readable XLSX file: damaged zip (${what})`)
  if (buf.length < 4 || buf.readUInt32LE(0) !== SIG_LOCAL) fail('DOCSPLIT_PARSE_ERROR', 'not an XLSX file (no zip signature)')
  // The signature, then too little for a zip's first header: a zip cut short, not another format.
  if (buf.length < 30) damaged(`${buf.length} bytes, shorter than a zip's first header`)
  const entries = readDirectory(buf, limits, fail, damaged)

  // Not XLSX, although a zip that SheetJS would read as something else.
  const names = new Set(entries.map((e) => e.name.toLowerCase().replace(/\\/g, '/')))
  if (names.has('meta-inf/manifest.xml') || names.has('objectdata.xml')) {
    fail('DOCSPLIT_PARSE_ERROR', 'not an XLSX file: an OpenDocument spreadsheet (.ods); save it as .xlsx')
  }
  if (names.has('index/document.iwa') || names.has('index.xml') || names.has('index.xml.gz') || names.has('index.zip')) {
    fail('DOCSPLIT_PARSE_ERROR', 'not an XLSX file: an Apple Numbers document; export it as .xlsx')
  }
  if (!names.has('[content_types].xml')) fail('DOCSPLIT_PARSE_ERROR', 'not an XLSX file: a zip without [Content_Types].xml')
  if ([...names].some((n) => n.endsWith('workbook.bin')) && ![...names].some((n) => n.endsWith('workbook.xml'))) {
    fail('DOCSPLIT_PARSE_ERROR', 'not an XLSX file: a binary workbook (.xlsb); save it as .xlsx')
  }

  // Inflate every entry, bounded by its declared size, and scan it.
  const report: ZipReport = { entries: entries.length, inflatedBytes: 0, sheets: 0, cells: 0, merges: 0, maxDataRow: 0 }
  for (const e of entries) {
    let data: Buffer
    if (e.method === 0) {
      if (e.dataStart + e.csize > buf.length) damaged('an entry runs past the end of the file')
      data = buf.subarray(e.dataStart, e.dataStart + e.csize)
    } else {
      try {
        data = zlib.inflateRawSync(buf.subarray(e.dataStart), { maxOutputLength: e.usize + 1 })
      } catch (err) {
        if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
          fail('DOCSPLIT_LIMIT_EXCEEDED', 'a zip entry inflates to more than its declared size (a zip bomb with lying headers?)')
        }
        return damaged('an entry does not inflate')
      }
    }
    if (data.length > e.usize) fail('DOCSPLIT_LIMIT_EXCEEDED', 'a zip entry inflates to more than its declared size (a zip bomb with lying headers?)')
    if (e.usizes.some((u) => u !== data.length)) damaged('an entry\'s declared size does not match its content')
    report.inflatedBytes += data.length
    if (report.inflatedBytes > limits.maxInflatedBytes) {
      fail('DOCSPLIT_LIMIT_EXCEEDED', `the workbook inflates to more than ${fmtBytes(limits.maxInflatedBytes)} (DOCSPLIT_MAX_INFLATED_BYTES)`)
    }
    scanXml(data, report, limits, fail)
  }
  return report
}

/** Reads the central directory and local headers; checks every declared size before inflating. */
function readDirectory (buf: Buffer, limits: ZipLimits, fail: Fail, damaged: (what: string) => never): Entry[] {
  // SheetJS takes the last end-of-central-directory signature in the file: so do we.
  const eocd = buf.lastIndexOf(EOCD_BYTES)
  if (eocd < 0) damaged('no end of central directory')
  if (eocd + 22 > buf.length) damaged('truncated end of central directory')
  const count = buf.readUInt16LE(eocd + 8)
  const total = buf.readUInt16LE(eocd + 10)
  const cdOffset = buf.readUInt32LE(eocd + 16)
  if (count !== total) damaged('multi-disk archive')
  if (count === 0xffff || cdOffset === 0xffffffff) fail('DOCSPLIT_LIMIT_EXCEEDED', 'zip64 archives are not accepted')
  if (count > limits.maxEntries) fail('DOCSPLIT_LIMIT_EXCEEDED', `the zip holds ${count} entries; at most ${limits.maxEntries} are accepted`)
  if (count === 0) damaged('no entries')

  const entries: Entry[] = []
  let declaredTotal = 0
  let p = cdOffset
  for (let k = 0; k < count; k++) {
    if (p + 46 > buf.length || buf.readUInt32LE(p) !== SIG_CENTRAL) damaged('bad central directory')
    const cdFlags = buf.readUInt16LE(p + 8)
    const cdMethod = buf.readUInt16LE(p + 10)
    const cdCsize = buf.readUInt32LE(p + 20)
    const cdUsize = buf.readUInt32LE(p + 24)
    const fnl = buf.readUInt16LE(p + 28)
    const exl = buf.readUInt16LE(p + 30)
    const cml = buf.readUInt16LE(p + 32)
    const lho = buf.readUInt32LE(p + 42)
    if (p + 46 + fnl + exl + cml > buf.length) damaged('bad central directory')
    const cd64 = zip64Sizes(buf, p + 46 + fnl, exl)

    if (lho + 30 > buf.length || buf.readUInt32LE(lho) !== SIG_LOCAL) damaged('bad local header')
    const flags = buf.readUInt16LE(lho + 6)
    const method = buf.readUInt16LE(lho + 8)
    const lhCsize = buf.readUInt32LE(lho + 18)
    const lhUsize = buf.readUInt32LE(lho + 22)
    const lfnl = buf.readUInt16LE(lho + 26)
    const lexl = buf.readUInt16LE(lho + 28)
    const dataStart = lho + 30 + lfnl + lexl
    if (dataStart > buf.length) damaged('bad local header')
    const name = buf.toString('latin1', lho + 30, lho + 30 + lfnl)
    const lh64 = zip64Sizes(buf, lho + 30 + lfnl, lexl)

    if ((flags | cdFlags) & 0x2041) fail('DOCSPLIT_PARSE_ERROR', 'encrypted zip entries are not supported (password-protected workbooks are not supported)')
    if (method !== cdMethod) damaged('local and central headers disagree')
    if (method !== 0 && method !== 8) damaged(`compression method ${method}`)

    const usize = cdUsize === 0xffffffff && cd64.usize !== undefined ? cd64.usize : cdUsize
    const csize = cdCsize === 0xffffffff && cd64.csize !== undefined ? cd64.csize : cdCsize
    // Every size a header declares; SheetJS may allocate from any of them. 0 and 0xffffffff
    // are placeholders (data descriptor, zip64).
    const sizes = (list: Array<number | undefined>): number[] => list.filter((n): n is number => n !== undefined && n !== 0 && n !== 0xffffffff)
    const usizes = sizes([cdUsize, lhUsize, cd64.usize, lh64.usize])
    const csizes = sizes([cdCsize, lhCsize, cd64.csize, lh64.csize])
    for (const u of usizes) {
      if (u > limits.maxInflatedBytes) {
        fail('DOCSPLIT_LIMIT_EXCEEDED', `a zip entry declares ${fmtBytes(u)}, more than ${fmtBytes(limits.maxInflatedBytes)} (DOCSPLIT_MAX_INFLATED_BYTES)`)
      }
    }
    if (usizes.some((u) => u !== usize) || csizes.some((c) => c !== csize)) damaged('local and central headers disagree on sizes')
    if (method === 0 && usize !== csize) damaged('a stored entry with two sizes')
    if (usize > limits.ratioFloorBytes && csize > 0 && usize / csize > limits.maxRatio) {
      fail('DOCSPLIT_LIMIT_EXCEEDED', `a zip entry is compressed more than ${limits.maxRatio}:1 (a zip bomb?)`)
    }
    if (usize > limits.ratioFloorBytes && csize === 0) fail('DOCSPLIT_LIMIT_EXCEEDED', 'a zip entry declares content but no compressed data (a zip bomb?)')
    declaredTotal += usize
    if (declaredTotal > limits.maxInflatedBytes) {
      fail('DOCSPLIT_LIMIT_EXCEEDED', `the workbook declares more than ${fmtBytes(limits.maxInflatedBytes)} of inflated content (DOCSPLIT_MAX_INFLATED_BYTES)`)
    }
    entries.push({ name, method, dataStart, usize, csize, usizes, csizes })
    p += 46 + fnl + exl + cml
  }
  return entries
}

// ---- XML scan --------------------------------------------------------------------------------

const LT = 0x3c
const GT = 0x3e
/** Bytes of a `numFmt` tag past its name: 255 characters as Excel's limit, each escaped as `&quot;` at worst. */
const MAX_NUMBER_FORMAT_TAG = 2048

function isNameByte (b: number): boolean {
  return (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a) || (b >= 0x30 && b <= 0x39) || b === 0x3a || b === 0x5f || b === 0x2d || b === 0x2e
}

/** Local name of the tag starting at `start` (after `<`), compared against `word` (ASCII). */
function localNameIs (buf: Buffer, start: number, end: number, word: string): boolean {
  let s = start
  for (let i = start; i < end; i++) if (buf[i] === 0x3a) s = i + 1
  if (end - s !== word.length) return false
  for (let i = 0; i < word.length; i++) if (buf[s + i] !== word.charCodeAt(i)) return false
  return true
}

/**
 * The value of attribute `r` (any namespace prefix) inside a tag's bytes, or undefined. For a
 * row it is the row number; for a cell an A1 reference whose digits are the row number.
 */
function rowOfR (buf: Buffer, from: number, to: number): number | undefined {
  for (let i = from; i + 3 < to; i++) {
    if (buf[i] !== 0x72 /* r */ || buf[i + 1] !== 0x3d /* = */) continue
    const before = buf[i - 1]
    if (before !== 0x20 && before !== 0x09 && before !== 0x0a && before !== 0x0d && before !== 0x3a) continue
    const quote = buf[i + 2]
    if (quote !== 0x22 && quote !== 0x27) continue
    let j = i + 3
    while (j < to && buf[j] !== quote && !(buf[j]! >= 0x30 && buf[j]! <= 0x39)) j++
    let n = 0
    let digits = 0
    while (j < to && buf[j]! >= 0x30 && buf[j]! <= 0x39) {
      n = n * 10 + (buf[j]! - 0x30)
      digits++
      j++
      if (digits > 12) break
    }
    return digits > 0 ? n : undefined
  }
  return undefined
}

/**
 * Counts what SheetJS would build from one part. Any part may be a worksheet (the workbook's
 * relationships decide), so every entry is scanned; elements named `row`, `c`, `v`, `is`, `f`,
 * `sheet` and `mergeCell` in non-worksheet parts only make the counts larger.
 */
function scanXml (buf: Buffer, report: ZipReport, limits: ZipLimits, fail: Fail): void {
  let rowTags = 0
  let row = 0
  let cellRow = 0
  let i = 0
  const n = buf.length
  for (;;) {
    i = buf.indexOf(LT, i)
    if (i < 0 || i + 1 >= n) break
    i++
    const first = buf[i]!
    if (!isNameByte(first)) continue
    let e = i
    while (e < n && isNameByte(buf[e]!)) e++
    const len = e - i
    // Quick filters on the tag name's length before comparing.
    if (len > 16) { i = e; continue }
    if (localNameIs(buf, i, e, 'c')) {
      report.cells++
      if (report.cells > limits.maxCells) fail('DOCSPLIT_LIMIT_EXCEEDED', `the workbook has more than ${limits.maxCells} cells`)
      const end = buf.indexOf(GT, e)
      const r = rowOfR(buf, e, end < 0 ? n : end)
      cellRow = r ?? row
    } else if (localNameIs(buf, i, e, 'v') || localNameIs(buf, i, e, 'is') || localNameIs(buf, i, e, 'f')) {
      if (cellRow > report.maxDataRow) {
        report.maxDataRow = cellRow
        if (cellRow > limits.maxRows) fail('DOCSPLIT_LIMIT_EXCEEDED', `a sheet has values beyond row ${limits.maxRows}`)
      }
    } else if (localNameIs(buf, i, e, 'row')) {
      rowTags++
      if (rowTags > limits.maxRows) fail('DOCSPLIT_LIMIT_EXCEEDED', `a sheet has more than ${limits.maxRows} rows`)
      const end = buf.indexOf(GT, e)
      const r = rowOfR(buf, e, end < 0 ? n : end)
      row = r ?? row + 1
      cellRow = row
    } else if (localNameIs(buf, i, e, 'sheet')) {
      report.sheets++
      if (report.sheets > limits.maxSheets) fail('DOCSPLIT_LIMIT_EXCEEDED', `the workbook declares more than ${limits.maxSheets} sheets`)
    } else if (localNameIs(buf, i, e, 'mergeCell')) {
      report.merges++
      if (report.merges > limits.maxMerges) fail('DOCSPLIT_LIMIT_EXCEEDED', `the workbook has more than ${limits.maxMerges} merged ranges`)
    } else if (localNameIs(buf, i, e, 'numFmt')) {
      // SheetJS formats every cell with its format: one of 30,000 characters on 30,000 cells took
      // 50 s. Excel writes at most 255 characters (escaped, a tag of some 1,600 bytes at most).
      const end = buf.indexOf(GT, e)
      if ((end < 0 ? n : end) - e > MAX_NUMBER_FORMAT_TAG) fail('DOCSPLIT_LIMIT_EXCEEDED', 'a number format is longer than Excel allows (255 characters)')
    }
    i = e
  }
}
