/**
 * The package entry as a plugin author imports it: `Type` (TypeBox) comes from 'docsplit', in a
 * project that has docsplit installed as a `file:` dependency (npm links the folder, so
 * docsplit's own dependencies do not resolve from the project), at run time and in tsc.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Type, definePlugin, type Static } from '../index.js'

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..')
const bin = join(root, 'dist/cli/index.js')
const tsc = join(root, 'node_modules/typescript/bin/tsc')
const project = mkdtempSync(join(tmpdir(), 'docsplit-entry-'))
t.teardown(() => rmSync(project, { recursive: true, force: true }))

t.before(() => {
  if (!existsSync(join(root, 'dist/index.js'))) throw new Error('dist/ is missing: run npm run build (npm test does it first)')
  // What `npm install ../docsplit` makes: a link, and nothing of docsplit's dependencies.
  mkdirSync(join(project, 'node_modules'))
  symlinkSync(root, join(project, 'node_modules/docsplit'), 'dir')
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'my-plugin', type: 'module', dependencies: { docsplit: `file:${root}` } }))
})

const plugin = (lang: 'js' | 'ts'): string => `import { definePlugin, Type${lang === 'ts' ? ', type Static, type TObject' : ''} } from 'docsplit'

const options${lang === 'ts' ? ': TObject' : ''} = Type.Object({
  dialect: Type.Optional(Type.String({ enum: ['strict', 'loose'], description: 'lines: how to read them.' })),
})
${lang === 'ts' ? "export type Options = Static<typeof options>\nconst example: Options = { dialect: 'strict' }\nvoid example\n" : ''}
export default definePlugin({
  kind: 'parser',
  name: 'lines',
  docsplit: '^1',
  description: 'One block per line.',
  formats: ['lines'],
  extensions: ['.lines'],
  reads: 'text',
  defaultSplitter: 'sibling',
  options,
  create (ctx) {
    let offset = 0
    return {
      write (piece${lang === 'ts' ? ': string' : ''}) {
        if (piece.length === 0) return
        ctx.emit({ type: 'block', kind: 'line', start: offset, end: offset + piece.length, text: piece })
        offset += piece.length
      },
      end () {},
    }
  },
})
`

t.test('Type is exported by the entry, with its types', async (t) => {
  const options = Type.Object({ n: Type.Optional(Type.Integer({ minimum: 1 })) })
  const value: Static<typeof options> = { n: 2 }
  t.equal(value.n, 2)
  t.equal(options.type, 'object')
  t.equal(typeof definePlugin, 'function')
})

t.test('the built package exports Type where the project cannot resolve typebox itself', async (t) => {
  const r = spawnSync(process.execPath, ['-e', "import('docsplit').then((m) => console.log(typeof m.Type.Object, typeof m.definePlugin))"], { cwd: project, encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  t.equal(r.stdout, 'function function\n')
  const bare = spawnSync(process.execPath, ['-e', "import('typebox').then(() => console.log('found'), (e) => console.log(e.code))"], { cwd: project, encoding: 'utf8' })
  t.equal(bare.stdout, 'ERR_MODULE_NOT_FOUND\n', 'typebox itself is not there: the case the export is for')
})

t.test('a plugin written as the guide shows loads, and its options work from the command line', async (t) => {
  writeFileSync(join(project, 'plugin.js'), plugin('js'))
  writeFileSync(join(project, 'a.lines'), 'one\n')
  const run = (args: string[]): { status: number | null, stdout: string, stderr: string } => spawnSync(process.execPath, [bin, ...args, '--plugin', './plugin.js'], { cwd: project, encoding: 'utf8' })
  const ok = run(['split', 'a.lines', '--dialect', 'loose'])
  t.equal(ok.status, 0, ok.stderr)
  t.equal(JSON.parse(ok.stdout).document.input_format, 'lines')
  const bad = run(['split', 'a.lines', '--dialect', 'other'])
  t.equal(bad.status, 2, 'validated against the schema Type made')
  t.match(bad.stderr, /DOCSPLIT_INVALID_OPTION: dialect/)
})

t.test('a TypeScript plugin importing Type from docsplit type-checks', async (t) => {
  writeFileSync(join(project, 'plugin.ts'), plugin('ts'))
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: true, types: [] },
    files: ['plugin.ts'],
  }))
  const r = spawnSync(process.execPath, [tsc, '-p', project], { cwd: project, encoding: 'utf8' })
  t.equal(r.status, 0, r.stdout + r.stderr)
})
