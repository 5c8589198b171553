import t from 'tap'
import fc from 'fast-check'
import { split } from '../../index.js'
import { StreamDecoder, firstInvalidUtf16, firstInvalidUtf8, utf16WithoutBom } from '../../core/decode.js'

const bytes = (...parts: Array<string | number[]>): Uint8Array =>
  Buffer.concat(parts.map((p) => typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p)))

async function * onePerByte (data: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < data.length; i++) yield data.subarray(i, i + 1)
}

t.test('should reject invalid UTF-8 with the byte offset, at the start, middle and end', async (t) => {
  for (const [input, offset] of [
    [bytes([0xff], 'abc'), 0],
    [bytes('héllo', [0xc3, 0x28], 'x'), 6],
    [bytes('abc', [0xe2, 0x82]), 3],
  ] as const) {
    await t.rejects(split(input, { input_format: 'text' }), { code: 'DOCSPLIT_INVALID_UTF8', message: new RegExp(`at byte ${offset};`) })
    await t.rejects(split(onePerByte(input), { input_format: 'text' }), { code: 'DOCSPLIT_INVALID_UTF8', message: new RegExp(`at byte ${offset};`) }, 'same offset when fed one byte at a time')
  }
})

t.test('should find overlong, surrogate and out-of-range sequences', async (t) => {
  t.equal(firstInvalidUtf8(bytes('ok', [0xc0, 0x80]), true), 2)
  t.equal(firstInvalidUtf8(bytes('ok', [0xed, 0xa0, 0x80]), true), 2)
  t.equal(firstInvalidUtf8(bytes([0xf4, 0x90, 0x80, 0x80]), true), 0)
  t.equal(firstInvalidUtf8(bytes('ok', [0xf0, 0x9f]), false), -1, 'a cut sequence is fine mid-stream')
  t.equal(firstInvalidUtf8(bytes('ok', [0xf0, 0x9f]), true), 2, 'and invalid at the end')
  t.equal(firstInvalidUtf8(bytes('日本語 😀'), true), -1)
})

t.test('should reject invalid UTF-16 at the byte offset of the first bad unit, the BOM counted, however the pieces cut it', async (t) => {
  const le = (text: string): number[] => [...Buffer.from(text, 'utf16le')]
  const long = 'a'.repeat(250_000)
  for (const [what, input, offset, encoding] of [
    ['an odd byte at the end', bytes([0xff, 0xfe], le('hi'), [0x0a]), 6],
    ['an odd byte without a BOM', bytes(le('abcdefgh'), [0x61]), 16, 'utf-16'],
    ['a lone high surrogate', bytes([0xff, 0xfe], le('h'), [0x00, 0xd8], le('i')), 4],
    ['a lone low surrogate', bytes([0xff, 0xfe], le('h'), [0x00, 0xdc], le('i')), 4],
    ['a high surrogate at the end', bytes([0xff, 0xfe], le('h😀'), [0x3d, 0xd8]), 8],
    ['a lone surrogate after a pair', bytes([0xfe, 0xff], [...Buffer.from('h😀', 'utf16le').swap16()], [0xd8, 0x3d, 0x00, 0x61]), 8],
    ['a lone surrogate past the first decode window', bytes([0xff, 0xfe], le(long), [0x00, 0xd8], le('i')), 500_002],
  ] as const) {
    const options = { input_format: 'text', ...(encoding !== undefined ? { encoding } : {}) }
    const message = new RegExp(` at byte ${offset}$`)
    await t.rejects(split(input, options), { code: 'DOCSPLIT_PARSE_ERROR', message }, what)
    if (input.length < 100) await t.rejects(split(onePerByte(input), options), { code: 'DOCSPLIT_PARSE_ERROR', message }, `${what}, fed one byte at a time`)
    async function * threes (): AsyncGenerator<Uint8Array> { for (let i = 0; i < input.length; i += 65_537) yield input.subarray(i, i + 65_537) }
    await t.rejects(split(threes(), options), { code: 'DOCSPLIT_PARSE_ERROR', message }, `${what}, in odd-sized pieces`)
  }
  // A whole-text parser decodes megabytes at once: the scan for the offset must not overflow the stack.
  const whole = bytes([0xff, 0xfe], le('a'.repeat(2_000_000)), [0x00, 0xdc])
  await t.rejects(split(whole, { input_format: 'markdown' }), { code: 'DOCSPLIT_PARSE_ERROR', message: / at byte 4000002$/ }, 'in one piece of 4 MB')
  t.equal(firstInvalidUtf16(bytes(le('ab'), [0x3d, 0xd8]), false, false), -1, 'a high surrogate at a piece\'s end waits for its pair')
  t.equal(firstInvalidUtf16(bytes(le('ab'), [0x3d]), false, false), -1, 'and so does an odd byte')
  t.equal(firstInvalidUtf16(bytes(le('a😀b')), false, true), -1)
})

