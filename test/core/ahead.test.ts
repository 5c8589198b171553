/**
 * Counting ahead: on large inputs the pipeline counts blocks and records on other threads
 * before the splitter sees them, but not a block so long that it must be over budget (more
 * than 8 characters a token): the splitter cuts that one, and its count would be wasted.
 */
import t from 'tap'
import { register, split } from '../../index.js'
import { invariantProblems } from '../../testing.js'
import { quarters, quartersTokenizer } from '../helpers/quarters.js'

const aheadLengths: number[] = []
register(quartersTokenizer('test-ahead', { many: (texts) => { for (const text of texts) aheadLengths.push(text.length) } }))

t.test('blocks are counted ahead on large inputs, except those far over budget', async (t) => {
  const paragraphs: string[] = []
  for (let i = 0, size = 0; size < 6 << 20; i++) {
    const words = i % 100 === 0 ? 2000 : 40
    const p = Array.from({ length: words }, (_, w) => `w${(i + w) % 1000}`).join(' ') + '.\n\n'
    paragraphs.push(p)
    size += p.length
  }
  const text = paragraphs.join('')
  const r = await split(text, { input_format: 'text', max_tokens: 512, tokenizer: 'test-ahead' })
  t.ok(aheadLengths.length > 5000, `${aheadLengths.length} blocks counted ahead`)
  t.ok(Math.max(...aheadLengths) <= 512 * 8, `the longest block counted ahead has ${Math.max(...aheadLengths)} characters`)
  t.ok(r.chunks.some((c) => c.boundary === 'sentence' || c.boundary === 'word'), 'the long paragraphs were cut')
  t.same(invariantProblems(r, text, { tokenizer: { name: 'test-ahead', count: (s: string) => quarters(s.length) } }), [])
})
