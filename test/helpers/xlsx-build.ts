/**
 * Builds XLSX workbooks and raw zips in memory for the xlsx parser tests: real workbooks
 * through `@e965/xlsx`'s writer, hostile ones by hand (zip bombs, lying headers, patched parts).
 * Nothing touches the disk.
 */
import zlib from 'node:zlib'
import * as XLSX from '@e965/xlsx'

export { XLSX }

/** A cell for `buildXlsx`: a plain value, or a SheetJS cell object (`{t:'n', v:3, f:'A1+B1'}`). */
export type CellSpec = string | number | boolean | Date | null | undefined | XLSX.CellObject

export interface SheetSpec {
  name: string
  rows: CellSpec[][]
  merges?: string[]
  hidden?: boolean
}

function isCellObject (v: CellSpec): v is XLSX.CellObject {
  return v !== null && typeof v === 'object' && !(v instanceof Date)
}

/** A workbook written by SheetJS, as bytes. */
export function buildXlsx (sheets: SheetSpec[]): Buffer {
  const wb = XLSX.utils.book_new()
  for (const spec of sheets) {
    const ws: XLSX.WorkSheet = {}
    let maxR = -1
    let maxC = -1
    spec.rows.forEach((row, r) => {
      row.forEach((v, c) => {
        if (v === null || v === undefined) return
        const ref = XLSX.utils.encode_cell({ r, c })
        let cell: XLSX.CellObject
        if (isCellObject(v)) cell = v
        else if (typeof v === 'number') cell = { t: 'n', v }
        else if (typeof v === 'boolean') cell = { t: 'b', v }
        else if (v instanceof Date) cell = { t: 'n', v: dateSerial(v), z: 'yyyy-mm-dd' }
        else cell = { t: 's', v }
        ws[ref] = cell
        maxR = Math.max(maxR, r)
        maxC = Math.max(maxC, c)
      })
    })
    if (maxR >= 0) ws['!ref'] = XLSX.utils.encode_range({ s: { r: 0, c: 0 }, e: { r: maxR, c: maxC } })
    if (spec.merges !== undefined) ws['!merges'] = spec.merges.map((m) => XLSX.utils.decode_range(m))
    XLSX.utils.book_append_sheet(wb, ws, spec.name)
  }
  if (sheets.some((s) => s.hidden === true)) {
    wb.Workbook = { Sheets: sheets.map((s) => ({ name: s.name, Hidden: s.hidden === true ? 1 : 0 })) }
  }
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx', compression: true }) as Buffer
}

/** Excel's serial number (1900 system) of a UTC date. */
export function dateSerial (d: Date): number {
  return (d.getTime() - Date.UTC(1899, 11, 30)) / 86_400_000
}

export interface ZipEntrySpec {
  name: string
  /** Uncompressed content (compressed here unless `compressed` is given or `method` is 0). */
  data?: Buffer
  /** Raw deflate data to store as is (for bombs built without holding the inflated bytes). */
  compressed?: Buffer
  method?: 0 | 8
  /** Declared uncompressed size in both headers (default: the real one). */
  usize?: number
  /** Declared uncompressed size in the local header only. */
  localUsize?: number
  flags?: number
  crc?: number
}

/** Assembles a zip by hand: local headers, data, central directory, end record. */
export function makeZip (entries: ZipEntrySpec[]): Buffer {
  const parts: Buffer[] = []
  const central: Buffer[] = []
  let offset = 0
  for (const e of entries) {
    const name = Buffer.from(e.name, 'utf8')
    const method = e.method ?? 8
    const raw = e.data ?? Buffer.alloc(0)
    const body = e.compressed ?? (method === 8 ? zlib.deflateRawSync(raw) : raw)
    const usize = e.usize ?? raw.length
    const crc = e.crc ?? zlib.crc32(raw)
    const local = Buffer.alloc(30)
    local.writeUInt32LE(0x04034b50, 0)
    local.writeUInt16LE(20, 4)
    local.writeUInt16LE(e.flags ?? 0, 6)
    local.writeUInt16LE(method, 8)
    local.writeUInt32LE(crc >>> 0, 14)
    local.writeUInt32LE(body.length, 18)
    local.writeUInt32LE(e.localUsize ?? usize, 22)
    local.writeUInt16LE(name.length, 26)
    const cd = Buffer.alloc(46)
    cd.writeUInt32LE(0x02014b50, 0)
    cd.writeUInt16LE(20, 4)
    cd.writeUInt16LE(20, 6)
    cd.writeUInt16LE(e.flags ?? 0, 8)
    cd.writeUInt16LE(method, 10)
    cd.writeUInt32LE(crc >>> 0, 16)
    cd.writeUInt32LE(body.length, 20)
    cd.writeUInt32LE(usize, 24)
    cd.writeUInt16LE(name.length, 28)
    cd.writeUInt32LE(offset, 42)
    parts.push(local, name, body)
    central.push(cd, name)
    offset += 30 + name.length + body.length
  }
  const cdBuf = Buffer.concat(central)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(entries.length, 8)
  end.writeUInt16LE(entries.length, 10)
  end.writeUInt32LE(cdBuf.length, 12)
  end.writeUInt32LE(offset, 16)
  return Buffer.concat([...parts, cdBuf, end])
}

/** The entries of a (well-formed) zip, inflated. */
export function readZip (buf: Buffer): Array<{ name: string, data: Buffer }> {
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]))
  const count = buf.readUInt16LE(eocd + 10)
  let p = buf.readUInt32LE(eocd + 16)
  const out: Array<{ name: string, data: Buffer }> = []
  for (let k = 0; k < count; k++) {
    const method = buf.readUInt16LE(p + 10)
    const csize = buf.readUInt32LE(p + 20)
    const fnl = buf.readUInt16LE(p + 28)
    const exl = buf.readUInt16LE(p + 30)
    const cml = buf.readUInt16LE(p + 32)
    const lho = buf.readUInt32LE(p + 42)
    const name = buf.toString('utf8', p + 46, p + 46 + fnl)
    const start = lho + 30 + buf.readUInt16LE(lho + 26) + buf.readUInt16LE(lho + 28)
    const body = buf.subarray(start, start + csize)
    out.push({ name, data: method === 8 ? zlib.inflateRawSync(body) : Buffer.from(body) })
    p += 46 + fnl + exl + cml
  }
  return out
}

/** The zip with some entries' content replaced (and others added), re-assembled by hand. */
export function patchZip (buf: Buffer, replace: Record<string, string | Buffer>): Buffer {
  const entries = readZip(buf)
  const names = new Set(entries.map((e) => e.name))
  const patched: ZipEntrySpec[] = entries.map((e) => {
    const r = replace[e.name]
    return { name: e.name, data: r === undefined ? e.data : Buffer.from(r) }
  })
  for (const [name, data] of Object.entries(replace)) if (!names.has(name)) patched.push({ name, data: Buffer.from(data) })
  return makeZip(patched)
}

/** Raw deflate of `size` zero bytes (about 1 KB per MB): the payload of a zip bomb. */
export function deflatedZeros (size: number): Buffer {
  return zlib.deflateRawSync(Buffer.alloc(size), { level: 9 })
}