t.test('should reject a byte a single-byte encoding has no character for at its offset', async (t) => {
  await t.rejects(split(bytes('abc', [0xa5], 'd'), { input_format: 'text', encoding: 'iso-8859-3' }), { code: 'DOCSPLIT_PARSE_ERROR', message: /^the input is not valid iso-8859-3 at byte 3$/ })
})

t.test('should strip a UTF-8 BOM and still count it in byte offsets', async (t) => {
  const r = await split(bytes([0xef, 0xbb, 0xbf], 'héllo\n'), { input_format: 'text' })
  t.equal(r.chunks[0]!.text, 'héllo\n')
  t.equal(r.chunks[0]!.char_start, 0)
  t.equal(r.chunks[0]!.byte_start, 3)
  t.equal(r.chunks[0]!.byte_end, 10)
  t.equal(r.document.byte_count, 10)
  t.equal(r.document.char_count, 6)
})

t.test('should decode UTF-16 by its BOM with byte offsets in UTF-16 units', async (t) => {
  const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a😀\nb', 'utf16le')])
  const r = await split(le, { input_format: 'text' })
  t.equal(r.document.encoding, 'utf-16le')
  t.equal(r.chunks.map((c) => c.text).join(''), 'a😀\nb')
  t.equal(r.chunks[0]!.byte_start, 2)
  t.equal(r.chunks.at(-1)!.byte_end, le.length)
  t.equal(r.document.char_count, 4, 'the emoji is one code point')
  const be = Buffer.from(le).swap16()
  be[0] = 0xfe; be[1] = 0xff
  t.equal((await split(be, { input_format: 'text' })).chunks.map((c) => c.text).join(''), 'a😀\nb')
})

t.test('should see a byte order mark however the first pieces cut it', async (t) => {
  const text = 'h\u00e9llo \u{1F600}\n'.repeat(50)
  const inputs: Array<[string, Buffer]> = [
    ['utf-8', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])],
    ['utf-16le', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])],
  ]
  for (const [encoding, whole] of inputs) {
    for (const first of [0, 1, 2, 3, 4, whole.length]) {
      async function * pieces (): AsyncGenerator<Uint8Array> {
        if (first > 0) yield whole.subarray(0, first)
        for (let at = first; at < whole.length; at += 7) yield whole.subarray(at, at + 7)
      }
      const r = await split(pieces(), { input_format: 'text' })
      t.equal(r.chunks.map((c) => c.text).join(''), text, `${encoding}, first piece ${first} bytes`)
      t.equal(r.document.encoding, encoding)
    }
  }
})

t.test('should decode a streamed format in parts without breaking the characters that span them', async (t) => {
  // Lines of 1- to 4-byte characters, 300 KB: the engine decodes a streaming format's bytes
  // 64 KB at a time, and those cuts fall inside characters.
  const lines: string[] = []
  for (let i = 0, size = 0; size < 300_000; i++) {
    const line = `2026-01-01T00:00:00Z INFO caf\u00e9 \u65e5\u672c ${'\u{1F600}'.repeat(i % 5)} ${i}\n`
    lines.push(line)
    size += Buffer.byteLength(line)
  }
  const text = lines.join('')
  for (const input of [Buffer.from(text), (async function * () { yield Buffer.from(text) })()]) {
    const r = await split(input, { input_format: 'log', max_tokens: 64 })
    t.equal(r.chunks.map((c) => c.text).join(''), text, 'the chunks are the text')
    t.equal(r.chunks.at(-1)!.byte_end, Buffer.byteLength(text))
  }
})

t.test('should decode latin1 by name with one byte per character', async (t) => {
  const input = Buffer.from([0x41, 0xa3, 0x35, 0x0a, 0x42])
  const r = await split(input, { input_format: 'text', encoding: 'latin1' })
  t.equal(r.chunks.map((c) => c.text).join(''), 'A£5\nB')
  t.equal(r.document.encoding, 'windows-1252')
  t.equal(r.chunks.at(-1)!.byte_end, 5)
  await t.rejects(split(input, { input_format: 'text' }), { code: 'DOCSPLIT_INVALID_UTF8' }, 'the same bytes are not UTF-8')
})

