/**
 * How a split ends when it does not reach the end: the consumer stops early (summary rejects
 * with DOCSPLIT_CANCELLED instead of never settling), the input stream fails (DOCSPLIT_READ_FAILED
 * naming its error code, not an internal error), the document turns invalid after valid records
 * (the chunks made before go out, then the error).
 */
import t from 'tap'
import { Readable } from 'node:stream'
import { definePlugin, register, split, splitStream } from '../../index.js'
import { isDocsplitError } from '../../core/errors.js'

/** A splitter whose push overflows the stack; whether its end() was called. */
let overflowingEnded = false
register(definePlugin({
  kind: 'packer',
  name: 'test-overflowing',
  docsplit: '^1',
  create () {
    return {
      push () { throw new RangeError('Maximum call stack size exceeded') },
      end () { overflowingEnded = true },
    }
  },
}))

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

t.test('a bad JSONL line after good ones: every record before it goes out, then the parse error', async (t) => {
  const good = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ i })).join('\n') + '\n'
  const s = splitStream(Buffer.from(good + '{bad\n'), { input_format: 'jsonl', max_tokens: 64 })
  const seen: string[] = []
  const code = await codeOf((async () => { for await (const c of s) seen.push(c.text) })())
  t.equal(code, 'DOCSPLIT_PARSE_ERROR')
  t.ok(seen.length > 400, `${seen.length} chunks before the error`)
  t.equal(seen.join(''), good, 'all the good records, in order, the last chunk too')
  const few = splitStream(Buffer.from('{"a":1}\n{"b":2}\n{bad\n'), { input_format: 'jsonl' })
  const texts: string[] = []
  t.equal(await codeOf((async () => { for await (const c of few) texts.push(c.text) })()), 'DOCSPLIT_PARSE_ERROR')
  t.same(texts, ['{"a":1}\n{"b":2}\n'], 'two records that fill no chunk still go out')
})

t.test('invalid UTF-8 in the middle of a piece: the records before it in that piece go out too', async (t) => {
  const good = Array.from({ length: 1000 }, (_, i) => `2024-01-01 00:00:${String(i % 60).padStart(2, '0')} INFO entry ${i}\n`).join('')
  const bytes = Buffer.concat([Buffer.from(good + '2024-01-01 00:00:00 INFO bad '), Buffer.from([0xff]), Buffer.from('\n' + good)])
  for (const input of [bytes, (async function * () { yield bytes })()]) {
    const s = splitStream(input, { input_format: 'log', max_tokens: 128 })
    let text = ''
    const code = await codeOf((async () => { for await (const c of s) text += c.text })())
    t.equal(code, 'DOCSPLIT_INVALID_UTF8')
    // The last entry's end is not known when the bytes stop: it may have continuation lines.
    t.equal(text, good.slice(0, good.lastIndexOf('2024-')), 'every entry but the one being read, in order')
  }
})

t.test('the last chunk before an input error says where it ended, not `end`: the document goes on', async (t) => {
  const boundaries = async (input: Parameters<typeof splitStream>[0], options: Parameters<typeof splitStream>[1]): Promise<Array<[string, string]>> => {
    const s = splitStream(input, options)
    s.summary.catch(() => {})
    const seen: Array<[string, string]> = []
    try { for await (const c of s) seen.push([c.boundary, c.text]) } catch {}
    return seen
  }
  // record splitter: after a record
  t.same(await boundaries(Buffer.from('{"a":1}\n{"b":2}\n{bad\n'), { input_format: 'jsonl' }), [['record', '{"a":1}\n{"b":2}\n']])
  // sibling splitter: after a block (invalid UTF-8 in the second piece)
  const pieces = async function * (): AsyncGenerator<Buffer> {
    yield Buffer.from('Para one.\n\nPara two.\n\n')
    yield Buffer.from([0x41, 0xff, 0x41])
  }
  t.same(await boundaries(pieces(), { input_format: 'text' }), [['block', 'Para one.\n\n']])
  // A document read to its end still ends with `end`.
  t.same((await boundaries(Buffer.from('{"a":1}\n{"b":2}\n'), { input_format: 'jsonl' })).map(([b]) => b), ['end'])
})

