/**
 * A third-party plugin, as outsiders ship it (test/fixtures/plugins/docsplit-plugin-ini, its own
 * package), loaded with --plugin and held to the conformance kit; and bad plugins refused at
 * start with a message naming the module and the reason.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { checkParser } from '../../testing.js'
import { loadPlugins, split } from '../../index.js'

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..')
const fixtures = join(root, 'test/fixtures/plugins')
const ini = join(fixtures, 'docsplit-plugin-ini/index.js')
const bin = join(root, 'dist/cli/index.js')
const dir = mkdtempSync(join(tmpdir(), 'docsplit-plugin-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

const sample = '; global settings\nname = demo\n\n[server]\nhost = 127.0.0.1\nport = 8000\n\n; paths\n[paths]\nroot = /srv/data\nlogs = /var/log\n'

function docsplit (args: string[], cwd = root): { code: number | null, stdout: string, stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8' })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

t.test('should split an INI file through the CLI with --plugin, by extension', async (t) => {
  const file = join(dir, 'app.ini')
  writeFileSync(file, sample)
  const r = docsplit(['split', file, '--plugin', ini, '--max-tokens', '12'])
  t.equal(r.code, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  t.equal(out.document.input_format, 'ini')
  t.equal(out.chunks.map((c: { text: string }) => c.text).join(''), sample)
  t.ok(out.chunks.some((c: { path: string[] }) => c.path[0] === 'server'), 'sections appear in path')
  const formats = JSON.parse(docsplit(['formats', '--json', '--plugin', ini]).stdout)
  t.ok(formats.formats.some((f: { name: string }) => f.name === 'ini'), 'docsplit formats lists the plugin')
})

t.test('should load a plugin by package name from the current project', async (t) => {
  const project = join(dir, 'project')
  const pkg = join(project, 'node_modules/docsplit-plugin-ini')
  spawnSync('mkdir', ['-p', pkg])
  spawnSync('cp', [join(fixtures, 'docsplit-plugin-ini/package.json'), join(fixtures, 'docsplit-plugin-ini/index.js'), pkg])
  writeFileSync(join(project, 'a.cfg'), sample)
  const r = docsplit(['split', 'a.cfg', '--plugin', 'docsplit-plugin-ini'], project)
  t.equal(r.code, 0, r.stderr)
  t.equal(JSON.parse(r.stdout).document.input_format, 'ini', 'the canonical format of the extension')
})

t.test('should refuse bad plugins at start, naming the module and the reason', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['docsplit-plugin-nowhere', /DOCSPLIT_PLUGIN_LOAD_FAILED: plugin module "docsplit-plugin-nowhere" was not found/],
    [join(fixtures, 'bad/throws.js'), /DOCSPLIT_PLUGIN_LOAD_FAILED: plugin module ".*throws.js" threw while loading: this plugin cannot start/],
    [join(fixtures, 'bad/taken.js'), /DOCSPLIT_PLUGIN_LOAD_FAILED: plugin module ".*taken.js": format "markdown" is already registered/],
    [join(fixtures, 'bad/future.js'), /DOCSPLIT_PLUGIN_API_MISMATCH: plugin module ".*future.js": plugin "future" was built for docsplit plugin API \^2/],
    [join(fixtures, 'bad/not-a-plugin.js'), /DOCSPLIT_PLUGIN_LOAD_FAILED: plugin module ".*not-a-plugin.js" must default-export a plugin/],
    [join(fixtures, 'bad/empty-list.js'), /^docsplit: DOCSPLIT_PLUGIN_LOAD_FAILED: plugin module ".*empty-list.js" default-exports an empty list; it must export a plugin made with definePlugin \(or a list of them\)\n$/],
    [join(fixtures, 'bad/splitter-typo.js'), /^docsplit: DOCSPLIT_PLUGIN_LOAD_FAILED: plugin module ".*splitter-typo.js": parser "typo" names defaultSplitter "recrod", which is not a registered splitter; registered: "sibling", "record"\n$/],
  ]
  for (const [module, message] of cases) {
    for (const command of [['formats'], ['split', '-', '--input-format', 'text']]) {
      const r = docsplit([...command, '--plugin', module])
      t.equal(r.code, 2, `${command[0]!} ${module}`)
      t.match(r.stderr, message)
      t.equal(r.stdout, '', 'nothing split, nothing listed')
    }
  }
  // The service: the same failed start.
  const serve = spawnSync(process.execPath, [bin, 'serve'], { cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...process.env, HOST: '127.0.0.1', PORT: '0', DOCSPLIT_PLUGINS: join(fixtures, 'bad/splitter-typo.js') } })
  t.equal(serve.status, 2, serve.stderr)
  t.match(serve.stderr, /DOCSPLIT_PLUGIN_LOAD_FAILED: plugin module ".*splitter-typo.js": parser "typo" names defaultSplitter "recrod"/)
})

t.test('should pass the conformance kit, like every built-in', async (t) => {
  await loadPlugins([ini])
  const { default: plugin } = await import(ini) as { default: Parameters<typeof checkParser>[0] }
  await checkParser(plugin, [
    { name: 'sample', input: sample },
    { name: 'no trailing newline', input: '[a]\nx = 1' },
    { name: 'crlf', input: '[a]\r\nx = 1\r\n\r\n[b]\r\ny = 2\r\n' },
  ])
  const r = await split(sample, { input_format: 'ini', max_tokens: 512 })
  t.equal(r.chunk_count, 1)
})

t.test('a plugin that throws: one line by default, its exception with DOCSPLIT_DEBUG', async (t) => {
  const plugin = join(dir, 'throws.mjs')
  writeFileSync(plugin, `export default { kind: 'parser', name: 'throws', docsplit: '^1', formats: ['throws'], extensions: ['.throws'], reads: 'text', defaultSplitter: 'record',
  create () { return { write () { throw new Error('plugin bug at line 3') }, end () {} } } }\n`)
  const input = join(dir, 'a.throws')
  writeFileSync(input, 'text\n')
  const plain = docsplit(['split', input, '--plugin', plugin])
  t.equal(plain.code, 1)
  t.equal(plain.stderr, 'docsplit: DOCSPLIT_INTERNAL: the throws parser failed unexpectedly\n')
  const debug = spawnSync(process.execPath, [bin, 'split', input, '--plugin', plugin], { encoding: 'utf8', env: { ...process.env, DOCSPLIT_DEBUG: '1' } })
  t.match(debug.stderr, /Error: plugin bug at line 3\n\s+at /, 'the cause with its stack')
})