t.test('windows-1252 bytes 0x80-0x9F decode as windows-1252 in a document of any length', async (t) => {
  // Node 20 decodes a whole input given to TextDecoder in one non-streaming call as Latin-1.
  for (const bytes of [[0x80], [0x80, 0x93], [0x80, 0x93, 0x41], [0x41, 0x80, 0x93, 0x0a]]) {
    for (const encoding of ['windows-1252', 'latin1']) {
      const r = await split(Buffer.from(bytes), { input_format: 'text', encoding })
      t.equal(r.chunks.map((c) => c.text).join(''), Buffer.from(bytes).toString('latin1').replace('\x80', '€').replace('\x93', '“'), `${encoding}: ${bytes.length} bytes`)
    }
  }
})

t.test('should refuse unknown and multi-byte legacy encodings', async (t) => {
  await t.rejects(split(Buffer.from('x'), { encoding: 'iso-8859-16', input_format: 'text' }), { code: 'DOCSPLIT_UNSUPPORTED_ENCODING', message: /^encoding "iso-8859-16" is a WHATWG encoding this Node.js runtime cannot decode/ },
    'a label Node lacks is not called unknown', { skip: (() => { try { return new TextDecoder('iso-8859-16') !== undefined } catch { return false } })() ? 'this Node.js decodes iso-8859-16' : false })
  await t.rejects(split(Buffer.from('x'), { encoding: 'no-such-encoding', input_format: 'text' }), { code: 'DOCSPLIT_UNSUPPORTED_ENCODING' })
  await t.rejects(split(Buffer.from('x'), { encoding: 'shift_jis', input_format: 'text' }), { code: 'DOCSPLIT_UNSUPPORTED_ENCODING' })
})

t.test('should give the same chunks whatever the piece sizes', async (t) => {
  const text = '日本語のテキスト。😀 emoji and ascii.\n\n' + 'Ünïcödé paragraph two. '.repeat(40)
  const whole = await split(text, { input_format: 'text', max_tokens: 32 })
  const pieces = await split(onePerByte(Buffer.from(text)), { input_format: 'text', max_tokens: 32 })
  t.same(pieces.chunks, whole.chunks)
})

/** `data` decoded in pieces cut at the offsets `cuts` (taken modulo its length + 1). */
function decodeCut (decoder: StreamDecoder, data: Uint8Array, cuts: number[]): string {
  const at = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b)
  let out = ''
  let from = 0
  for (const to of [...at, data.length]) {
    out += decoder.decode(data.subarray(from, to))
    from = to
  }
  return out + decoder.end()
}

t.test('should decode UTF-8 cut anywhere, ASCII pieces and others alike, as one decode of the whole', async (t) => {
  // ASCII pieces take a byte copy, the others a UTF-8 decode: a piece boundary may fall between.
  const text = fc.array(fc.oneof(fc.string({ unit: 'binary-ascii', maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 8 })), { maxLength: 12 }).map((parts) => parts.join(''))
  fc.assert(fc.property(text, fc.array(fc.nat(), { maxLength: 6 }), (s, cuts) => decodeCut(new StreamDecoder('utf-8'), Buffer.from(s, 'utf8'), cuts) === s), { numRuns: 500 })
  t.pass('500 random texts and cuts')
})

/** UTF-8 with bad bytes mixed in: stray bytes, cut and overlong sequences, surrogates, a BOM. */
const dirtyBytes = fc.array(fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => [...Buffer.from(s, 'utf8')]),
  fc.constantFrom([0xff], [0xe9], [0x80], [0xc0, 0x80], [0xe0, 0x80], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98], [0xf4, 0x90], [0xc3], [0xef, 0xbb, 0xbf], [0x0a], [0x0d, 0x0a]),
), { maxLength: 30 }).map((parts) => Uint8Array.from(parts.flat()))

