import t from 'tap'
import { split } from '../../index.js'
import { tokenizerByName } from '../../core/registry.js'
import { Verifier } from '../../core/verify.js'
import type { Chunk } from '../../core/schema.js'

const text = Array.from({ length: 60 }, (_, i) => `Sentence ${i} has a few words 😀 in it.`).join(' ') + '\n'

async function verify (chunks: Chunk[]): Promise<string[]> {
  const v = new Verifier()
  v.start(await tokenizerByName('approx').load(), 32)
  v.addSource(text)
  for (const c of chunks) v.check(c)
  return v.finish().map((x) => x.rule)
}

t.test('a real split with overlap verifies clean; tampering is caught by rule', async (t) => {
  const r = await split(text, { input_format: 'text', max_tokens: 32, overlap_tokens: 8 })
  t.ok(r.chunks.some((c, i) => i > 0 && c.char_start < r.chunks[i - 1]!.char_end), 'chunks overlap')
  t.same(await verify(r.chunks), [])

  const overlapped = r.chunks.findIndex((c, i) => i > 0 && c.char_start < r.chunks[i - 1]!.char_end)
  const badHead = r.chunks.map((c, i) => i === overlapped ? { ...c, text: 'X' + c.text.slice(1) } : c)
  t.ok((await verify(badHead)).includes('overlap'), 'a changed overlap prefix')

  const badSpan = r.chunks.map((c, i) => i === 1 ? { ...c, char_end: c.char_end + 1 } : c)
  t.ok((await verify(badSpan)).includes('offsets'), 'a span longer than the text')
})

t.test('byte offsets and line numbers: real splits verify clean, an off-by-one is caught', async (t) => {
  const check = async (bytes: Uint8Array, options: Record<string, unknown>, tamper?: (c: Chunk, i: number) => Chunk): Promise<string[]> => {
    const r = await split(bytes, options)
    const v = new Verifier()
    // Bytes before and after the split says its encoding, as the CLI hands them over.
    v.addBytes(bytes.subarray(0, 7))
    v.start(await tokenizerByName('approx').load(), options.max_tokens as number)
    v.decodeAs(String(r.metadata.options.encoding))
    v.addBytes(bytes.subarray(7))
    v.endBytes()
    for (const [i, c] of r.chunks.entries()) v.check(tamper?.(c, i) ?? c)
    return v.finish().map((x) => `${x.rule}: ${x.detail}`)
  }
  const lines = 'line one é😀\r\nline two\rline three\n\nline five 漢字\r\n'.repeat(40)
  const cases: Array<[string, Uint8Array, Record<string, unknown>]> = [
    ['utf-8, CRLF and lone CR, overlap', Buffer.from(lines), { input_format: 'text', max_tokens: 24, overlap_tokens: 6 }],
    ['utf-8 with a BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(lines)]), { input_format: 'text', max_tokens: 24 }],
    ['utf-16le with a BOM', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(lines, 'utf16le')]), { input_format: 'text', max_tokens: 24 }],
    ['latin1', Buffer.from('caf\xe9 au lait\r\n'.repeat(200), 'latin1'), { input_format: 'text', max_tokens: 16, encoding: 'latin1' }],
    ['markdown ending without a newline', Buffer.from('# A\r\n\r\nText\r' + 'more words here. '.repeat(50)), { input_format: 'markdown', max_tokens: 16 }],
  ]
  for (const [name, bytes, options] of cases) t.same(await check(bytes, options), [], name)
  const [, bytes, options] = cases[0]!
  t.match(await check(bytes, options, (c, i) => i === 3 ? { ...c, byte_start: c.byte_start + 1 } : c), [/^offsets: byte_start\.\.byte_end spans/, /^offsets: byte_start is/])
  t.match(await check(bytes, options, (c, i) => i === 3 ? { ...c, line_start: c.line_start + 1 } : c), [/^offsets: line_start is/])
  t.match(await check(bytes, options, (c, i) => i === 5 ? { ...c, line_end: c.line_end - 1 } : c), [/^offsets: line_end is/])
})

t.test('past the first 100 violations, the rest are counted', async (t) => {
  const many = Array.from({ length: 300 }, (_, i) => `Line ${i}.`).join('\n') + '\n'
  const r = await split(many, { input_format: 'text', max_tokens: 8 })
  t.ok(r.chunks.length > 150)
  const v = new Verifier()
  v.start(await tokenizerByName('approx').load(), 8)
  v.addSource(many)
  for (const c of r.chunks) v.check({ ...c, token_count: c.token_count + 1 })
  const found = v.finish()
  t.equal(found.length, 100, 'the first 100 kept')
  t.equal(v.violationCount, r.chunks.length, 'every one counted')
})
