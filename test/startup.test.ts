/**
 * What loading docsplit costs: a format's parser body, the log pattern guard and the exact
 * tokenizers' counter load with the first split that needs them, not with `import 'docsplit'`
 * (each module loaded at start is compile time for every CLI run and every cold start).
 * Checked on the built package: the modules are made unloadable, then docsplit is imported and
 * a markdown document split; a CSV split then fails, which shows the hook works.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..')
const entry = pathToFileURL(join(root, 'dist/index.js')).href

/** Loaded only by the split that needs them (paths under dist/). */
const LAZY = [
  'plugins/formats/code/handler.js',
  'plugins/formats/code/syntax.js',
  'plugins/formats/csv/parse.js',
  'plugins/formats/json/handler.js',
  'plugins/formats/log/regex-guard.js',
  'plugins/formats/xlsx/zip-guard.js',
  'plugins/formats/xlsx/sheet.js',
  'plugins/formats/xml/handler.js',
  'plugins/formats/yaml/handler.js',
  'plugins/tokenizers/tiktoken/load.js',
]

const hooks = `
let hidden = []
export function initialize (paths) { hidden = paths }
export async function resolve (specifier, context, next) {
  const found = await next(specifier, context)
  if (hidden.some((path) => found.url.endsWith('/dist/' + path))) {
    const error = new Error('hidden by the test: ' + found.url)
    error.code = 'ERR_MODULE_NOT_FOUND'
    throw error
  }
  return found
}
`

const script = `
import { register } from 'node:module'
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}), { data: ${JSON.stringify(LAZY)} })
const { split } = await import(${JSON.stringify(entry)})
const md = await split('# Title\\n\\nSome text.\\n', { input_format: 'markdown' })
console.log('markdown', md.chunk_count)
try {
  await split('a,b\\n1,2\\n', { input_format: 'csv' })
  console.log('csv split')
} catch (err) {
  console.log('csv failed', err.code)
}
`

t.test('importing docsplit and splitting markdown loads no other format\'s parser', (t) => {
  if (!existsSync(join(root, 'dist/index.js'))) throw new Error('dist/ is missing: run npm run build (npm test does it first)')
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 })
  t.equal(run.status, 0, run.stderr)
  const lines = run.stdout.trim().split('\n')
  t.equal(lines[0], 'markdown 1', 'docsplit loads and splits markdown without them')
  t.match(lines[1], /^csv failed /, 'a CSV split needs its parser: the hook hides it')
  t.end()
})
