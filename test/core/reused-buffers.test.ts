/**
 * A stream may refill one buffer for every read (a reader with a fixed buffer does): the engine
 * copies what it holds past a read, so the chunks are those of the same bytes in fresh buffers,
 * whether the format is named or detected from the first bytes (which are read ahead and held),
 * and for a parser of bytes that holds the whole file (xlsx).
 */
import t from 'tap'
import { split } from '../../index.js'
import { buildXlsx } from '../helpers/xlsx-build.js'

async function * reused (bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  const buffer = Buffer.alloc(size)
  for (let at = 0; at < bytes.length; at += size) {
    const n = bytes.copy(buffer, 0, at, at + size)
    yield buffer.subarray(0, n)
  }
}

async function * fresh (bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield Buffer.from(bytes.subarray(at, at + size))
}

const markdown = Array.from({ length: 400 }, (_, i) => `## Part ${i}\n\nSome [linked](https://example.com/${i}) text, \`code\` and **bold** words.\n\n| a | b |\n|---|---|\n| ${i} | x |\n`).join('\n')
const log = Array.from({ length: 3000 }, (_, i) => `2024-01-01 10:00:${String(i % 60).padStart(2, '0')} INFO request ${i} served\n`).join('')

for (const [name, text, options] of [
  ['markdown, detected', markdown, {}],
  ['markdown, named', markdown, { input_format: 'markdown' }],
  ['log, detected', log, {}],
] as const) {
  t.test(`${name}: the same chunks as from fresh buffers`, async (t) => {
    const bytes = Buffer.from(text)
    const want = await split(fresh(bytes, 4096), { max_tokens: 64, ...options })
    const got = await split(reused(bytes, 4096), { max_tokens: 64, ...options })
    t.equal(got.document.input_format, want.document.input_format, `read as ${want.document.input_format}`)
    t.equal(got.chunks.map((c) => c.text).join(''), text, 'lossless')
    t.same(got.chunks.map((c) => c.id), want.chunks.map((c) => c.id))
  })
}

t.test('xlsx (a parser of bytes that holds the file): the same chunks as from fresh buffers', async (t) => {
  const rows = Array.from({ length: 500 }, (_, i) => [`row ${i}`, i, `some text for row ${i}`])
  const bytes = buildXlsx([{ name: 'Sheet1', rows: [['name', 'n', 'text'], ...rows] }])
  const want = await split(fresh(bytes, 1024), { filename: 'book.xlsx', max_tokens: 64 })
  const got = await split(reused(bytes, 1024), { filename: 'book.xlsx', max_tokens: 64 })
  t.ok(want.chunks.length > 1, `${want.chunks.length} chunks`)
  t.same(got.chunks.map((c) => c.text), want.chunks.map((c) => c.text))
})

t.test('a character of several bytes across reads of a refilled buffer', async (t) => {
  // An incomplete sequence at the end of a read is held until the next: it must be copied.
  const text = 'x'.repeat(32) + 'abc€ 中 😀 ß\n'.repeat(20)
  const bytes = Buffer.from(text)
  for (const size of [1, 3, 4, 5, 7, 64]) {
    const got = await split(reused(bytes, size), { input_format: 'text', max_tokens: 16 })
    t.equal(got.chunks.map((c) => c.text).join(''), text, `lossless in reads of ${size} bytes`)
  }
})
