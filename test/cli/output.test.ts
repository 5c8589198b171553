/**
 * The CLI's output pieces: the response written a chunk at a time, and the progress line.
 */
import t from 'tap'
import { Writable } from 'node:stream'
import { split } from '../../index.js'
import { DocsplitError } from '../../core/errors.js'
import { errorLine, Output, writeResponse } from '../../cli/output.js'
import { Progress } from '../../cli/progress.js'

function sink (): { stream: NodeJS.WritableStream, text: () => string } {
  let text = ''
  const stream = new Writable({ write (chunk, _encoding, done) { text += String(chunk); done() } })
  return { stream, text: () => text }
}

t.test('the response, written a chunk at a time, is JSON.stringify of it byte for byte', async (t) => {
  const doc = '# Title\n\nSome text with "quotes", \\ and\ttabs.\n\n## Part\n\n' + 'word '.repeat(200) + '\n'
  for (const source of [doc, '']) {
    const r = await split(source, { input_format: 'markdown', max_tokens: 32 })
    const { chunks, ...summary } = r
    for (const pretty of [false, true]) {
      const out = sink()
      await writeResponse(summary, chunks, pretty, new Output(out.stream))
      t.equal(out.text(), (pretty ? JSON.stringify(r, null, 2) : JSON.stringify(r)) + '\n', `${chunks.length} chunks, pretty ${pretty}`)
    }
  }
})

t.test('Output keeps every byte and never reuses bytes a stream still holds', async (t) => {
  // A stream that answers later and keeps what it was given, as a pipe may.
  const held: Array<string | Buffer> = []
  const stream = new Writable({
    highWaterMark: 1024,
    write (chunk: string | Buffer, _encoding, done) { held.push(chunk); setImmediate(done) },
  })
  const output = new Output(stream)
  const texts = ['{"a":1}\n', 'é€😀\n'.repeat(5000), 'x'.repeat(300_000), '"q"\n', '😀'.repeat(70_000)]
  for (let i = 0; i < 40; i++) for (const text of texts) await output.write(text)
  await output.flush()
  const written = Buffer.concat(held.map((c) => typeof c === 'string' ? Buffer.from(c) : c)).toString()
  t.equal(written, texts.join('').repeat(40), 'the bytes written are the texts, in order')
})

function terminal (): { stream: NodeJS.WriteStream, text: () => string } {
  const out = sink()
  return { stream: Object.assign(out.stream, { isTTY: true }) as unknown as NodeJS.WriteStream, text: out.text }
}

t.test('the progress line shows for a large input, and for one of unknown size only once it is large', async (t) => {
  const small = terminal()
  const unknown = new Progress(undefined, small.stream)
  unknown.advance(1000)
  unknown.finish()
  t.equal(small.text(), '', 'a small pipe draws nothing')
  const big = terminal()
  const piped = new Progress(undefined, big.stream)
  piped.advance(9 * 1024 * 1024)
  piped.finish()
  t.match(big.text(), /^\rdocsplit: 9\.4 MB .*\n$/s)
  const file = terminal()
  const known = new Progress(20e6, file.stream)
  known.advance(5e6)
  known.abort()
  t.match(file.text(), /25% 5\.0\/20\.0 MB.*\n$/s, 'an error ends the line')
  known.abort()
  t.notMatch(file.text(), /\n\n$/, 'once')
  const notTerminal = sink().stream as unknown as NodeJS.WriteStream
  t.ok(Progress.wanted(20e6, terminal().stream, notTerminal), 'wanted: stderr a terminal, stdout not')
  t.notOk(Progress.wanted(20e6, terminal().stream, terminal().stream), 'not wanted when the chunks go to the terminal too')
  t.notOk(Progress.wanted(20e6, notTerminal, notTerminal), 'not wanted when stderr is no terminal')
})

t.test('an error line is one line whatever its message quotes raw', async (t) => {
  const e = new DocsplitError('DOCSPLIT_PLUGIN_CONTRACT', 'plugin said "a\nb\u001b[2J\u009b\u2028c"')
  t.equal(errorLine(e), 'docsplit: DOCSPLIT_PLUGIN_CONTRACT: plugin said "a\\u000ab\\u001b[2J\\u009b\\u2028c"')
  t.equal(errorLine(e, 'dir/a\tb.md'), 'docsplit: DOCSPLIT_PLUGIN_CONTRACT: "dir/a\\tb.md": plugin said "a\\u000ab\\u001b[2J\\u009b\\u2028c"', 'the file it is about quoted as JSON quotes it')
})
