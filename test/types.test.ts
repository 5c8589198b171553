/**
 * The types as a TypeScript user meets them: a consumer's strict project, compiled against the
 * built declarations (dist/*.d.ts, which `npm test` builds first) through the package's exports.
 * The README's library example compiles as written; fields the responses carry are typed; a
 * misspelt option or chunk field does not compile (each `@ts-expect-error` fails the build when
 * its line compiles).
 */
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../', import.meta.url))
const built = existsSync(join(root, 'dist/index.d.ts'))
// The two consumers compile at once, a core each (tsc takes about 20 s a project here).
t.jobs = 2

/** tsc on a consumer project, in a child process that leaves the event loop free. */
function tsc (dir: string): Promise<{ status: number | null, output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir])
    let output = ''
    child.stdout.on('data', (data: Buffer) => { output += data.toString() })
    child.stderr.on('data', (data: Buffer) => { output += data.toString() })
    child.on('close', (status) => { resolve({ status, output }) })
  })
}

t.test('a strict consumer compiles against the package', { skip: built ? false : 'dist/ is not built: run npm run build (npm test does)' }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'docsplit-types-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(root, join(dir, 'node_modules/docsplit'))
  symlinkSync(join(root, 'node_modules/@types'), join(dir, 'node_modules/@types'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, include: ['*.ts'] }))
  writeFileSync(join(dir, 'readme.ts'), `import { split, splitStream } from 'docsplit'
declare const markdownText: string
// input_format (or a filename) says what the text is; "auto" reads a short text by its content.
const response = await split(markdownText, { input_format: 'markdown', max_tokens: 512, tokenizer: 'o200k_base' })
for (const chunk of response.chunks) console.log(chunk.path, chunk.token_count, chunk.char_start)
import { createReadStream } from 'node:fs'
const stream = splitStream(createReadStream('big.log'), { filename: 'big.log' })
for await (const chunk of stream) process.stdout.write(JSON.stringify(chunk) + '\\n')
const { document, metadata } = await stream.summary
void document; void metadata
`)
  writeFileSync(join(dir, 'fields.ts'), `import { split, splitStream, isDocsplitError, type Chunk, type SplitOptions, type SplitResponse } from 'docsplit'
import { checkParser } from 'docsplit/testing'
const r: SplitResponse = await split(new Uint8Array(0), { filename: 'book.xlsx', sheets: ['People'] })
const first: Chunk | undefined = r.chunks[0]
const sheet: string | undefined = first?.sheet
const rows: number | undefined = first?.row_start
const aware: unknown = r.metadata.syntax_aware
const start: number | undefined = first?.record_start
try { await split('x', { max_tokens: 1 }) } catch (e) { if (isDocsplitError(e)) { const code: string = e.code; void code } }
// the built-in plugins' options, with their types
await split('x', { delimiter: ';', header: false, log_start: '^\\d', record_element: 'item', code_parsing: 'syntax', header_row: 2, separate_sections: 2 })
// null is not given, as a JSON null is on the service: config read from JSON passes as it is
await split('x', { max_tokens: null, tokenizer: null, delimiter: null, header_row: null })
// @ts-expect-error: camelCase is not an option name
await split('x', { maxTokens: 5 })
// @ts-expect-error: a count is a number
await split('x', { max_tokens: '5' })
// @ts-expect-error: header_row is a number
await split('x', { header_row: 'two' })
await split(new Uint8Array(0), { encoding: 'utf-8', invalid_bytes: 'replace' })
// @ts-expect-error: invalid_bytes is error or replace
await split('x', { invalid_bytes: 'skip' })
// @ts-expect-error: code_parsing is auto, syntax or fallback
await split('x', { code_parsing: 'yes' })
// @ts-expect-error: no such chunk field
void first?.tokenCount
// an iterable yields strings or bytes: one of each is refused at run time, and does not compile
declare const mixed: AsyncIterable<string | Uint8Array>
// @ts-expect-error: strings and bytes in one iterable
await split(mixed)
declare const web: ReadableStream<Uint8Array>
await split(web)
await split(['# a', 'text'])
// an AbortSignal stops a split
await split('x', {}, { signal: AbortSignal.timeout(1000) })
void splitStream('x', {}, { signal: new AbortController().signal })
// options read from a form or a file are checked at run time
const fromFile: Record<string, unknown> = { max_tokens: 5 }
await split('x', fromFile as SplitOptions)
void sheet; void rows; void aware; void start; void checkParser
`)
  writeFileSync(join(dir, 'options.ts'), `import { definePlugin, split, Type, type OptionsOf, type ResolvedOptions } from 'docsplit'
// a plugin's options type its ctx.options, and its package adds them to split()'s
export const srt = definePlugin({
  kind: 'parser', name: 'srt', docsplit: '^1', formats: ['srt'], extensions: ['.srt'], reads: 'text', defaultSplitter: 'record',
  options: Type.Object({ srt_strict: Type.Optional(Type.Boolean()) }),
  create (ctx) {
    const strict: boolean | undefined = ctx.options.srt_strict
    const budget: number = ctx.options.max_tokens
    // @ts-expect-error: srt_strict is a boolean
    const wrong: string = ctx.options.srt_strict
    // @ts-expect-error: a slip in an option's name is an error, not an unknown always undefined
    const slip = ctx.options.srt_strcit
    const file: string | undefined = ctx.options.filename
    // and they still fit a helper that takes every option
    const all: ResolvedOptions = ctx.options
    void strict; void budget; void wrong; void slip; void file; void all
    return { write () {}, end () {} }
  },
})
// a base object shared by plugins, \`as const\` (readonly lists), spread under kind and reads
const base = { docsplit: '^1', formats: ['vtt'], extensions: ['.vtt'], defaultSplitter: 'record' } as const
export const vtt = definePlugin({
  ...base, name: 'vtt', kind: 'parser', reads: 'text',
  create (ctx) {
    const budget: number = ctx.options.max_tokens
    void budget
    return { write () {}, end () {} }
  },
})
declare module 'docsplit' {
  interface PluginOptions extends OptionsOf<typeof srt> {}
  interface ChunkFields { cue?: number }
}
const r = await split('x', { srt_strict: true })
const cue: number | undefined = r.chunks[0]?.cue
// @ts-expect-error: srt_strict is a boolean
await split('x', { srt_strict: 'yes' })
void cue
`)
  writeFileSync(join(dir, 'plugin.ts'), `import { definePlugin, type Plugin } from 'docsplit'
// write(piece) is a string for a text parser, bytes for a bytes parser, without annotations
export const text = definePlugin({
  kind: 'parser', name: 'my-text', docsplit: '^1', formats: ['my-text'], extensions: ['.mt'], reads: 'text', defaultSplitter: 'record',
  create (ctx) {
    let all = ''
    // ctx.fail takes the codes a parser may give, not the service's own
    // @ts-expect-error
    const limited = (): never => ctx.fail('DOCSPLIT_RATE_LIMITED', 'slow down')
    const invalid = (): never => ctx.fail('DOCSPLIT_PARSE_ERROR', 'line 1, column 1: unexpected character')
    void limited; void invalid
    return { write (piece) { all += piece.toUpperCase() === '' ? '' : piece }, end () { ctx.emit({ type: 'record', start: 0, end: all.length, text: all }) } }
  },
})
export const bytes = definePlugin({
  kind: 'parser', name: 'my-bytes', docsplit: '^1', formats: ['my-bytes'], extensions: ['.mb'], reads: 'bytes', defaultSplitter: 'record',
  create () {
    let n = 0
    return { write (piece) { n += piece.byteLength }, end () { void n } }
  },
})
// a generic helper passes a plugin through definePlugin
export function named<P extends Plugin> (plugin: P): P { return definePlugin(plugin) }
`)
  const compiled = await tsc(dir)
  t.equal(compiled.status, 0, `tsc: ${compiled.output}`)
  // CommonJS code requires the package (an ES module), as the README says.
  writeFileSync(join(dir, 'use.cjs'), "require('docsplit').split('# A\\n\\ntext\\n', { input_format: 'markdown' }).then((r) => console.log(r.chunks[0].path.join('/')))\n")
  const cjs = spawnSync(process.execPath, [join(dir, 'use.cjs')], { cwd: dir, encoding: 'utf8' })
  t.equal(cjs.stdout, 'A\n', `require('docsplit'): ${cjs.stderr}`)
})

t.test('a consumer without Node\'s types compiles against the package too', { skip: built ? false : 'dist/ is not built: run npm run build (npm test does)' }, async (t) => {
  // A browser-minded or strict project ("types": [], checking libraries): the declarations
  // that the entries reach must not need @types/node (they named NodeJS.ProcessEnv and Buffer).
  const dir = mkdtempSync(join(tmpdir(), 'docsplit-types-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(root, join(dir, 'node_modules/docsplit'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, types: [] }, include: ['*.ts'] }))
  writeFileSync(join(dir, 'use.ts'), `import { split, definePlugin } from 'docsplit'
import { checkParser } from 'docsplit/testing'
const r = await split('# Title', { max_tokens: 64 })
const n: number = r.chunk_count
void n; void definePlugin; void checkParser
`)
  const compiled = await tsc(dir)
  t.equal(compiled.status, 0, `tsc: ${compiled.output}`)
})