t.test('invalid_bytes replace: each invalid sequence is one U+FFFD, as Node decodes it, however the pieces cut it', async (t) => {
  fc.assert(fc.property(dirtyBytes, fc.array(fc.nat(), { maxLength: 6 }), (data, cuts) => {
    const decoder = new StreamDecoder('utf-8', true)
    const out = decodeCut(decoder, data, cuts)
    const bom = data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0
    const expected = Buffer.from(data.subarray(bom)).toString('utf8')
    if (out !== expected) throw new Error(`decoded ${JSON.stringify(out)}, Node ${JSON.stringify(expected)}`)
    // Every byte is counted once: the whole text's length in bytes is the input's.
    if (decoder.byteLength(out, 0) + bom !== data.length) throw new Error(`${decoder.byteLength(out, 0) + bom} bytes counted of ${data.length}`)
    return true
  }), { numRuns: 1000 })
  t.pass('1000 random inputs and cuts')
})

t.test('invalid_bytes replace: chunks hold the bytes they cover, and the response says what was replaced', async (t) => {
  await fc.assert(fc.asyncProperty(dirtyBytes, fc.constantFrom(8, 16, 64), fc.constantFrom(0, 4), fc.constantFrom('text', 'log', 'markdown'), async (data, max, overlap, format) => {
    const r = await split(onePerByte(data), { input_format: format, max_tokens: max, overlap_tokens: overlap, invalid_bytes: 'replace' })
    for (const c of r.chunks) {
      const back = Buffer.from(data.subarray(c.byte_start, c.byte_end)).toString('utf8')
      if (back !== c.text) throw new Error(`chunk ${c.index} at bytes ${c.byte_start}..${c.byte_end}: ${JSON.stringify(back)} in the input, ${JSON.stringify(c.text)} in the chunk`)
    }
    const whole = await split(data, { input_format: format, max_tokens: max, overlap_tokens: overlap, invalid_bytes: 'replace' })
    if (JSON.stringify(whole.chunks) !== JSON.stringify(r.chunks)) throw new Error('one piece and one byte at a time differ')
    if (data.length > 0 && r.document.byte_count !== data.length) throw new Error(`byte_count ${r.document.byte_count} of ${data.length}`)
    const bad = firstInvalidUtf8(data, true)
    if ((r.document.replaced?.first_byte ?? -1) !== bad) throw new Error(`first_byte ${r.document.replaced?.first_byte}, first invalid byte ${bad}`)
    return true
  }), { numRuns: 300 })
  t.pass('300 random inputs')
})

t.test('invalid_bytes replace: a stray byte in a log no longer stops the split', async (t) => {
  const data = bytes('2024-01-01 10:00:00 INFO caf', [0xe9], ' opened\n2024-01-01 10:00:01 INFO next ', [0xff, 0xfe], '\n')
  await t.rejects(split(data, { filename: 'app.log' }), { code: 'DOCSPLIT_INVALID_UTF8', message: /invalid_bytes to replace/ })
  const r = await split(data, { filename: 'app.log', invalid_bytes: 'replace' })
  t.same(r.document.replaced, { sequences: 3, first_byte: 28 })
  t.equal(r.chunks.map((c) => c.text).join(''), '2024-01-01 10:00:00 INFO caf\uFFFD opened\n2024-01-01 10:00:01 INFO next \uFFFD\uFFFD\n')
  t.equal(r.document.byte_count, data.length)
  t.equal(r.metadata.options.invalid_bytes, 'replace')
  t.equal((await split(bytes('clean'), { input_format: 'text', invalid_bytes: 'replace' })).document.replaced?.sequences, 0, 'reported as 0 when nothing was replaced')
  t.equal((await split(bytes('clean'), { input_format: 'text' })).document.replaced, undefined, 'left out by default')
  t.equal((await split(bytes('caf', [0xe9]), { input_format: 'text', encoding: 'latin1', invalid_bytes: 'replace' })).document.replaced, undefined, 'and for another encoding, where it does not apply')
  await t.rejects(split(bytes('x'), { input_format: 'text', invalid_bytes: 'ignore' }), { code: 'DOCSPLIT_INVALID_OPTION', message: /error.*replace/ })
})

t.test('should split empty input into zero chunks and a valid response', async (t) => {
  for (const input of ['', new Uint8Array(0), Buffer.from([0xef, 0xbb, 0xbf])]) {
    const r = await split(input, { input_format: 'text' })
    t.equal(r.chunk_count, 0)
    t.same(r.chunks, [])
    t.equal(r.document.char_count, 0)
    t.equal(r.document.line_count, 0)
  }
})

