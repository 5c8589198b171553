/**
 * Streaming decode of input bytes: one TextDecoder in stream mode, fatal on invalid input, so
 * a character split across two pieces is joined and bad bytes are an error, never U+FFFD;
 * or, asked to (`invalid_bytes: replace`), invalid UTF-8 read as U+FFFD with its bytes kept
 * in a map, so byte offsets still count the bytes as received.
 * A BOM selects UTF-8 or UTF-16 and is stripped; byte offsets still count it.
 */
import { isAscii, isUtf8 } from 'node:buffer'
import { TextDecoder } from 'node:util'
import { DocsplitError } from './errors.js'
import { ReplacementMap } from './replacements.js'

/** WHATWG encodings where every character is one byte, so byte offsets are string offsets. */
const SINGLE_BYTE = new Set([
  'ibm866', 'iso-8859-2', 'iso-8859-3', 'iso-8859-4', 'iso-8859-5', 'iso-8859-6', 'iso-8859-7', 'iso-8859-8',
  'iso-8859-8-i', 'iso-8859-10', 'iso-8859-13', 'iso-8859-14', 'iso-8859-15', 'iso-8859-16', 'koi8-r', 'koi8-u',
  'macintosh', 'windows-874', 'windows-1250', 'windows-1251', 'windows-1252', 'windows-1253', 'windows-1254',
  'windows-1255', 'windows-1256', 'windows-1257', 'windows-1258', 'x-mac-cyrillic',
])

export interface EncodingInfo {
  /** WHATWG name: `utf-8`, `utf-16le`, `windows-1252`, ... */
  name: string
  /** Bytes of `text` in this encoding, for byte offsets. */
  byteLength: (text: string) => number
}

const utf8Length = (text: string): number => Buffer.byteLength(text, 'utf8')

export const UTF8: EncodingInfo = { name: 'utf-8', byteLength: utf8Length }

/** Checks an encoding label and says how to count its bytes. */
export function encodingInfo (label: string): EncodingInfo {
  let name: string
  try {
    name = new TextDecoder(label).encoding
  } catch {
    const known = SINGLE_BYTE.has(label.trim().toLowerCase()) || label.trim().toLowerCase() === 'x-user-defined'
    throw new DocsplitError('DOCSPLIT_UNSUPPORTED_ENCODING', known
      ? `encoding "${label.trim().toLowerCase()}" is a WHATWG encoding this Node.js runtime cannot decode (its ICU has no converter for it); use utf-8, utf-16le, utf-16be, latin1, windows-1252, ...`
      : `encoding "${label.slice(0, 64)}" is not a known WHATWG encoding label; use utf-8, utf-16le, utf-16be, latin1, windows-1252, ...`)
  }
  if (name === 'utf-8') return UTF8
  if (name === 'utf-16le' || name === 'utf-16be') return { name, byteLength: (t) => t.length * 2 }
  if (SINGLE_BYTE.has(name)) return { name, byteLength: (t) => t.length }
  throw new DocsplitError('DOCSPLIT_UNSUPPORTED_ENCODING', `encoding "${name}" is a multi-byte legacy encoding; docsplit accepts UTF-8, UTF-16 and single-byte encodings (latin1, windows-1252, iso-8859-*, ...)`)
}

