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
