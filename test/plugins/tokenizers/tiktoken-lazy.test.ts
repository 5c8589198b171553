/**
 * The main thread loads an encoding's tables on its first count, not at load: on a large input
 * the worker threads count first, and the main thread starts parsing at once.
 */
import t from 'tap'
import { createRequire } from 'node:module'
import { loadEncoding } from '../../../plugins/tokenizers/tiktoken/load.js'

const require = createRequire(import.meta.url)
const tables = (): string[] => Object.keys(require.cache).filter((k) => /gpt-tokenizer[\\/]cjs[\\/]encoding[\\/]r50k_base/.test(k))

t.test('load finds the package; the first count loads the tables', async (t) => {
  const tok = await loadEncoding('r50k_base')
  t.same(tables(), [], 'no tables after load')
  const { countTokens } = await import('gpt-tokenizer/encoding/r50k_base')
  const text = 'Hello, world: the first count loads the tables.\n'
  t.equal(tok.count(text), countTokens(text), 'the count is the package\'s')
  t.equal(tables().length, 1, 'loaded by the first count')
  t.equal(tok.exceeds!(text, 3), true, 'exceeds goes through the same tables')
})
