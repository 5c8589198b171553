/**
 * The code of the plugin guide (plugins/README.md) and of the README's "Writing a plugin", run
 * as written, in a project of its own that has docsplit installed (a link, as `npm install`
 * of a folder makes): what a reader copies must work. The guide's sections 2 and 3 are one
 * file, `index.js` of docsplit-plugin-ini, as the guide says.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..')
const bin = join(root, 'dist/cli/index.js')
const project = mkdtempSync(join(tmpdir(), 'docsplit-guide-'))
t.teardown(() => rmSync(project, { recursive: true, force: true }))

interface Block { lang: string, code: string }

/** The fenced code blocks of a markdown section, from its heading to the next of its level or higher. */
function section (markdown: string, heading: string): Block[] {
  const start = markdown.indexOf(`\n${heading}\n`)
  if (start === -1) throw new Error(`no section "${heading}"`)
  const level = /^#+/.exec(heading)![0].length
  const rest = markdown.slice(start + heading.length + 2)
  const next = new RegExp(`^#{1,${level}} `, 'm').exec(rest)
  const body = next === null ? rest : rest.slice(0, next.index)
  return [...body.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }))
}

const only = (blocks: Block[], lang: string): string[] => blocks.filter((b) => b.lang === lang).map((b) => b.code)
const guide = readFileSync(join(root, 'plugins/README.md'), 'utf8')
const readme = readFileSync(join(root, 'README.md'), 'utf8')

const write = (path: string, text: string): void => {
  mkdirSync(join(project, path, '..'), { recursive: true })
  writeFileSync(join(project, path), text)
}