/** Offset of the first byte that does not start or continue a valid UTF-8 sequence, or -1. */
export function firstInvalidUtf8 (bytes: Uint8Array, final: boolean): number {
  let i = 0
  while (i < bytes.length) {
    const b = bytes[i]!
    if (b < 0x80) { i++; continue }
    let need: number
    let min: number
    if (b >= 0xc2 && b <= 0xdf) { need = 1; min = 0x80 } else if (b >= 0xe0 && b <= 0xef) { need = 2; min = 0x800 } else if (b >= 0xf0 && b <= 0xf4) { need = 3; min = 0x10000 } else return i
    let cp = b & (0x3f >> need)
    for (let k = 1; k <= need; k++) {
      // A sequence cut by the end of the input is invalid only when no more input follows.
      if (i + k >= bytes.length) return final ? i : -1
      const c = bytes[i + k]!
      if ((c & 0xc0) !== 0x80) return i
      cp = (cp << 6) | (c & 0x3f)
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i
    i += need + 1
  }
  return -1
}

/**
 * The bytes from `bytes[i]` (0x80 or more) that one UTF-8 reading takes: a whole sequence, or,
 * where it is invalid, what one U+FFFD stands for as the WHATWG decoder (and so Node's) reads
 * it: the lead byte and the continuation bytes valid after it (its "maximal subpart"), or the
 * one byte that starts no sequence.
 */
function sequenceLength (bytes: Uint8Array, i: number): number {
  const b = bytes[i]!
  let need: number
  let low = 0x80
  let high = 0xbf
  if (b >= 0xc2 && b <= 0xdf) need = 1
  else if (b >= 0xe0 && b <= 0xef) { need = 2; if (b === 0xe0) low = 0xa0; else if (b === 0xed) high = 0x9f } else if (b >= 0xf0 && b <= 0xf4) { need = 3; if (b === 0xf0) low = 0x90; else if (b === 0xf4) high = 0x8f } else return 1
  let n = 1
  while (n <= need && i + n < bytes.length) {
    const c = bytes[i + n]!
    if (c < low || c > high) break
    low = 0x80
    high = 0xbf
    n++
  }
  return n
}

/**
 * Offset of the first code unit of `bytes` (starting on a unit) that is not UTF-16: a lone
 * surrogate, or, when no more input follows, a high surrogate or an odd byte at the end; -1 when
 * there is none. Used only once the decoder has refused the bytes, to say where.
 */
export function firstInvalidUtf16 (bytes: Uint8Array, bigEndian: boolean, final: boolean): number {
  const hi = bigEndian ? 0 : 1
  let i = 0
  for (; i + 1 < bytes.length; i += 2) {
    const top = bytes[i + hi]!
    if (top < 0xd8 || top > 0xdf) continue
    if (top >= 0xdc) return i
    if (i + 3 >= bytes.length) return final ? i : -1
    const next = bytes[i + 2 + hi]!
    if (next < 0xdc || next > 0xdf) return i
    i += 2
  }
  return final && i < bytes.length ? i : -1
}

/** U+FFFD in UTF-8. */
const REPLACEMENT = Uint8Array.of(0xef, 0xbf, 0xbd)
/** Input bytes read into one block of replacedBlock: each may become three. */
const REPLACE_BLOCK = 1 << 16
const replacedBlock = Buffer.allocUnsafeSlow(REPLACE_BLOCK * 3 + 4)

/** The encoding a byte order mark at the start of `bytes` selects, and its length; undefined without one. */
export function byteOrderMark (bytes: Uint8Array): { label: 'utf-8' | 'utf-16le' | 'utf-16be', length: number } | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return { label: 'utf-8', length: 3 }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return { label: 'utf-16le', length: 2 }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return { label: 'utf-16be', length: 2 }
  return undefined
}

/** Bytes read to tell UTF-16 without a byte order mark (see utf16WithoutBom). */
export const UTF16_HEAD = 64

/**
 * UTF-16 without a byte order mark (SQL Server's `bcp -w`, some Windows exports), told from the
 * first bytes: at least 8, no pair of two zero bytes, and a zero byte in at least a fifth of the
 * pairs, nearly always on the same side (ASCII letters, digits, spaces and punctuation among the
 * text; an eighth as many on the other side allows characters such as U+4E00, `00 4E` in
 * UTF-16LE). Each such pair must then be a character of text (not a control but tab and line
 * ends), three of them in a row somewhere (a word, `, `): binary files with small 16-bit numbers
 * (compiled terminfo) and NUL-separated lists (`find -print0`) are not text so read. Binary
 * files have zeros on both sides or pairs of them, and UTF-8 text has none. Read as UTF-8, such
 * a file gave chunks of letters and NULs. Text with no ASCII at all in its first bytes (Chinese
 * alone) is not told; the encoding option names it.
 */
