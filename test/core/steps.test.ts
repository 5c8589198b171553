/**
 * A parser whose `end` returns an iterable emits in steps, and the pipeline hands out the chunks
 * made between steps: a whole-document parser does not hold every chunk until it is done.
 */
import t from 'tap'
import { definePlugin, register, splitStream } from '../../index.js'

let lastStepRan = false

register(definePlugin({
  kind: 'parser', name: 'test-steps', docsplit: '^1', formats: ['test-steps'], extensions: [], reads: 'text', defaultSplitter: 'sibling',
  create (ctx) {
    let text = ''
    return {
      write (piece) { text += piece },
      * end () {
        const lines = text.split(/(?<=\n)/)
        let at = 0
        for (let i = 0; i < lines.length; i++) {
          const line = lines[i]!
          ctx.emit({ type: 'block', kind: 'paragraph', start: at, end: at + line.length, text: line })
          at += line.length
          if (i === lines.length - 1) lastStepRan = true
          yield
        }
      },
    }
  },
}))

t.test('chunks leave while the parser is still stepping', async (t) => {
  const text = Array.from({ length: 400 }, (_, i) => `Line ${i} has a handful of words in it.\n`).join('')
  let firstChunkBeforeEnd: boolean | undefined
  let joined = ''
  for await (const c of splitStream(text, { input_format: 'test-steps', max_tokens: 32 })) {
    firstChunkBeforeEnd ??= !lastStepRan
    joined += c.text
  }
  t.equal(firstChunkBeforeEnd, true, 'the first chunk came before the last step')
  t.equal(joined, text, 'lossless')
})

t.test('a streaming parser\'s large piece of bytes is decoded a part at a time, each part\'s chunks out before the next part is read', async (t) => {
  const { splitBatches } = await import('../../core/split.js')
  // Some characters outside Latin-1: the text is held as two-byte strings.
  const log = Buffer.from(Array.from({ length: 6000 }, (_, i) => `2026-01-01T00:00:00Z INFO request ${i} served ✓ in ${i % 97} ms\n`).join(''))
  t.ok(log.length > 4 * 65536, `${log.length} bytes in one piece`)
  let batches = 0
  let joined = ''
  for await (const batch of splitBatches([log], { input_format: 'log', max_tokens: 64 })) {
    batches++
    for (const c of batch) joined += c.text
  }
  t.equal(joined, log.toString(), 'lossless')
  // One batch per 64 KiB part at least; fed whole, the piece's chunks all came at once.
  t.ok(batches >= 4, `${batches} batches`)
})
