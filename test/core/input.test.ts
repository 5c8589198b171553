/**
 * What split takes as its input, and the message for what it does not take.
 */
import t from 'tap'
import { split, splitStream } from '../../index.js'

const KINDS = 'input must be a string, bytes (Uint8Array, Buffer, ArrayBuffer), or a stream or (async) iterable of strings or of bytes'

t.test('a typed array other than bytes is refused as the input it is, not as a stream', async (t) => {
  await t.rejects(split(new Uint16Array([65, 66]) as never), {
    code: 'DOCSPLIT_INVALID_REQUEST',
    message: `${KINDS}; a Uint16Array is not bytes: pass new Uint8Array(view.buffer, view.byteOffset, view.byteLength) for the bytes it holds`,
  })
  await t.rejects(split(new DataView(new ArrayBuffer(2)) as never), { code: 'DOCSPLIT_INVALID_REQUEST', message: /a DataView is not bytes/ })
  // Its bytes, as the message says, are read.
  const view = new Uint16Array([0x6968])
  const r = await split(new Uint8Array(view.buffer, view.byteOffset, view.byteLength), { input_format: 'text' })
  t.equal(r.chunks[0]!.text, 'hi')
})

t.test('something that is neither input nor iterable says what split takes', async (t) => {
  for (const [input, what] of [[42, 'a number'], [null, 'null'], [{ text: 'x' }, 'an object']] as const) {
    await t.rejects(split(input as never), { code: 'DOCSPLIT_INVALID_REQUEST', message: `${KINDS}, not ${what}` })
  }
  await t.rejects(split(new Blob(['x']) as never), { message: `${KINDS}, not an object: for a Blob, pass await blob.arrayBuffer()` })
})

t.test('an iterable of something else than strings or bytes names what it yielded', async (t) => {
  await t.rejects(split([65, 66] as never), { code: 'DOCSPLIT_INVALID_REQUEST', message: 'an input stream or iterable must yield strings or bytes (Uint8Array, Buffer), not a number' })
  async function * objects (): AsyncGenerator<unknown> { yield { text: 'x' } }
  const stream = splitStream(objects() as never)
  await t.rejects((async () => { for await (const _ of stream) {} })(), { message: /must yield strings or bytes \(Uint8Array, Buffer\), not an object$/ })
})