export function utf16WithoutBom (head: Uint8Array): 'utf-16le' | 'utf-16be' | undefined {
  if (head.length < 8 || byteOrderMark(head) !== undefined) return undefined
  const pairs = head.length >> 1
  let le = 0
  let be = 0
  for (let i = 0; i < pairs * 2; i += 2) {
    const a = head[i]!
    const b = head[i + 1]!
    if (a !== 0 && b === 0) le++
    else if (a === 0 && b !== 0) be++
    else if (a === 0 && b === 0) return undefined
  }
  // Measured: the corpus's texts written as UTF-16 are told (Latin-script and mixed with other
  // scripts), and of 365,000 files under /usr, the corpus and the QA folders, 11 are taken,
  // all UTF-16 (chardet's and JSONTestSuite's samples without a BOM among them).
  const least = Math.max(2, Math.ceil(pairs / 5))
  if (le >= least && be * 8 <= le) return textUnits(head, pairs, 1) ? 'utf-16le' : undefined
  if (be >= least && le * 8 <= be) return textUnits(head, pairs, 0) ? 'utf-16be' : undefined
  return undefined
}

/**
 * Whether the pairs of `head` whose high byte (at `high` in the pair: 1 in UTF-16LE) is zero are
 * all characters of text (tab, line ends, printable ASCII, Latin-1 letters and signs), three of
 * them in a row at least.
 */
function textUnits (head: Uint8Array, pairs: number, high: number): boolean {
  let run = 0
  let longest = 0
  for (let i = 0; i < pairs * 2; i += 2) {
    if (head[i + high] !== 0) {
      run = 0
      continue
    }
    const c = head[i + 1 - high]!
    if (c < 0x20 ? c !== 0x09 && c !== 0x0a && c !== 0x0d : c >= 0x7f && c < 0xa0) return false
    longest = Math.max(longest, ++run)
  }
  return longest >= 3
}

/**
 * Decodes pieces of bytes in order. `bomBytes` is known after the first piece of at least
 * 3 bytes (or at the end).
 */
export class StreamDecoder {
  encoding: EncodingInfo
  bomBytes = 0
  /** Only for UTF-16 and single-byte encodings; UTF-8 is validated and sliced natively. */
  private decoder: TextDecoder | undefined
  private head: Uint8Array | undefined = new Uint8Array(0)
  /** Bytes received (other encodings' error messages). */
  private received = 0
  /**
   * UTF-16: the last bytes received (up to 3), where a unit the decoder still holds starts (an
   * odd byte, a high surrogate waiting for its pair): an error's offset is counted from them.
   */
  private lastBytes = new Uint8Array(0)
  /** UTF-8: bytes turned into text so far (error offsets), and an incomplete sequence held back. */
  private decodedBytes = 0
  private tail = new Uint8Array(0)
  /**
   * UTF-8 that is not valid: set by the decode that met it, which returned the text before the
   * bad bytes (so that what came before them is split and written); every later call throws it.
   */
  failure: DocsplitError | undefined
  /** Invalid UTF-8 sequences read as U+FFFD (with `replace`), and the byte offset of the first. */
  replaced = 0
  firstReplacedByte = -1
  /** UTF-16 units of text given out so far (with `replace`: where the next U+FFFD is). */
  private decodedChars = 0
  /** The U+FFFD that stand for fewer bytes than the three of their own UTF-8. */
  private readonly replacements = new ReplacementMap()

  /** `replace`: invalid UTF-8 becomes U+FFFD instead of an error (UTF-16 must still be valid). */
  constructor (label: string, private readonly replace = false) {
    this.encoding = encodingInfo(label)
  }

  /**
   * Bytes of `text`, found at string offset `at` of the decoded text, in the input as received:
   * a U+FFFD that replaced invalid bytes counts those bytes.
   */
  readonly byteLength = (text: string, at: number): number =>
    this.encoding.byteLength(text) + this.replacements.sum(at, at + text.length)

  /** byteLength is not asked again about text before string offset `before`. */
  forget (before: number): void {
    this.replacements.forget(before)
  }

  private start (bytes: Uint8Array): Uint8Array {
    const bom = byteOrderMark(bytes)
    if (bom !== undefined) {
      this.encoding = bom.label === 'utf-8' ? UTF8 : encodingInfo(bom.label)
      this.bomBytes = bom.length
    }
    if (this.encoding !== UTF8) this.decoder = new TextDecoder(this.encoding.name, { fatal: true, ignoreBOM: true })
    this.received = this.bomBytes
    this.decodedBytes = this.bomBytes
    return bytes.subarray(this.bomBytes)
  }