t.test('counting ahead on other cores: the records held for counting still go out before an input error', async (t) => {
  // More than AHEAD_AFTER (4 Mi characters) of good lines, so o200k counts them ahead in batches.
  const good = '{"a":"some value here","n":1}\n'.repeat(200_000)
  const pieces = async function * (): AsyncGenerator<Buffer> {
    const bytes = Buffer.from(good + '{bad\n')
    for (let at = 0; at < bytes.length; at += 1 << 20) yield bytes.subarray(at, at + (1 << 20))
  }
  for (const tokenizer of ['approx', 'o200k_base']) {
    const s = splitStream(pieces(), { input_format: 'jsonl', max_tokens: 200, tokenizer })
    let records = 0
    const code = await codeOf((async () => { for await (const c of s) records += c.record_count ?? 0 })())
    t.equal(code, 'DOCSPLIT_PARSE_ERROR', tokenizer)
    t.equal(records, 200_000, `${tokenizer}: every record before the error`)
  }
})

t.test('next() called again before the last one settles: every chunk once, in order, then done', async (t) => {
  const text = '2024-01-01 a line of the log\n'.repeat(3000)
  const all: number[] = []
  for await (const c of splitStream(text, { input_format: 'log', max_tokens: 32 })) all.push(c.index)
  const it = splitStream(text, { input_format: 'log', max_tokens: 32 })[Symbol.asyncIterator]()
  const results = await Promise.all(Array.from({ length: all.length + 3 }, async () => await it.next()))
  t.same(results.filter((r) => r.done !== true).map((r) => r.value.index), all)
  t.ok(results.slice(all.length).every((r) => r.done === true), 'the calls past the end are done')
})

t.test('an error is thrown once; the stream is done after it', async (t) => {
  const it = splitStream('x', { max_tokens: 0 })[Symbol.asyncIterator]()
  t.equal(await codeOf(it.next()), 'DOCSPLIT_INVALID_BUDGET')
  t.same(await it.next(), { value: undefined, done: true })
})

/** A long log input that says whether it was closed (its generator's finally block ran). */
function closable (): { pieces: AsyncGenerator<string>, closed: () => boolean } {
  let closed = false
  async function * pieces (): AsyncGenerator<string> {
    try {
      for (let i = 0; i < 100; i++) yield '2024-01-01 a line of the log\n'.repeat(2000)
    } finally {
      closed = true
    }
  }
  return { pieces: pieces(), closed: () => closed }
}

t.test('return() closes the input it read from', async (t) => {
  const input = closable()
  const s = splitStream(input.pieces, { input_format: 'log', max_tokens: 32 })
  for await (const _ of s) break
  t.ok(input.closed(), 'the input generator ran its finally block')
  t.equal(await codeOf(s.summary), 'DOCSPLIT_CANCELLED')
})

t.test('by batches (splitBatches, for the CLI): the same chunks; the same endings', async (t) => {
  const { splitBatches } = await import('../../core/split.js')
  const text = '2024-01-01 a line of the log\n'.repeat(60_000)
  const one: string[] = []
  for await (const c of splitStream(text, { input_format: 'log', max_tokens: 32 })) one.push(JSON.stringify(c))
  const batched = splitBatches(text, { input_format: 'log', max_tokens: 32 })
  const all: string[] = []
  let batches = 0
  for await (const batch of batched) {
    batches++
    for (const c of batch) all.push(JSON.stringify(c))
  }
  t.same(all, one, 'chunk for chunk, ids included')
  t.ok(batches > 1 && batches < one.length, `${one.length} chunks in ${batches} batches`)
  t.equal((await batched.summary).chunk_count, one.length)
  // ids left to the caller
  for await (const batch of splitBatches(text.slice(0, 3000), { input_format: 'log', max_tokens: 32 }, true)) {
    t.ok(batch.every((c) => c.id === ''), 'ids left empty')
  }
  // an error: thrown once, start and summary reject with it
  const bad = splitBatches('x', { max_tokens: 0 })
  t.equal(await codeOf((async () => { for await (const _ of bad) t.fail('no batch') })()), 'DOCSPLIT_INVALID_BUDGET')
  t.equal(await codeOf(bad.summary), 'DOCSPLIT_INVALID_BUDGET')
  // a stop: summary says cancelled, the input is closed
  const input = closable()
  const stopped = splitBatches(input.pieces, { input_format: 'log', max_tokens: 32 })
  for await (const _ of stopped) break
  t.ok(input.closed(), 'the input generator ran its finally block')
  t.equal(await codeOf(stopped.summary), 'DOCSPLIT_CANCELLED')
})