function node (args: string[]): { code: number | null, stdout: string, stderr: string } {
  const r = spawnSync(process.execPath, args, { cwd: project, encoding: 'utf8', timeout: 120_000 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** A `docsplit ...` line of a sh block, without its comment, run with the built CLI. */
function docsplit (line: string): { code: number | null, stdout: string, stderr: string } {
  const args = line.replace(/\s+#.*$/, '').trim().split(/\s+/)
  if (args[0] !== 'docsplit') throw new Error(`not a docsplit command: ${line}`)
  return node([bin, ...args.slice(1)])
}

const ini = '; global settings\nname = demo\n\n[server]\nhost = 127.0.0.1\nport = 8000\n\n; paths\n[paths]\nroot = /srv/data\nlogs = /var/log\n'

t.before(() => {
  if (!existsSync(bin)) throw new Error('dist/ is missing: run npm run build (npm test does it first)')
  write('package.json', JSON.stringify({ name: 'guide-reader', type: 'module' }))
  mkdirSync(join(project, 'node_modules'))
  symlinkSync(root, join(project, 'node_modules/docsplit'), 'dir')
  const [declare] = only(section(guide, '## 2. Declare, then run'), 'js')
  const [events] = only(section(guide, '## 3. Emit events that tile the text'), 'js')
  write('node_modules/docsplit-plugin-ini/package.json', readFileSync(join(root, 'test/fixtures/plugins/docsplit-plugin-ini/package.json'), 'utf8'))
  write('node_modules/docsplit-plugin-ini/index.js', `${declare!}\n${events!}`)
  write('app.ini', ini)
})

t.test('sections 2 and 3 make a plugin that passes section 4\'s conformance test', async (t) => {
  const [check] = only(section(guide, '## 4. Test it with the conformance kit'), 'js')
  write('check-ini.mjs', check!)
  const r = node(['check-ini.mjs'])
  t.equal(r.code, 0, r.stderr)
})

t.test('section 5 loads it, from the command line and from the library', async (t) => {
  const blocks = section(guide, '## 5. Load it')
  const lines = only(blocks, 'sh')[0]!.split('\n').filter((l) => l.startsWith('docsplit '))
  // ./my-plugin/index.js: the README's plugin, as a file of the project.
  write('my-plugin/index.js', only(section(readme, '## Writing a plugin'), 'js')[0]!)
  t.equal(lines.length, 2)
  for (const line of lines) {
    const r = docsplit(line)
    t.equal(r.code, 0, `${line}: ${r.stderr}`)
    const out = JSON.parse(r.stdout) as { document: { input_format: string }, chunks: Array<{ text: string }> }
    t.equal(out.document.input_format, 'ini')
    t.equal(out.chunks.map((c) => c.text).join(''), ini)
  }
  write('load.mjs', only(blocks, 'js')[0]!)
  const r = node(['load.mjs'])
  t.equal(r.code, 0, r.stderr)
  t.equal(r.stdout, "1 [ 'server' ]\n", 'what its comment says it prints')
  // A comment above a header belongs to that header's section, in the same chunk.
  const small = node([bin, 'split', 'app.ini', '--plugin', 'docsplit-plugin-ini', '--max-tokens', '12'])
  t.equal(small.code, 0, small.stderr)
  const chunks = (JSON.parse(small.stdout) as { chunks: Array<{ text: string, path: string[] }> }).chunks
  t.same(chunks.filter((c) => c.text.includes('; paths')).map((c) => [c.path, c.text.startsWith('; paths\n[paths]')]), [[['paths'], true]])
})

t.test('the README\'s plugin splits, reading its own option', async (t) => {
  const [line] = only(section(readme, '## Writing a plugin'), 'sh')[0]!.split('\n')
  t.equal(docsplit(line!).code, 0)
  write('readme-plugin/index.js', only(section(readme, '## Writing a plugin'), 'js')[0]!)
  const kinds = (extra: string[]): string[] => {
    const r = node([bin, 'split', 'app.ini', '--plugin', './readme-plugin/index.js', ...extra])
    t.equal(r.code, 0, r.stderr)
    return (JSON.parse(r.stdout) as { chunks: Array<{ kinds: string[] }> }).chunks.flatMap((c) => c.kinds)
  }
  t.ok(kinds([]).includes('comment'), 'comment lines by default')
  t.notOk(kinds(['--comment-prefixes', '!']).includes('comment'), 'none with another prefix')
})

t.test('"Splitters and tokenizers": the splitter splits, the tokenizer is available once its package is', async (t) => {
  write('more.js', only(section(guide, '## Splitters and tokenizers'), 'js')[0]!)
  const tokenizer = (): { available: boolean, extra: string } => {
    const r = node([bin, 'formats', '--json', '--plugin', './more.js'])
    t.equal(r.code, 0, r.stderr)
    return (JSON.parse(r.stdout) as { tokenizers: Array<{ name: string, available: boolean, extra: string }> }).tokenizers.find((x) => x.name === 'my-encoding')!
  }
  t.match(tokenizer(), { available: false, extra: 'my-bpe-package' }, 'without its package')
  write('node_modules/my-bpe-package/package.json', JSON.stringify({ name: 'my-bpe-package', type: 'module', main: 'index.js' }))
  write('node_modules/my-bpe-package/index.js', 'export const count = (text) => text.split(/\\s+/).filter(Boolean).length\n')
  t.match(tokenizer(), { available: true }, 'with it')
  const r = node([bin, 'split', 'app.ini', '--plugin', 'docsplit-plugin-ini', '--plugin', './more.js', '--splitter', 'my-splitter', '--tokenizer', 'my-model', '--max-tokens', '8'])
  t.equal(r.code, 0, r.stderr)
  const out = JSON.parse(r.stdout) as { metadata: { splitter: string, tokenizer: string }, chunks: Array<{ text: string, token_count: number }> }
  t.same([out.metadata.splitter, out.metadata.tokenizer], ['my-splitter', 'my-encoding'])
  t.equal(out.chunks.map((c) => c.text).join(''), ini)
  t.ok(out.chunks.length > 1 && out.chunks.every((c) => c.token_count <= 8))
  // And the kit, as section 4 holds a parser to it.
  write('check-more.mjs', `import { checkPacker, checkTokenizer } from 'docsplit/testing'
import ini from 'docsplit-plugin-ini'
import { register } from 'docsplit'
import plugins from './more.js'
const [splitter, tokenizer] = plugins
register(ini, splitter)
await checkTokenizer(tokenizer, ['host = 127.0.0.1'])
await checkPacker(splitter, [{ name: 'ini', input: ${JSON.stringify(ini)}, options: { input_format: 'ini' } }, { name: 'csv', input: 'a,b\\n1,2\\n3,4\\n', options: { input_format: 'csv' } }])
`)
  const kit = node(['check-more.mjs'])
  t.equal(kit.code, 0, kit.stderr)
})
