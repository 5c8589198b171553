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
