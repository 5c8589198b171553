/**
 * The text format's limits: a paragraph is held until it ends, so a very long one goes out in
 * parts, and a line with no break to cut at is refused past a length.
 */
import t from 'tap'
import { split } from '../../../index.js'

t.test('a paragraph past 64 MiB goes out in parts at line ends; a line that long is refused', async (t) => {
  const line = 'All work and no play makes a long paragraph, line after line.\n'
  const paragraph = line.repeat(Math.ceil((65 << 20) / line.length))
  const r = await split(paragraph, { input_format: 'text', max_tokens: 1_000_000 })
  t.equal(r.chunks.map((c) => c.text).join(''), paragraph, 'lossless')
  t.ok(r.chunks.every((c) => c.token_count <= 1_000_000), 'within the budget')
  const err = await split('a'.repeat((64 << 20) + 10), { input_format: 'text' }).catch((e: unknown) => e) as { code?: string, message?: string }
  t.equal(err.code, 'DOCSPLIT_LIMIT_EXCEEDED')
  t.match(err.message, /longer than 64 MiB characters without a line break/)
})

t.test('lines end with LF, CRLF or a lone CR, whichever way the text arrives in pieces', async (t) => {
  const para = (n: number): string => Array.from({ length: 4 }, (_, i) => `Paragraph ${n} sentence ${i} is about the lease and the rent.`).join(' ')
  for (const eol of ['\n', '\r\n', '\r']) {
    const text = [para(1), para(2), para(3)].join(eol + eol) + eol
    const whole = await split(text, { input_format: 'text', max_tokens: 80 })
    t.same(whole.chunks.map((c) => c.boundary), ['block', 'block', 'end'], `${JSON.stringify(eol)}: one chunk per paragraph, cut at the blank lines`)
    t.equal(whole.chunks.map((c) => c.text).join(''), text)
    // In pieces that split a CRLF (or end on a lone CR) at every place.
    for (const at of [text.indexOf('\r') + 1, text.indexOf(eol + eol) + 1, 7]) {
      const pieces = (async function * () { yield text.slice(0, at); yield ''; yield text.slice(at) })()
      const r = await split(pieces, { input_format: 'text', max_tokens: 80 })
      t.same(r.chunks.map((c) => c.text), whole.chunks.map((c) => c.text), `${JSON.stringify(eol)} cut at ${at}`)
    }
  }
})

t.test('a page break (form feed) starts a paragraph; a page\'s one-line running header goes with the text under it', async (t) => {
  const body = (n: number): string => Array.from({ length: 5 }, (_, i) => `Clause ${n}.${i} binds the parties to the terms set out above.`).join(' ')
  const page = (n: number): string => `${n > 1 ? 'Master Services Agreement – Confidential\n\n' : ''}${body(n)}\n\nPage ${n} of 3\n`
  const text = [page(1), page(2), page(3)].join('\f')
  const r = await split(text, { input_format: 'text', max_tokens: 128 })
  t.same(r.chunks.map((c) => c.text), [page(1), '\f' + page(2), '\f' + page(3)], 'a chunk per page, footers and headers on their own page')
  // With no blank line around the page break, it is still a paragraph's end.
  const tight = `${body(1)}\n\f${body(2)}\n`
  const cut = await split(tight, { input_format: 'text', max_tokens: 120 })
  t.same(cut.chunks.map((c) => c.text), [`${body(1)}\n`, `\f${body(2)}\n`])
})

t.test('a title on lines of its own goes with the paragraph after it', async (t) => {
  const para = (n: number): string => Array.from({ length: 4 }, (_, i) => `Part ${n} sentence ${i} tells of the estate and its heirs.`).join(' ') + '\n\n'
  for (const title of ['CHAPTER IV.\n\n', 'ARTICLE 5\nCONFIDENTIALITY\n\n', 'Section 3 - Term\n\n', '§ 12\n\n', '3.2.  Scope of Services\n\n', 'Chapter IV.\n\n']) {
    const text = para(1) + para(2) + title + para(3)
    const r = await split(text, { input_format: 'text', max_tokens: 100 })
    t.ok(r.chunks.some((c) => c.text.startsWith(title)), `${JSON.stringify(title)} starts a chunk: ${JSON.stringify(r.chunks.map((c) => c.text.slice(-20)))}`)
    t.notOk(r.chunks.some((c) => c.text.endsWith(title)), `${JSON.stringify(title)} does not end one`)
  }
  // A sentence that starts like a title is not one, nor is a numbered step another one follows.
  for (const line of ['Section 3 applies to every party to this agreement.\n\n', 'Book a flight to Paris\n\n']) {
    const r = await split(para(1) + para(2) + line + para(3), { input_format: 'text', max_tokens: 100 })
    t.ok(r.chunks.some((c) => c.text.endsWith(line)), `${JSON.stringify(line)} may end a chunk`)
  }
  const steps = 'Setup steps\n\n' + Array.from({ length: 12 }, (_, i) => `${i + 1}. Open the panel and click button ${i + 1}`).join('\n\n') + '\n\nThat is all. Restart the machine afterwards and check the log for errors.\n'
  const list = await split(steps, { input_format: 'text', max_tokens: 40 })
  t.ok(list.chunks[0]!.text.startsWith('Setup steps\n\n1. Open'), 'the lead-in goes with the first steps, not alone')
  t.ok(list.chunks.every((c) => c.boundary !== 'block' || c.token_count > 20), 'the steps fill their chunks')
})
