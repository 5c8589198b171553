/**
 * An AbortSignal stops a split: one aborted before the call, one aborted while the split waits
 * for input that does not come, and one aborted by a timer while a large text in memory is split.
 */
import t from 'tap'
import { PassThrough } from 'node:stream'
import { split, splitStream, isDocsplitError } from '../../index.js'

const markdown = (sections: number): string => Array.from({ length: sections }, (_, i) => `## Section ${i}\n\nSome text about item ${i}, with a [link](https://example.com/${i}).\n\n- one\n- two\n`).join('\n')

t.test('a signal aborted before the call: DOCSPLIT_CANCELLED with its reason, and the input stream is released', async (t) => {
  const input = new PassThrough()
  input.end('some text\n')
  const reason = new Error('shutting down')
  const error = await split(input, {}, { signal: AbortSignal.abort(reason) }).then(() => undefined, (e: unknown) => e)
  t.ok(isDocsplitError(error) && error.code === 'DOCSPLIT_CANCELLED', String(error))
  t.equal((error as Error).cause, reason, 'the signal\'s reason is its cause')
  t.equal(input.destroyed, true, 'the stream was destroyed')
})

t.test('aborted while waiting for input: the stream throws at once, start and summary reject', async (t) => {
  const input = new PassThrough()
  input.write('2024-01-01 10:00:00 INFO first\n'.repeat(2000))
  const controller = new AbortController()
  const stream = splitStream(input, { input_format: 'log', max_tokens: 64 }, { signal: controller.signal })
  let chunks = 0
  const iterated = (async () => {
    for await (const _ of stream) {
      if (++chunks === 1) setTimeout(() => { controller.abort() }, 50)
    }
  })()
  const error = await iterated.then(() => undefined, (e: unknown) => e)
  t.ok(chunks > 0, `chunks came before the abort (${chunks})`)
  t.ok(isDocsplitError(error) && error.code === 'DOCSPLIT_CANCELLED', String(error))
  await t.rejects(stream.summary, { code: 'DOCSPLIT_CANCELLED' })
  t.equal(input.destroyed, true, 'the input that never ended was released')
})

t.test('aborted while chunks made are waiting: none of them is handed out after the abort', async (t) => {
  // A text in memory is split a MiB at a time: its chunks are all made before the first is read.
  const text = '2024-01-01 10:00:00 INFO request served\n'.repeat(20_000)
  const controller = new AbortController()
  let after = 0
  const error = await (async () => {
    for await (const _ of splitStream(text, { input_format: 'log', max_tokens: 32 }, { signal: controller.signal })) {
      if (controller.signal.aborted) after++
      controller.abort()
    }
  })().then(() => undefined, (e: unknown) => e)
  t.ok(isDocsplitError(error) && error.code === 'DOCSPLIT_CANCELLED', String(error))
  t.equal(after, 0, 'no chunk after the abort')
})

t.test('aborted by a timer while a large markdown text in memory is split', async (t) => {
  const text = markdown(30_000)
  // Without a signal, and with one never aborted, the same split ends with the same chunks (and
  // markdown's parser is loaded, so the split below waits for no file).
  const whole = await split(text, { input_format: 'markdown' })
  const kept = await split(text, { input_format: 'markdown' }, { signal: new AbortController().signal })
  const controller = new AbortController()
  setTimeout(() => { controller.abort() }, 10)
  const started = performance.now()
  await t.rejects(split(text, { input_format: 'markdown' }, { signal: controller.signal }), { code: 'DOCSPLIT_CANCELLED' })
  t.comment(`stopped after ${Math.round(performance.now() - started)} ms`)
  t.equal(kept.chunks.length, whole.chunks.length)
  t.equal(kept.chunks.map((c) => c.text).join(''), text)
})

t.test('a signal that is not one is the caller\'s mistake; null is none', async (t) => {
  for (const signal of [5, 'soon', {}, { aborted: false }]) {
    await t.rejects(split('hello', {}, { signal } as never), { code: 'DOCSPLIT_INVALID_REQUEST', message: /signal must be an AbortSignal/ }, JSON.stringify(signal))
    const stream = splitStream('hello', {}, { signal } as never)
    await t.rejects((async () => { for await (const _ of stream) {} })(), { code: 'DOCSPLIT_INVALID_REQUEST' }, `${JSON.stringify(signal)}: the stream too`)
  }
  t.equal((await split('hello', {}, { signal: null } as never)).chunk_count, 1, 'null: no signal')
})
