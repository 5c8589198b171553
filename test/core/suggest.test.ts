/** closestName: the accepted name a slip of the keyboard most likely meant, or none. */
import t from 'tap'
import { closestName, didYouMean } from '../../core/suggest.js'
import { OPTION_ALIASES } from '../../core/options.js'
import { split } from '../../index.js'

const tokenizers = ['approx', 'o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base', 'gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-5', 'o1', 'o3']

t.test('a slip of an edit or two, in any letter case', async (t) => {
  t.equal(closestName('markdwon', ['markdown', 'text']), 'markdown', 'two letters swapped')
  t.equal(closestName('siblings', ['sibling', 'record']), 'sibling', 'one letter more')
  t.equal(closestName('maxTokens', ['max_tokens', 'splitter']), 'max_tokens')
  t.equal(closestName('--max-token', ['--max-tokens', '--jsonl']), '--max-tokens')
  t.equal(closestName('gpt4o', tokenizers), 'gpt-4o')
  t.equal(closestName('APPROXX', tokenizers), 'approx')
})

t.test('a name it starts is meant only when it is the only one', async (t) => {
  t.equal(closestName('o200k', tokenizers), 'o200k_base')
  t.equal(closestName('cl100', tokenizers), 'cl100k_base')
  t.equal(closestName('gpt-4o-m', tokenizers), 'gpt-4o-mini')
  t.equal(closestName('gpt', tokenizers), undefined, 'gpt-4o, gpt-4.1 or gpt-5: no guess')
})

t.test('no guess where a guess would mislead', async (t) => {
  t.equal(closestName('gpt-6', tokenizers), undefined, 'another model number is no slip')
  t.equal(closestName('o2', tokenizers), undefined)
  t.equal(closestName('zzz', ['markdown', 'text']), undefined, 'nothing close')
  t.equal(closestName('', ['a']), undefined)
  t.equal(closestName('x'.repeat(10_000), ['x'.repeat(10_000)]), undefined, 'past 64 characters: no name')
  t.equal(didYouMean('zzz', ['markdown']), '')
  t.equal(didYouMean('markdwn', ['markdown']), ' (did you mean "markdown"?)')
})

t.test('another splitter\'s option names are answered with docsplit\'s', async (t) => {
  const options = ['input_format', 'max_tokens', 'splitter', 'tokenizer', 'overlap_tokens']
  t.equal(closestName('chunk_size', options, OPTION_ALIASES), 'max_tokens')
  t.equal(closestName('chunkOverlap', options, OPTION_ALIASES), 'overlap_tokens')
  t.equal(closestName('--chunk-size', options.map((o) => `--${o.replace('_', '-')}`), OPTION_ALIASES), '--max-tokens', 'a flag')
  t.equal(closestName('length_function', options, OPTION_ALIASES), 'tokenizer')
  t.equal(closestName('chunk_size', ['splitter'], OPTION_ALIASES), undefined, 'only to a name that is accepted')
  t.equal(closestName('chunk_size', options), undefined, 'no alias without the table')
  t.equal(closestName('constructor', options, OPTION_ALIASES), undefined, 'a name on every object\'s prototype is no alias')
  t.equal(closestName('toString', options), undefined)
  const r = await split('x', { chunk_size: 100 } as never).catch((error: unknown) => error as Error)
  t.match((r as Error).message, /unknown option "chunk_size" \(did you mean "max_tokens"\?\)/, 'the library says so')
})
