/**
 * What users install: every package that `npm install docsplit` brings (dependencies and the
 * optional extras, not dev tools) must run on the Node that package.json promises. npm drops an
 * optional dependency whose tree holds a package with a higher `engines.node`: fastify and
 * swagger-ui were once dropped that way on Node 20 (cookie@2 and content-disposition@3 need 22),
 * so `docsplit serve` failed after a normal install.
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import satisfies from 'semver/functions/satisfies.js'
import minVersion from 'semver/ranges/min-version.js'

const root = new URL('../', import.meta.url)
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  engines: { node: string }
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  overrides?: Record<string, string>
  scripts: Record<string, string>
}
const lock = JSON.parse(readFileSync(new URL('package-lock.json', root), 'utf8')) as {
  packages: Record<string, { version?: string, dev?: boolean, engines?: { node?: string } | string[] }>
}

t.test('every installed package runs on the oldest Node that package.json accepts', async (t) => {
  const oldest = minVersion(pkg.engines.node)!.version
  const tooNew: string[] = []
  let checked = 0
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev === true) continue
    checked++
    const node = Array.isArray(entry.engines) ? undefined : entry.engines?.node
    if (node !== undefined && !satisfies(oldest, node)) tooNew.push(`${path.replace(/^.*node_modules\//, '')}@${entry.version} needs node ${node}`)
  }
  t.ok(checked > 50, `${checked} packages checked`)
  t.same(tooNew, [], `all run on node ${oldest}`)
})

t.test('an override is also a direct pin: overrides reach the install of this repo, never that of a user', async (t) => {
  const direct = { ...pkg.dependencies, ...pkg.optionalDependencies }
  for (const [name, version] of Object.entries(pkg.overrides ?? {})) {
    t.equal(direct[name], version, `${name}@${version} is pinned where a user's npm sees it`)
  }
})

t.test('the README\'s links to files of the repo point at files the package ships', async (t) => {
  const { spawnSync } = await import('node:child_process')
  const packed = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: new URL('.', root), encoding: 'utf8' })
  t.equal(packed.status, 0, packed.stderr)
  const shipped = new Set((JSON.parse(packed.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path))
  const readme = readFileSync(new URL('README.md', root), 'utf8')
  const links = [...readme.matchAll(/\]\(([a-z][^)#:]*)(?:#[^)]*)?\)/g)].map((m) => m[1]!)
  t.ok(links.length >= 3, `${links.length} links`)
  for (const link of links) t.ok(shipped.has(link), `${link} is in the package`)
})

t.test('prepare builds from the sources only where they are: a folder of the package as shipped installs', async (t) => {
  const { spawnSync } = await import('node:child_process')
  const { mkdtempSync, rmSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { join } = await import('node:path')
  const shipped = mkdtempSync(join(tmpdir(), 'docsplit-shipped-'))
  t.teardown(() => { rmSync(shipped, { recursive: true, force: true }) })
  // npm runs it with sh; `npm install` of a folder (file:) runs prepare there, with no tsconfig.json.
  const r = spawnSync('sh', ['-c', pkg.scripts.prepare!], { cwd: shipped, encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  t.match(pkg.scripts.prepare, /npm run build/, 'and in the repository it builds')
})
