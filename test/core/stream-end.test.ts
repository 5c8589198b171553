/**
 * How a split ends when it does not reach the end: the consumer stops early (summary rejects
 * with DOCSPLIT_CANCELLED instead of never settling), the input stream fails (DOCSPLIT_READ_FAILED
 * naming its error code, not an internal error), the document turns invalid after valid records
 * (the chunks made before go out, then the error).
 */
import t from 'tap'
import { Readable } from 'node:stream'
import { split, splitStream } from '../../index.js'
import { isDocsplitError } from '../../core/errors.js'

const codeOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p
    return 'settled'
  } catch (error) {
    return isDocsplitError(error) ? error.code : String(error)
  }
}

t.test('break: summary rejects with DOCSPLIT_CANCELLED, start keeps its value', async (t) => {
  const s = splitStream('2024-01-01 a\n'.repeat(10_000), { input_format: 'log', max_tokens: 16 })
  for await (const chunk of s) { t.equal(chunk.index, 0); break }
  t.equal(await codeOf(s.summary), 'DOCSPLIT_CANCELLED')
  t.equal((await s.start).input_format, 'log')
  // Read to the end, it resolves as before.
  const whole = splitStream('2024-01-01 a\n'.repeat(100), { input_format: 'log', max_tokens: 16 })
  let n = 0
  for await (const _ of whole) n++
  t.equal((await whole.summary).chunk_count, n)
})

t.test('an input stream that fails is DOCSPLIT_READ_FAILED with its code; chunks before it go out', async (t) => {
  const lines = Buffer.from('2024-01-01 a line of the log\n'.repeat(2000))
  const failing = (): Readable => new Readable({
    read () {
      if (this.readableLength === 0 && !(this as { sent?: boolean }).sent) {
        (this as { sent?: boolean }).sent = true
        this.push(lines)
      } else {
        this.destroy(Object.assign(new Error('i/o'), { code: 'EIO' }))
      }
    },
  })
  const err = await split(failing(), { input_format: 'log' }).catch((e: unknown) => e)
  t.ok(isDocsplitError(err))
  t.equal((err as { code: string }).code, 'DOCSPLIT_READ_FAILED')
  t.match((err as Error).message, /^reading the input failed \(EIO\)$/)
  const s = splitStream(failing(), { input_format: 'log', max_tokens: 64 })
  let chunks = 0
  const code = await codeOf((async () => { for await (const _ of s) chunks++ })())
  t.equal(code, 'DOCSPLIT_READ_FAILED')
  t.ok(chunks > 0, `${chunks} chunks before the failure`)
})

t.test('a bad JSONL line after good ones: the chunks made before it go out, then the parse error', async (t) => {
  const good = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ i })).join('\n') + '\n'
  const s = splitStream(Buffer.from(good + '{bad\n'), { input_format: 'jsonl', max_tokens: 64 })
  const seen: string[] = []
  const code = await codeOf((async () => { for await (const c of s) seen.push(c.text) })())
  t.equal(code, 'DOCSPLIT_PARSE_ERROR')
  t.ok(seen.length > 400, `${seen.length} chunks before the error`)
  t.ok(good.startsWith(seen.join('')), 'they are the start of the document, in order')
})