t.test('encoding with text given as a string: refused unless utf-8, as the service\'s text endpoint does', async (t) => {
  await t.rejects(split('x', { input_format: 'text', encoding: 'latin1' }), { code: 'DOCSPLIT_INVALID_OPTION', message: /applies to bytes; this input is text/ })
  t.equal((await split('x', { input_format: 'text', encoding: 'UTF-8' })).chunk_count, 1)
  t.equal((await split(Buffer.from('x'), { input_format: 'text', encoding: 'latin1' })).chunk_count, 1, 'bytes: as before')
})

t.test('UTF-16 without a byte order mark is told from its first bytes when no encoding is given', async (t) => {
  t.equal(utf16WithoutBom(Buffer.from('id,name\n', 'utf16le')), 'utf-16le')
  t.equal(utf16WithoutBom(Buffer.from('id,name\n', 'utf16le').swap16()), 'utf-16be')
  t.equal(utf16WithoutBom(Buffer.from('id,name\nabc', 'utf8')), undefined, 'UTF-8 text')
  t.equal(utf16WithoutBom(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00, 0x21, 0x00])), undefined, 'a zip header: zeros on both sides')
  t.equal(utf16WithoutBom(Buffer.from('abc', 'utf16le')), undefined, 'fewer than 8 bytes')
  t.equal(utf16WithoutBom(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('id,name\n', 'utf16le')])), undefined, 'a BOM decides on its own')
  // Text of other scripts is told by the ASCII among it (spaces, commas, digits); a character
  // whose low byte is zero (U+4E00, `00 4E`) does not turn it around.
  t.equal(utf16WithoutBom(Buffer.from('stern Asia,Корейская Народно-Дем', 'utf16le')), 'utf-16le', 'Cyrillic with a comma and spaces')
  t.equal(utf16WithoutBom(Buffer.from('ورية ناميبيا,纳米比亚,,Southern Afri', 'utf16le').swap16()), 'utf-16be', 'Arabic and Chinese in a CSV line')
  t.equal(utf16WithoutBom(Buffer.from('第一章 (chapter 一): an introduction', 'utf16le')), 'utf-16le', 'U+4E00: a zero on the other side')
  t.equal(utf16WithoutBom(Buffer.from('纳米比亚纳米比亚纳米比亚纳米比亚', 'utf16le')), undefined, 'no ASCII at all: not told')
  const gzip = Buffer.from('1f8b0808a1b2c3d40003666f6f2e74787400a5934f6fdb300cc5effa1484b3b6c8', 'hex')
  t.equal(utf16WithoutBom(gzip), undefined, 'a gzip header with a file name: two zeros on one side are too few')
  const terminfo = Buffer.from('1a012800020005008700ae00616d706578323332777c416d706578203233322077', 'hex')
  t.equal(utf16WithoutBom(terminfo), undefined, 'compiled terminfo: 16-bit numbers are controls, not text')
  t.equal(utf16WithoutBom(Buffer.from('a.txt\0b.txt\0c.txt\0d.txt\0e.txt\0f.txt\0g.txt\0h.txt\0i.txt\0j.txt\0')), undefined, 'a NUL-separated list (find -print0): no three characters in a row')

  const text = 'id,name\n1,Zoë\n2,Bob\n'
  const le = Buffer.from(text, 'utf16le')
  async function * bytes (b: Buffer): AsyncGenerator<Uint8Array> { for (let i = 0; i < b.length; i++) yield b.subarray(i, i + 1) }
  for (const [name, input] of [['whole', le], ['in 1-byte pieces', bytes(le)], ['big-endian', Buffer.from(le).swap16()]] as const) {
    const r = await split(input, { filename: 'rows.csv', max_tokens: 8 })
    t.equal(r.document.encoding, name === 'big-endian' ? 'utf-16be' : 'utf-16le', `${name}: encoding`)
    t.equal(r.chunks.map((c) => c.text).join(''), text, `${name}: the text`)
    t.same(r.chunks.map((c) => [c.byte_start, c.byte_end]), r.chunks.map((c) => [c.char_start * 2, c.char_end * 2]), `${name}: byte offsets index the bytes as received`)
  }
  const auto = await split(le, {})
  t.equal(auto.document.input_format, 'csv', 'the format is then told from the decoded text')
  const given = await split(Buffer.from('a,b\n1,2\n', 'utf16le'), { input_format: 'csv', encoding: 'utf-8' })
  t.equal(given.document.encoding, 'utf-8', 'a given encoding is kept')
})
