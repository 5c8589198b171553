/**
 * A DocsplitError made by another copy of docsplit (a plugin loaded by path with its own
 * node_modules, or one that lists docsplit in `dependencies`) keeps its code and message, as
 * one of this copy does: `instanceof` knows only one copy's class. The built package (dist/) is
 * that other copy here.
 */
import t from 'tap'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { definePlugin, register, split } from '../../index.js'
import { DocsplitError } from '../../core/errors.js'

const built = fileURLToPath(new URL('../../dist/core/errors.js', import.meta.url))
const skip = existsSync(built) ? false : 'dist/ is not built: run npm run build (npm test does)'

t.test('a parser that throws another copy\'s DocsplitError: its code and message, not DOCSPLIT_INTERNAL', { skip }, async (t) => {
  const other = await import(built) as typeof import('../../core/errors.js')
  t.not(other.DocsplitError, DocsplitError, 'two copies of the class')
  register(definePlugin({
    kind: 'parser', name: 'foreign-error-test', docsplit: '^1', formats: ['foreign-error-test'], extensions: [], reads: 'text', defaultSplitter: 'record',
    create: () => ({
      write (piece: string) { if (piece.includes('bad')) throw new other.DocsplitError('DOCSPLIT_PARSE_ERROR', 'line 1, column 4: unexpected token') },
      end () {},
    }),
  }), definePlugin({
    kind: 'tokenizer', name: 'foreign-error-tok', docsplit: '^1',
    load: () => ({ name: 'foreign-error-tok', count (text: string) { if (text.includes('rate')) throw new other.DocsplitError('DOCSPLIT_RATE_LIMITED', 'slow down'); return text.length } }),
  }))
  await t.rejects(split('a bad line', { input_format: 'foreign-error-test' }), { name: 'DocsplitError', code: 'DOCSPLIT_PARSE_ERROR', message: 'line 1, column 4: unexpected token' })
  const error = await split('a bad line', { input_format: 'foreign-error-test' }).catch((e: unknown) => e)
  t.ok(error instanceof DocsplitError, 'this copy\'s class, for every front (exit code, HTTP status)')
  // a code no plugin may give stays refused, whichever copy made it
  await t.rejects(split('rate', { input_format: 'text', tokenizer: 'foreign-error-tok' }), { code: 'DOCSPLIT_PLUGIN_CONTRACT', message: /threw DOCSPLIT_RATE_LIMITED, which is not a plugin's to give/ })
})
