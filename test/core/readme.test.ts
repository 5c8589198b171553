/**
 * Docs and code agree (after fastify's errors test): the README tables are exactly what the
 * definitions render, every error code is documented, and the version matches package.json.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { render } from '../../scripts/readme-tables.js'
import { errorTable, VERSION } from '../../index.js'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

t.test('should have README tables generated from the definitions', async (t) => {
  t.equal(render(readme), readme, 'run: node --import tsx scripts/readme-tables.ts --write')
})

t.test('should document every error code, and no stale one', async (t) => {
  const table = readme.slice(readme.indexOf('<!-- errors:start -->'), readme.indexOf('<!-- errors:end -->'))
  const documented = new Set([...table.matchAll(/^\| `(DOCSPLIT_[A-Z0-9_]+)`/gm)].map((m) => m[1]!))
  for (const code of Object.keys(errorTable)) t.ok(documented.has(code), `${code} is in the README`)
  for (const code of documented) t.ok(code in errorTable, `${code} in the README exists`)
})

t.test('should map every error to a status and an exit code the CLI documents', async (t) => {
  for (const [code, e] of Object.entries(errorTable)) {
    t.ok(e.status >= 400 && e.status < 600, `${code} status`)
    t.ok([1, 2, 3, 4].includes(e.exit), `${code} exit code`)
  }
})

t.test('should report the package version', async (t) => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  t.equal(VERSION, pkg.version)
})