  decode (piece: Uint8Array): string {
    if (this.failure !== undefined) throw this.failure
    if (this.head !== undefined) {
      // Wait for 3 bytes so a BOM split across pieces is still seen. Joined only then: the
      // first piece may be a whole document (8 MB of markdown copied for nothing).
      let joined = piece
      if (this.head.length > 0 || piece.length < 3) {
        joined = new Uint8Array(this.head.length + piece.length)
        joined.set(this.head)
        joined.set(piece, this.head.length)
      }
      if (joined.length < 3) {
        this.head = joined
        return ''
      }
      this.head = undefined
      piece = this.start(joined)
    }
    return this.run(piece, false)
  }

  end (): string {
    if (this.failure !== undefined) throw this.failure
    if (this.head !== undefined) {
      const rest = this.head
      this.head = undefined
      return this.run(this.start(rest), true)
    }
    return this.run(new Uint8Array(0), true)
  }

  private run (bytes: Uint8Array, final: boolean): string {
    if (this.encoding === UTF8) return this.runUtf8(bytes, final)
    let text: string
    try {
      // Bytes always go in streaming, the end in a call of its own: Node 20 decodes a whole
      // windows-1252 input given in one non-streaming call as Latin-1 (0x80 → U+0080, not €).
      text = this.decoder!.decode(bytes, { stream: true })
      if (final) text += this.decoder!.decode()
    } catch {
      throw this.invalid(bytes, final)
    }
    this.received += bytes.length
    if (this.encoding.name !== 'utf-16le' && this.encoding.name !== 'utf-16be') return text
    // A copy of 3 bytes a piece, never a view: the caller may refill its buffer.
    if (bytes.length >= 3) this.lastBytes = bytes.slice(-3)
    else this.lastBytes = Uint8Array.of(...this.lastBytes, ...bytes).slice(-3)
    return text
  }

  /**
   * UTF-8 without TextDecoder: validate with `isUtf8` (SIMD) and decode with Buffer's native
   * slice, holding back an incomplete sequence at the end of a piece. Measured about 3x faster
   * than a streaming TextDecoder on logs.
   */
  private runUtf8 (piece: Uint8Array, final: boolean): string {
    let bytes = piece
    if (this.tail.length > 0) {
      bytes = new Uint8Array(this.tail.length + piece.length)
      bytes.set(this.tail)
      bytes.set(piece, this.tail.length)
    }
    let cut = bytes.length
    if (!final) {
      // Back up over an incomplete sequence at the end (at most 3 bytes).
      let i = bytes.length - 1
      while (i >= 0 && i >= bytes.length - 3 && (bytes[i]! & 0xc0) === 0x80) i--
      if (i >= 0 && bytes[i]! >= 0xc0) {
        const need = bytes[i]! >= 0xf0 ? 4 : bytes[i]! >= 0xe0 ? 3 : 2
        if (bytes.length - i < need) cut = i
      }
    }
    const whole = bytes.subarray(0, cut)
    // ASCII (most logs, CSV and code): a byte copy makes the same string as a UTF-8 decode, in
    // three quarters of the time.
    const ascii = isAscii(whole)
    if (!ascii && !isUtf8(whole)) {
      if (this.replace) {
        this.tail = Uint8Array.prototype.slice.call(bytes, cut)
        const text = this.withReplacements(whole)
        this.decodedBytes += cut
        return text
      }
      const at = Math.max(0, firstInvalidUtf8(bytes, final))
      this.failure = this.invalidUtf8(this.decodedBytes + at)
      this.decodedBytes += at
      return Buffer.from(bytes.buffer, bytes.byteOffset, at).toString('utf8')
    }
    // A copy, never a view: `bytes` may be the caller's buffer, which it may refill (and a
    // Buffer's slice is a view).
    this.tail = Uint8Array.prototype.slice.call(bytes, cut)
    this.decodedBytes += cut
    const text = Buffer.from(whole.buffer, whole.byteOffset, whole.length).toString(ascii ? 'latin1' : 'utf8')
    this.decodedChars += text.length
    return text
  }

