/**
 * Records are opened (split into their children) only when over the budget by the tokenizer the
 * request names: approx, which counts prose higher than o200k_base, first estimates, and the
 * named tokenizer confirms (ParserContext.confirmOver).
 */
import t from 'tap'
import { split } from '../../index.js'
import { tokenizerByName } from '../../core/registry.js'
import type { Tokenizer } from '../../core/types.js'

const o200k = await tokenizerByName('o200k_base').load().catch(() => undefined)
const approx = await tokenizerByName('approx').load()
const prose = 'The council approved the new budget on Tuesday after a long debate about schools, roads and the future of the harbour district. '

/** Documents of two records; the first record's text. */
const documents: Array<[string, (record: string) => string, string]> = [
  ['json', (r) => `[${r}, ${r}]`, `{"title": "Council approves budget", "body": "${prose.repeat(3)}", "tags": ["city", "budget"]}`],
  ['yaml', (r) => `${r}\n${r}\n`, `- title: Council approves budget\n  body: "${prose.repeat(3)}"\n  tags: [city, budget]`],
  ['xml', (r) => `<feed>${r}${r}</feed>`, `<entry><title>Council approves budget</title><body>${prose.repeat(3)}</body></entry>`],
]

t.test('a record that fits the named tokenizer is one chunk, though approx puts it over', { skip: o200k === undefined ? 'o200k_base is not available' : false }, async (t) => {
  const exact = o200k as Tokenizer
  for (const [format, wrap, record] of documents) {
    const max = exact.count(record)
    t.ok(approx.count(record) > max, `${format}: approx counts the record higher (${approx.count(record)} > ${max})`)
    const doc = wrap(record)
    const r = await split(doc, { input_format: format, max_tokens: max, tokenizer: 'o200k_base' })
    const from = doc.indexOf(record)
    t.same(r.chunks.slice(0, -1).map((c) => c.char_end).filter((end) => end > from && end < from + record.length), [], `${format}: no boundary inside the first record`)
    // with approx it is over, so it is opened: the check above can fail
    const byApprox = await split(doc, { input_format: format, max_tokens: max })
    t.ok(byApprox.chunks.some((c) => c.char_end > from && c.char_end < from + record.length), `${format}: opened when approx is the tokenizer`)
  }
})
