/**
 * A `whole` parser gets the document in one write() just before end(), however the input was
 * cut (strings, bytes split inside a character, a BOM), and none for an empty input; core
 * checks its events against that one string. `whole` is refused on a parser of bytes.
 */
import t from 'tap'
import { definePlugin, register, split } from '../../index.js'
import { isDocsplitError } from '../../core/errors.js'
import { parserEvents } from '../../core/testing.js'
import { parserForFormat } from '../../core/registry.js'

const writes: string[] = []
let ended = 0

register(definePlugin({
  kind: 'parser', name: 'test-whole', docsplit: '^1', formats: ['test-whole'], extensions: [], reads: 'text', whole: true, defaultSplitter: 'sibling',
  create (ctx) {
    let text = ''
    return {
      write (all) {
        writes.push(all)
        text += all
      },
      end () {
        ended++
        const lines = text.split(/(?<=\n)/)
        let at = 0
        for (const line of lines) {
          if (line === '') continue
          ctx.emit({ type: 'block', kind: 'paragraph', start: at, end: at + line.length, text: line })
          at += line.length
        }
      },
    }
  },
}))

// Before any split: the registry closes with the first one.
t.test('whole is for parsers of text', async (t) => {
  let error: unknown
  try {
    register(definePlugin({ kind: 'parser', name: 'test-whole-bytes', docsplit: '^1', formats: ['test-whole-bytes'], extensions: [], reads: 'bytes', whole: true, defaultSplitter: 'record', create: () => ({ write () {}, end () {} }) }))
  } catch (e) {
    error = e
  }
  t.ok(isDocsplitError(error), 'refused')
  t.match((error as Error).message, /`whole` is true or false, and true only for a parser that reads text/)
})

const doc = Array.from({ length: 3000 }, (_, i) => `Line ${i}: ünïcødé, 日本語 and 🎉 here.\n`).join('')

t.test('one write with the whole text, from any cut of the input', async (t) => {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(doc)])
  async function * cut (size: number): AsyncGenerator<Buffer> {
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
  }
  for (const [name, input] of [['a string', doc], ['bytes given whole', bytes], ['bytes in 7-byte pieces', cut(7)], ['bytes in 64 KiB pieces', cut(1 << 16)]] as const) {
    writes.length = 0
    const r = await split(input, { input_format: 'test-whole', max_tokens: 64 })
    t.equal(writes.length, 1, `${name}: one write`)
    t.equal(writes[0], doc, `${name}: the whole text, without the BOM`)
    t.equal(r.chunks.map((c) => c.text).join(''), doc, `${name}: lossless`)
  }
})

t.test('bytes given whole, longer than one piece: one write with all their text', async (t) => {
  const long = doc.repeat(16) // about 2.7 MB: three pieces of the input
  writes.length = 0
  const r = await split(Buffer.from(long), { input_format: 'test-whole', max_tokens: 512 })
  t.equal(writes.length, 1)
  t.equal(writes[0], long)
  t.equal(r.chunks.map((c) => c.text).join(''), long, 'lossless')
})

t.test('past 64 MiB, bytes are decoded a batch at a time and the text stays in order', async (t) => {
  const line = 'word '.repeat(200) + '\n'
  const big = Buffer.alloc((64 << 20) + 1000, line) // alone over a batch
  const text = 'first line\n' + big.toString('latin1') + 'last line\n'
  async function * pieces (): AsyncGenerator<Buffer> {
    yield Buffer.from('first line\n')
    yield big
    yield Buffer.from('last line\n')
  }
  for (const [name, input] of [['a stream with a piece over a batch', pieces()], ['bytes given whole', Buffer.from(text)]] as const) {
    writes.length = 0
    const r = await split(input, { input_format: 'test-whole', max_tokens: 100_000 })
    t.equal(writes.length, 1, `${name}: one write`)
    t.ok(writes[0] === text, `${name}: the whole text, in order`)
    t.equal(r.document.char_count, text.length)
  }
})

t.test('bytes are held as they were given, even when the caller reuses its buffer', async (t) => {
  const bytes = Buffer.from(doc)
  async function * reused (): AsyncGenerator<Buffer> {
    // One buffer, refilled for every read, as a reader with a fixed buffer does.
    const buffer = Buffer.alloc(4096)
    for (let at = 0; at < bytes.length; at += buffer.length) {
      const n = bytes.copy(buffer, 0, at, at + buffer.length)
      yield buffer.subarray(0, n)
    }
  }
  writes.length = 0
  const r = await split(reused(), { input_format: 'test-whole', max_tokens: 64 })
  t.equal(writes[0], doc, 'the parser got the text that was read')
  t.equal(r.chunks.map((c) => c.text).join(''), doc, 'lossless')
})

t.test('an empty input: no write, no end, zero chunks', async (t) => {
  writes.length = 0
  ended = 0
  const r = await split('', { input_format: 'test-whole' })
  t.equal(r.chunk_count, 0)
  t.same(writes, [])
  t.equal(ended, 0)
})

t.test('the conformance kit feeds a whole parser as the pipeline does', async (t) => {
  writes.length = 0
  const events = await parserEvents(parserForFormat('test-whole'), doc, {}, 7)
  t.equal(writes.length, 1, 'one write, whatever the piece size asked')
  t.equal(events.length, 3000)
  writes.length = 0
  t.same(await parserEvents(parserForFormat('test-whole'), '', {}, 7), [])
  t.same(writes, [], 'no write for an empty input')
})

t.test('a whole document longer than a string can be: a limit error as soon as it is known', async (t) => {
  const { constants } = await import('node:buffer')
  const mib = Buffer.alloc(1 << 20, 'line of text\n')
  let read = 0
  async function * huge (): AsyncGenerator<Buffer> {
    // The same MiB again and again: the input costs nothing, the text held costs what it must.
    for (let i = 0; i < 2 * constants.MAX_STRING_LENGTH / mib.length; i++) {
      read += mib.length
      yield mib
    }
  }
  writes.length = 0
  let error: unknown
  try {
    await split(huge(), { input_format: 'test-whole' })
  } catch (e) {
    error = e
  }
  t.ok(isDocsplitError(error), String(error))
  t.equal((error as { code?: string }).code, 'DOCSPLIT_LIMIT_EXCEEDED')
  t.match((error as Error).message, /^test-whole is parsed as one string, and this document is longer than the [\d,]+ characters a string can hold$/)
  // Bytes are decoded 64 MiB at a time: the limit is seen at most that much after it is passed.
  t.ok(read <= constants.MAX_STRING_LENGTH + (64 << 20) + 2 * mib.length, `stopped after ${read} bytes, not at the end of the input`)
  t.same(writes, [], 'the parser got nothing')

  // One piece longer than a string can be: decoded in parts, then the same error.
  async function * onePiece (): AsyncGenerator<Buffer> {
    yield Buffer.alloc(constants.MAX_STRING_LENGTH + (16 << 20), 'line of text\n')
  }
  const code = await split(onePiece(), { input_format: 'test-whole' }).then(() => 'split', (e: unknown) => (e as { code?: string }).code)
  t.equal(code, 'DOCSPLIT_LIMIT_EXCEEDED', 'one piece over the limit')
})