  /**
   * `whole` (no sequence cut by its end but an invalid one) decoded with each invalid sequence
   * read as U+FFFD, as Node's own decoder reads it; the bytes of each noted. The bytes are
   * copied with U+FFFD's own in place of each invalid sequence and decoded natively a block at
   * a time: a decode per valid stretch took 700 ns per replacement (Latin-1 text read as UTF-8).
   */
  private withReplacements (whole: Uint8Array): string {
    const parts: string[] = []
    const out = replacedBlock
    let o = 0
    let blockStart = 0
    let chars = this.decodedChars
    for (let pos = 0; pos < whole.length;) {
      if (pos - blockStart >= REPLACE_BLOCK) {
        parts.push(out.toString('utf8', 0, o))
        o = 0
        blockStart = pos
      }
      const b = whole[pos]!
      if (b < 0x80) {
        // ASCII in a tight loop, up to the block's end.
        const stop = Math.min(whole.length, blockStart + REPLACE_BLOCK)
        const first = pos
        do { out[o++] = whole[pos++]! } while (pos < stop && whole[pos]! < 0x80)
        chars += pos - first
        continue
      }
      const n = sequenceLength(whole, pos)
      if (b >= 0xc2 && b <= 0xf4 && n === (b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2)) {
        for (let k = 0; k < n; k++) out[o++] = whole[pos + k]!
        chars += n === 4 ? 2 : 1
      } else {
        if (this.replaced++ === 0) this.firstReplacedByte = this.decodedBytes + pos
        if (n !== REPLACEMENT.length) this.replacements.add(chars, n - REPLACEMENT.length)
        out.set(REPLACEMENT, o)
        o += REPLACEMENT.length
        chars++
      }
      pos += n
    }
    if (o > 0) parts.push(out.toString('utf8', 0, o))
    this.decodedChars = chars
    return parts.length === 1 ? parts[0]! : parts.join('')
  }

  private invalidUtf8 (offset: number): DocsplitError {
    return new DocsplitError('DOCSPLIT_INVALID_UTF8', `the input is not valid UTF-8 at byte ${offset}; set the encoding option (encoding, --encoding) if it is text in another one, such as latin1, or utf-16le or utf-16be for UTF-16 without a byte order mark; set invalid_bytes to replace (--invalid-bytes replace) to read bytes that are not UTF-8 as U+FFFD and go on; compressed or binary files are not text`)
  }

  /** The error for `bytes`, which the decoder refused, at the offset of the first bad byte (the BOM's counted, as for UTF-8). */
  private invalid (bytes: Uint8Array, final: boolean): DocsplitError {
    const replacing = this.replace ? ' (invalid_bytes replace reads only UTF-8 that way)' : ''
    return new DocsplitError('DOCSPLIT_PARSE_ERROR', `the input is not valid ${this.encoding.name} at byte ${this.invalidAt(bytes, final)}${replacing}`)
  }

  private invalidAt (bytes: Uint8Array, final: boolean): number {
    const name = this.encoding.name
    if (name === 'utf-16le' || name === 'utf-16be') {
      // The scan starts at the unit the decoder holds from the pieces before, if any: an odd
      // byte, after a high surrogate when the last whole unit was one.
      const sinceBom = this.received - this.bomBytes
      let held = sinceBom % 2
      const last = this.lastBytes.length - held - 2
      if (last >= 0 && (this.lastBytes[last + (name === 'utf-16be' ? 0 : 1)]! & 0xfc) === 0xd8) held += 2
      const from = this.received - held
      const joined = new Uint8Array(held + bytes.length)
      joined.set(this.lastBytes.subarray(this.lastBytes.length - held))
      joined.set(bytes, held)
      const at = firstInvalidUtf16(joined, name === 'utf-16be', final)
      return at === -1 ? from : from + at
    }
    // A single-byte encoding holds nothing back: the first byte it has no character for.
    const one = new TextDecoder(name, { fatal: true })
    const at = bytes.findIndex((b) => {
      try {
        one.decode(Uint8Array.of(b))
        return false
      } catch {
        return true
      }
    })
    return this.received + Math.max(0, at)
  }
}
