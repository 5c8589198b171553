/**
 * Build step (after tsc): the dependencies that every start of docsplit (or of its most common
 * format) loads and that ship as many small modules, bundled into dist/vendor/, and dist/
 * importing the bundles.
 *
 * typebox is 373 ES modules and semver's two functions 23 files; loading them took 130 of the
 * ~250 ms the `docsplit` command needed to start (the bundles load in about 20 ms). typebox
 * schemas stay plain objects whose kind is a string property, so they pass between this copy
 * and any other copy of typebox (a plugin's, fastify's) unchanged. The .d.ts files keep the
 * packages' own names.
 */
import { build } from 'esbuild'
import { readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dist = join(root, 'dist')
const out = join(dist, 'vendor')
const require = createRequire(join(root, 'package.json'))

/** The specifiers dist/ uses, and the bundle for each. */
const ENTRIES = {
  typebox: 'typebox',
  'typebox/value': 'typebox-value',
  'semver/functions/satisfies.js': 'semver-satisfies',
  'semver/ranges/valid.js': 'semver-valid-range',
}
/**
 * The parsers the first markdown document loads: yaml is 73 CommonJS files and markdown-it 25
 * more (entities, mdurl, ...); bundled, a small markdown file splits 35-40 ms sooner. Their
 * ES module builds, picked by the `import` condition without `node` (yaml's `node` build is
 * CommonJS, whose names an ES bundle cannot export).
 */
const ESM_ENTRIES = {
  'markdown-it': 'markdown-it',
  yaml: 'yaml',
}
const ALL = { ...ENTRIES, ...ESM_ENTRIES }
const NAMES = Object.keys(ALL).map((s) => s.replace(/[./]/g, '\\$&')).join('|')

// Chunk names carry a content hash: clear the last build's.
rmSync(out, { recursive: true, force: true })
await build({
  entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([spec, name]) => [name, require.resolve(spec)])),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outdir: out,
  logLevel: 'warning',
})
await build({
  entryPoints: Object.fromEntries(Object.entries(ESM_ENTRIES).map(([spec, name]) => [name, spec])),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  absWorkingDir: root,
  target: 'node20',
  outdir: out,
  logLevel: 'warning',
})

function * jsFiles (dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (path === join(dist, 'vendor')) continue
    if (statSync(path).isDirectory()) yield * jsFiles(path)
    else if (name.endsWith('.js')) yield path
  }
}

// `from 'typebox'`, `import('typebox/value')`, ...: as tsc writes them.
const SPECIFIER = new RegExp(`(\\bfrom\\s*|\\bimport\\s*\\(\\s*)'(${NAMES})'`, 'g')
const PACKAGES = [...new Set(Object.keys(ALL).map((s) => s.split('/')[0]))]
const LEFT = new RegExp(`(\\bfrom\\s*|\\bimport\\s*\\(\\s*)['"](${PACKAGES.join('|')})(\\/[^'"]*)?['"]`)
let rewritten = 0
for (const file of jsFiles(dist)) {
  const text = readFileSync(file, 'utf8')
  if (!PACKAGES.some((name) => text.includes(name))) continue
  const next = text.replace(SPECIFIER, (_, lead, spec) => {
    rewritten++
    let path = relative(dirname(file), join(out, `${ALL[spec]}.js`)).split(sep).join('/')
    if (!path.startsWith('.')) path = `./${path}`
    return `${lead}'${path}'`
  })
  if (LEFT.test(next)) throw new Error(`${relative(root, file)} imports a path of ${PACKAGES.join(', ')} that this step does not bundle`)
  if (next !== text) writeFileSync(file, next)
}
if (rewritten === 0) throw new Error('no import to rewrite found in dist/: has the build changed?')