t.test('a splitter that fails is not ended to salvage its chunks, whatever its error says', async (t) => {
  const err = await split('a line\n', { input_format: 'text', splitter: 'test-overflowing' }).catch((e: unknown) => e) as { code?: string }
  t.equal(err.code, 'DOCSPLIT_LIMIT_EXCEEDED')
  t.notOk(overflowingEnded, 'end() not called after the failure')
})

t.test('a split that fails before it reads its stream closes it (a bad option, an unknown tokenizer)', async (t) => {
  for (const [options, code] of [[{ max_tokens: 1 }, 'DOCSPLIT_INVALID_BUDGET'], [{ input_format: 'text', tokenizer: 'nope' }, 'DOCSPLIT_UNKNOWN_TOKENIZER']] as const) {
    const stream = Readable.from(['never read'])
    t.equal(await codeOf(split(stream, options)), code)
    t.ok(stream.destroyed, `${code}: the stream is destroyed`)
    const other = Readable.from(['never read'])
    const s = splitStream(other, options)
    s.summary.catch(() => {})
    t.equal(await codeOf((async () => { for await (const c of s) void c })()), code)
    t.ok(other.destroyed, `${code}: splitStream's too`)
  }
})

t.test('a stream is iterated once: a second pass is an error, not a silent second split', async (t) => {
  const s = splitStream('# a\n\nsome text\n', { max_tokens: 8 })
  let n = 0
  for await (const chunk of s) if (chunk.text !== "") n++
  t.ok(n > 0)
  t.equal(await codeOf((async () => { for await (const c of s) void c })()), 'DOCSPLIT_INVALID_REQUEST')
  t.equal((await s.summary).chunk_count, n, 'the summary is the first pass\'s')
})

t.test('start or summary awaited before the chunks are read begins the split (it used to wait on nothing, and Node ended the process)', async (t) => {
  // In a process of its own: under tap something always keeps the event loop alive.
  const script = `import { splitStream } from ${JSON.stringify(new URL('../../index.ts', import.meta.url).href)}
const s = splitStream('# A\\n\\nText.\\n\\n# B\\n\\nMore text.\\n', { max_tokens: 8, input_format: 'markdown' })
const start = await s.start
let n = 0
for await (const c of s) n++
const t = splitStream('# A\\n\\nText.\\n\\n# B\\n\\nMore text.\\n', { max_tokens: 8, input_format: 'markdown' })
const summary = await t.summary
let m = 0
for await (const c of t) m++
console.log(JSON.stringify([start.input_format, n, summary.chunk_count, m]))`
  const { spawnSync } = await import('node:child_process')
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
  t.equal(r.status, 0, r.stderr)
  t.same(JSON.parse(r.stdout), ['markdown', 2, 2, 2], 'the format, then every chunk; the summary, then its chunks from memory')
  // Awaited and read in the same turn: nothing begins early, the chunks are read once.
  const s = splitStream('one\n\ntwo\n', { max_tokens: 8 })
  const summary = s.summary.then((x) => x.chunk_count)
  let n = 0
  for await (const chunk of s) if (chunk.text !== "") n++
  t.equal(await summary, n)
})
