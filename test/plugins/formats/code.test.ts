/**
 * The code parser: vendored grammars (checksums, all 17 load and parse), events per language
 * (tiling, balanced containers, labels, attachNext), parse errors, deep nesting, the fallback
 * with the extra made unavailable, real code read at run time (node_modules, Python's stdlib),
 * and, through `split`, the invariants plus "no boundary inside a declaration that fits",
 * checked against the tree-sitter tree and, for Python, against Python's own `ast`.
 */
import t, { type Test } from 'tap'
import fc from 'fast-check'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Node } from 'web-tree-sitter'
import { definePlugin, register, split, type DocEvent, type SplitResponse } from '../../../index.js'
import { listTokenizers, tokenizerByName } from '../../../core/registry.js'
import { DocsplitError } from '../../../core/errors.js'
import { invariantProblems, parserEvents } from '../../../testing.js'
import code, { setGrammarLoader } from '../../../plugins/formats/code/index.js'
import { grammarsFolder, loadGrammar } from '../../../plugins/formats/code/grammars.js'
import { DECORATIONS, LANGUAGES, languageByFormat, type LanguageSpec } from '../../../plugins/formats/code/languages.js'
import { emitSyntax, parseBudget } from '../../../plugins/formats/code/syntax.js'
import { assertTiles, collectEvents } from '../../helpers/events.js'

const fixtures = fileURLToPath(new URL('../../fixtures/code/', import.meta.url))
const EXT: Record<string, string> = {
  python: 'py', javascript: 'js', typescript: 'ts', tsx: 'tsx', bash: 'sh', c: 'c', cpp: 'cpp', csharp: 'cs', go: 'go',
  java: 'java', kotlin: 'kt', lua: 'lua', php: 'php', ruby: 'rb', rust: 'rs', swift: 'swift', zig: 'zig',
}
const fixture = (lang: string): string => readFileSync(join(fixtures, `sample.${EXT[lang]}`), 'utf8')

/** Labels each fixture must produce, outermost first where nested. */
const LABELS: Record<string, string[]> = {
  python: ['class Token', 'class Parser', 'def __init__(self)', 'def feed(self, data)', 'def empty()', 'def main(argv=None)'],
  javascript: ['export class Bus extends EventEmitter', 'constructor (limit = DEFAULT_LIMIT)', 'publish (topic, payload)', 'export function createBus ()', 'const double = (x) =>'],
  typescript: ['export interface Item<T>', 'export class Queue<T>', 'push (value: T): number', 'drain (handler: Handler<T>): void', 'export enum Level', 'export namespace Util', 'export function clamp (n: number, lo: number, hi: number): number', 'function log (msg: string): void'],
  tsx: ['interface Props', 'export function Counter ({ start }: Props)'],
  bash: ['copy_dir()', 'main()'],
  c: ['struct ring', 'static int ring_push(struct ring *r, int v)', 'int main(void)'],
  cpp: ['namespace geo', 'class Shape', 'class Square : public Shape', 'double area() const override', 'T sum(const std::vector<T>& xs)', 'int main()'],
  csharp: ['namespace Shop', 'public class Inventory', 'public void Add(string name, int n)'],
  go: ['type Stack', 'func (s *Stack) Push(v int)', 'func (s *Stack) Pop() (int, error)', 'func Describe(s *Stack) string'],
  java: ['public class WordCounter', 'public String toString()', 'public void add(String text)', 'enum Mode'],
  kotlin: ['class Greeter(private val name: String)', 'fun greet(times: Int): String', 'companion object', 'fun main()'],
  lua: ['function Vec.new(x, y)', 'function Vec:len()', 'local function add(a, b)'],
  php: ['class Cart', 'public function add(string $sku, int $qty): void', 'public function count(): int', 'function make_cart(): Cart'],
  ruby: ['module Library', 'class Book', 'def initialize(title)', 'def to_s', 'def self.catalog(titles)'],
  rust: ['pub struct Mat2', 'impl Mat2', 'pub fn identity() -> Self', 'pub fn mul(&self, o: &Mat2) -> Mat2', 'impl fmt::Display for Mat2', 'fn main()'],
  swift: ['struct Reading', 'protocol Sensor', 'final class FakeSensor: Sensor', 'func read() -> Reading'],
  zig: ['const Stack = struct', 'pub fn push(self: *Stack, v: u32) !void', 'pub fn main() !void'],
}

const info = (events: DocEvent[], key: string): unknown => {
  const e = events.find((x) => x.type === 'info' && x.key === key)
  return e?.type === 'info' ? e.value : undefined
}
const labels = (events: DocEvent[]): string[] => events.flatMap((e) => e.type === 'enter' ? [e.label] : [])
const blocks = (events: DocEvent[]): Array<Extract<DocEvent, { type: 'block' }>> => events.filter((e): e is Extract<DocEvent, { type: 'block' }> => e.type === 'block')

/** Checks that every enter/exit pair spans exactly the blocks between them. */
function assertContainers (events: DocEvent[]): void {
  const open: Array<{ start: number, first: number | null }> = []
  let last = 0
  for (const e of events) {
    if (e.type === 'enter') open.push({ start: e.start, first: null })
    else if (e.type === 'exit') {
      const o = open.pop()!
      if (o.first !== null && o.first !== o.start) throw new Error(`container at ${o.start} starts its first block at ${o.first}`)
      if (e.end !== last) throw new Error(`container exit at ${e.end}, last block ended at ${last}`)
    } else if (e.type === 'block') {
      for (const o of open) if (o.first === null) o.first = e.start
      last = e.end
    }
  }
}

/** Source files under `root` with one of `exts`, sorted, up to `limit` characters, each under `max`. */
function sourceFiles (root: string, exts: string[], limit: number, max = 200_000): string[] {
  const out: string[] = []
  let size = 0
  const walk = (dir: string): void => {
    let names: string[]
    try { names = readdirSync(dir).sort() } catch { return }
    for (const name of names) {
      if (size >= limit) return
      const full = join(dir, name)
      let st
      try { st = statSync(full) } catch { continue }
      if (st.isDirectory()) {
        if (!name.startsWith('.') && name !== 'test' && name !== 'tests') walk(full)
      } else if (exts.some((e) => name.endsWith(e)) && st.size > 0 && st.size < max) {
        out.push(full)
        size += st.size
      }
    }
  }
  walk(root)
  return out
}

const nodeModules = fileURLToPath(new URL('../../../node_modules/', import.meta.url))
const pythonLib = ['/usr/lib/python3.13', '/usr/lib/python3.12', '/usr/lib/python3.11', '/usr/lib/python3'].find((d) => existsSync(join(d, 'ast.py')))
let python3 = false
try { execFileSync('python3', ['-c', 'pass']); python3 = true } catch {}

// An exactly additive tokenizer (one token per UTF-16 unit), so "fits" is unambiguous.
const CHARS = 'code-test-chars'
if (!listTokenizers().some((p) => p.name === CHARS)) {
  register(definePlugin({ kind: 'tokenizer', name: CHARS, docsplit: '^1', load: () => ({ name: CHARS, cheap: true, count: (s: string) => s.length }) }))
}
const charCount = { name: CHARS, count: (s: string) => s.length }

t.test('vendored grammars match manifest.json and cover every language', async (t) => {
  const dir = grammarsFolder()
  t.ok(dir, 'grammars folder found')
  const manifest = JSON.parse(readFileSync(join(dir!, 'manifest.json'), 'utf8')) as { grammars: Array<{ grammar: string, file: string, package: string, version: string, sha256: string, bytes: number }> }
  t.equal(manifest.grammars.length, 17)
  for (const g of manifest.grammars) {
    const bytes = readFileSync(join(dir!, g.file))
    t.equal(createHash('sha256').update(bytes).digest('hex'), g.sha256, `${g.file} sha256 (${g.package}@${g.version})`)
    t.equal(bytes.length, g.bytes, `${g.file} size`)
  }
  const wasm = readdirSync(dir!).filter((f) => f.endsWith('.wasm')).sort()
  t.same(wasm, manifest.grammars.map((g) => g.file).sort(), 'no unlisted .wasm files')
  t.same(LANGUAGES.map((l) => `${l.grammar}.wasm`).sort(), manifest.grammars.map((g) => g.file).sort(), 'one grammar per language')
})

t.test('all 17 grammars load and parse their fixture without errors', async (t) => {
  for (const spec of LANGUAGES) {
    const g = await loadGrammar(spec.grammar)
    t.ok(g, `${spec.name} loads`)
    if (g === null) continue
    const p = g.newParser()
    const tree = p.parse(fixture(spec.name))!
    t.notOk(tree.rootNode.hasError, `${spec.name} fixture parses cleanly`)
    tree.delete()
    p.delete()
  }
})

t.test('plugin shape: formats, extensions, options', async (t) => {
  t.equal(code.name, 'code')
  t.equal(code.extra, 'code-parsing')
  t.equal(code.defaultSplitter, 'sibling')
  for (const l of Object.keys(EXT)) t.ok(code.formats.includes(l), `format ${l}`)
  for (const e of ['.py', '.pyi', '.js', '.mjs', '.cjs', '.jsx', '.ts', '.mts', '.cts', '.tsx', '.sh', '.bash', '.c', '.h', '.cpp', '.cc', '.cxx', '.hpp', '.hh', '.cs', '.go', '.java', '.kt', '.kts', '.lua', '.php', '.rb', '.rs', '.swift', '.zig']) {
    t.ok(code.extensions.includes(e), `extension ${e}`)
  }
  t.equal(code.extensionFormats?.['.rs'], 'rust')
  t.equal(code.extensionFormats?.['.tsx'], 'tsx')
  t.equal(code.detect?.('#!/usr/bin/env bash\necho hi\n'), 0.9)
  t.equal(code.detect?.('# Title\n\nSome prose.\n'), 0)
})

for (const spec of LANGUAGES) {
  t.test(`${spec.name}: fixture events tile, nest and label`, async (t) => {
    const src = fixture(spec.name)
    const events = await collectEvents(code, src, { input_format: spec.name, max_tokens: 8 })
    assertTiles(events, src)
    assertContainers(events)
    t.equal(info(events, 'syntax_aware'), true)
    t.equal(info(events, 'language'), spec.name)
    const got = labels(events)
    for (const l of LABELS[spec.name] ?? []) t.ok(got.includes(l), `label ${JSON.stringify(l)}`)
    for (const b of blocks(events)) t.equal(b.cut, 'lines')
    // Pieces of any size give the same events.
    t.same(await collectEvents(code, src, { input_format: spec.name, max_tokens: 8 }, 7), events, 'same events from 7-character pieces')
  })
}

t.test('python: nesting, docstrings, decorators and comments', async (t) => {
  const src = fixture('python')
  const events = await collectEvents(code, src, { input_format: 'python', max_tokens: 8 })
  const path: string[] = []
  const paths = new Map<string, string[]>()
  for (const e of events) {
    if (e.type === 'enter') { path.push(e.label); paths.set(e.label, [...path]) } else if (e.type === 'exit') path.pop()
  }
  t.same(paths.get('def feed(self, data)'), ['class Parser', 'def feed(self, data)'])
  t.same(paths.get('def empty()'), ['class Parser', 'def empty()'])
  const feed = events.findIndex((e) => e.type === 'enter' && e.label === 'def feed(self, data)')
  const comment = events[feed + 1]
  t.match(comment, { type: 'block', kind: 'comment', attachNext: true, text: /^ {4}# Append data/ }, 'the comment above a method is inside it, attached, with its indentation')
  t.match(events[feed + 2], { type: 'block', kind: 'signature', attachNext: true, text: /^ {4}def feed/ })
  t.match(events.find((e) => e.type === 'enter' && e.label === 'def feed(self, data)'), { kind: 'method' })
  t.match(events.find((e) => e.type === 'enter' && e.label === 'def main(argv=None)'), { kind: 'function' })
  t.match(blocks(events).find((b) => b.kind === 'docstring'), { attachNext: true, text: /^"""A small tokenizer/ })
  const token = blocks(events).find((b) => b.text.startsWith('@dataclass'))
  t.match(token, { kind: 'signature', attachNext: true }, 'decorators open the signature')
  t.ok(blocks(events).some((b) => b.text.startsWith('TOKEN = re.compile') && b.text.includes('# one token')), 'a same-line comment stays with its statement')
})

t.test('containers that certainly fit are one block (their members are not walked)', async (t) => {
  const src = fixture('python')
  const events = await collectEvents(code, src, { input_format: 'python', max_tokens: 512 })
  assertTiles(events, src)
  assertContainers(events)
  const i = events.findIndex((e) => e.type === 'enter' && e.label === 'class Parser')
  t.match(events[i + 1], { type: 'block', kind: 'class', text: /^class Parser:[^]*return Parser\(\)\n/ })
  t.match(events[i + 2], { type: 'exit' })
  t.notOk(labels(events).includes('def feed(self, data)'))
  // The budget is what is left after the overlap; multi-byte text counts in bytes.
  const wide = 'def f():\n    return "' + 'é'.repeat(200) + '"\n'
  const open = await collectEvents(code, wide, { input_format: 'python', max_tokens: 300 })
  t.ok(blocks(open).some((b) => b.kind === 'signature'), '410 bytes in 224 characters do not certainly fit 300')
  const closed = await collectEvents(code, wide, { input_format: 'python', max_tokens: 500, overlap_tokens: 50 })
  t.notOk(blocks(closed).some((b) => b.kind === 'signature'), '410 bytes fit 500 - 50')
})

t.test('rust: doc comments and attributes stay with their item', async (t) => {
  const events = await collectEvents(code, fixture('rust'), { input_format: 'rust', max_tokens: 8 })
  const i = events.findIndex((e) => e.type === 'enter' && e.label === 'pub struct Mat2')
  t.match(events[i + 1], { kind: 'comment', attachNext: true, text: /^\/\/\/ A 2x2/ })
  t.match(events[i + 2], { kind: 'decorator', attachNext: true, text: /^#\[derive/ })
  t.match(blocks(events)[0], { kind: 'comment', text: /^\/\/! A matrix/ }, 'an inner doc comment is not pulled into the next item')
})

t.test('language: by format, alias, file name, shebang', async (t) => {
  const sh = fixture('bash')
  // A format given is the language, whatever the text's shebang says.
  t.equal(info(await collectEvents(code, sh, { input_format: 'python' }), 'language'), 'python')
  t.equal(info(await collectEvents(code, sh, { input_format: 'py' }), 'language'), 'python', 'an alias too')
  // `auto` reads the shebang (formatOf), with or without a file name that has no extension.
  for (const filename of [undefined, 'deploy']) {
    const r = await split(sh, filename === undefined ? {} : { filename })
    t.equal(r.document.input_format, 'bash', `auto, file name ${String(filename)}: the format`)
    t.equal(r.document.info.language, 'bash', 'and the language')
  }
  t.equal(info(await collectEvents(code, sh, { input_format: 'python', filename: 'x.py' }), 'language'), 'python')
  t.equal(info(await collectEvents(code, 'x = 1\n', { input_format: 'auto', filename: 'a.kts' }), 'language'), 'kotlin')
  const unknown = await collectEvents(code, 'x = 1\n', { input_format: 'auto' })
  t.equal(info(unknown, 'language'), 'unknown')
  t.equal(info(unknown, 'syntax_aware'), false)
  const failure = await collectEvents(code, 'x = 1\n', { input_format: 'auto', code_parsing: 'syntax' }).then(() => null, (e: unknown) => e)
  t.match(failure, { code: 'DOCSPLIT_UNSUPPORTED_FORMAT' })
})

t.test('CRLF line endings', async (t) => {
  for (const lang of ['python', 'java', 'ruby']) {
    const src = fixture(lang).replace(/\n/g, '\r\n')
    const events = await collectEvents(code, src, { input_format: lang, max_tokens: 8 })
    assertTiles(events, src)
    assertContainers(events)
    t.same(labels(events), labels(await collectEvents(code, fixture(lang), { input_format: lang, max_tokens: 8 })), `${lang}: same labels as with LF`)
    const fb = await collectEvents(code, src, { input_format: lang, code_parsing: 'fallback' })
    t.same(blocks(fb).length, blocks(await collectEvents(code, fixture(lang), { input_format: lang, code_parsing: 'fallback' })).length, `${lang}: same fallback blocks as with LF`)
  }
})

t.test('empty and whitespace-only input', async (t) => {
  t.same(blocks(await collectEvents(code, '', { input_format: 'python' })), [])
  const ws = ' \n\n\t\n'
  const events = await collectEvents(code, ws, { input_format: 'go' })
  assertTiles(events, ws)
})

t.test('parse errors do not fail the split: tiling holds', async (t) => {
  const rand = fc.sample(fc.tuple(fc.nat(), fc.constantFrom('}', '{', ')', '(((', '"', "'", '/*', 'def ', 'class {', '\n\tend\n', '<?php', '`', '\u00e9\ud83d\ude00')), { numRuns: 6, seed: 42 })
  for (const spec of LANGUAGES) {
    const src = fixture(spec.name)
    for (const [n, junk] of rand) {
      const at = n % (src.length + 1)
      for (const broken of [src.slice(0, at), src.slice(0, at) + junk + src.slice(at)]) {
        const events = await collectEvents(code, broken, { input_format: spec.name, max_tokens: 8 })
        assertTiles(events, broken)
        assertContainers(events)
        t.equal(info(events, 'syntax_aware'), true)
      }
    }
  }
  const garbage = '}}}{{{ class def fn ((( \n\n ;;; end end \n'
  const events = await collectEvents(code, garbage, { input_format: 'javascript' })
  assertTiles(events, garbage)
  t.ok(blocks(events).length > 0)
})

t.test('random code-like text tiles (property, syntax-aware and fallback)', async (t) => {
  const piece = fc.constantFrom('def f(x):\n', '    return x\n', 'class A:\n', '  ', '\n', '\n\n', 'function g() {', '}', '{', '(', ')', ' x = 1;', '"s', "'", '/* c */', '// c\n', '# c\n',
    'if (a) {\n', '} else {\n', 'fn main() {\n', 'end\n', '@dec\n', 'é😀', '\t', 'int main(void)\n{\n', 'struct S {\n', '`t', '"""doc\n')
  const doc = fc.array(piece, { maxLength: 60 }).map((p) => p.join(''))
  for (const lang of ['python', 'javascript', 'c', 'ruby', 'rust']) {
    for (const mode of ['auto', 'fallback']) {
      await fc.assert(fc.asyncProperty(doc, async (src) => {
        const events = await collectEvents(code, src, { input_format: lang, code_parsing: mode, max_tokens: 8 })
        assertTiles(events, src)
        assertContainers(events)
        if (info(events, 'syntax_aware') !== (mode === 'auto')) throw new Error(`syntax_aware should be ${mode === 'auto'}`)
      }), { numRuns: 60, seed: 7 })
    }
  }
  t.pass('properties held')
})

t.test('deep nesting does not grow the stack', async (t) => {
  const depth = 3000
  const js = 'function f() {\n'.repeat(depth) + 'x()\n' + '}\n'.repeat(depth)
  const events = await collectEvents(code, js, { input_format: 'javascript', max_tokens: 8 })
  assertTiles(events, js)
  assertContainers(events)
  t.ok(labels(events).length >= 1000, `${labels(events).length} nested containers`)
  let py = ''
  for (let i = 0; i < 300; i++) py += ' '.repeat(i) + `def f${i}():\n`
  py += ' '.repeat(300) + 'pass\n'
  const pyEvents = await collectEvents(code, py, { input_format: 'python', max_tokens: 8 })
  assertTiles(pyEvents, py)
  assertContainers(pyEvents)
})

t.test('nesting on one line: each label reads a bounded part of the line', async (t) => {
  // 10,000 blocks on one 20 KB line: labels were read from the whole line, with a regular
  // expression that backtracks on a run of `{`; this took 75 s.
  const depth = 10_000
  const js = 'function f(){' + '{'.repeat(depth) + '}'.repeat(depth) + '}'
  const events = await collectEvents(code, js, { input_format: 'javascript', max_tokens: 64 })
  assertTiles(events, js)
  const found = labels(events)
  t.ok(found.length >= 1000, `${found.length} nested containers`)
  for (const label of found) t.ok(label.length <= 160, `label of ${label.length} characters`)
})

t.test('real code read at run time: node_modules and the Python stdlib', async (t) => {
  const sets: Array<[string, string[]]> = [
    ['javascript', [...sourceFiles(join(nodeModules, 'semver'), ['.js'], 150_000), ...sourceFiles(join(nodeModules, 'yaml/dist'), ['.js'], 250_000)]],
    ['typescript', [...sourceFiles(join(nodeModules, 'ajv/lib'), ['.ts'], 250_000), ...sourceFiles(join(nodeModules, 'gpt-tokenizer/src'), ['.ts'], 100_000)]],
    ['typescript', sourceFiles(join(nodeModules, '@types/node'), ['.d.ts'], 300_000)],
    ['python', pythonLib === undefined ? [] : sourceFiles(pythonLib, ['.py'], 600_000).filter((f) => !/bad|lib2to3|test/.test(f))],
  ]
  for (const [lang, files] of sets) {
    if (files.length === 0) { t.comment(`no ${lang} files found here; skipped`); continue }
    t.comment(`${lang}: ${files.length} files`)
    let containers = 0
    for (const f of files) {
      const src = readFileSync(f, 'utf8')
      const events = await collectEvents(code, src, { input_format: lang, max_tokens: 64 })
      try {
        assertTiles(events, src)
        assertContainers(events)
      } catch (e) {
        t.fail(`${f}: ${(e as Error).message}`)
      }
      const odd = labels(events).filter((l) => l === '' || /[\r\n]/.test(l) || l.length > 160 || l !== l.trim())
      if (odd.length > 0) t.fail(`${f}: labels not one trimmed line: ${JSON.stringify(odd.slice(0, 3))}`)
      containers += labels(events).length
    }
    t.ok(containers > files.length, `${lang}: ${files.length} files, ${containers} containers`)
  }
})

t.test('fallback: extra unavailable', async (t) => {
  setGrammarLoader(async () => null)
  t.teardown(() => setGrammarLoader())
  const src = fixture('python')
  const events = await collectEvents(code, src, { input_format: 'python' })
  assertTiles(events, src)
  t.equal(info(events, 'syntax_aware'), false)
  t.equal(info(events, 'language'), 'python')
  t.same(labels(events), [], 'no containers without a parser')
  // Blocks start at lines with no indentation after a blank line.
  for (const b of blocks(events).slice(1)) {
    t.match(src.slice(b.start - 2, b.start), /\n\n$/, `block at ${b.start} follows a blank line`)
    t.match(src[b.start], /\S/)
  }
  t.ok(blocks(events).some((b) => b.text.startsWith('class Parser:') && b.text.includes('return Parser()')), 'a class stays one block')
  const failure = await collectEvents(code, src, { input_format: 'python', code_parsing: 'syntax' }).then(() => null, (e: unknown) => e)
  t.ok(failure instanceof DocsplitError, 'code_parsing "syntax" fails without the extra')
  t.match(failure, { code: 'DOCSPLIT_EXTRA_UNAVAILABLE', message: 'syntax-aware code splitting needs the code-parsing extra: npm install web-tree-sitter' })
  // A loader that throws is the same as a missing one.
  setGrammarLoader(async () => { throw new Error('boom') })
  t.equal(info(await collectEvents(code, src, { input_format: 'python' }), 'syntax_aware'), false)
})

t.test('fallback: brackets, strings and comments', async (t) => {
  const js = 'const a = {\n  x: 1,\n\n  y: `\n\nz`,\n}\n\n/* one\n\nblock */\n// about f\nfunction f () {\n\n  return "}"\n}\n\nf()\n'
  const events = await collectEvents(code, js, { input_format: 'javascript', code_parsing: 'fallback' })
  assertTiles(events, js)
  t.equal(info(events, 'syntax_aware'), false)
  t.same(blocks(events).map((b) => [b.kind, b.text.split('\n')[0], b.attachNext === true]), [
    ['code', 'const a = {', false],
    ['code', '  y: `', false],
    ['code', '/* one', false],
    ['code', '  return "}"', false],
    ['code', 'f()', false],
  ], 'no cut inside template strings or block comments, nor deeper than one level of brackets')
  // A cut one level deep is inside a container around its top-level block: those cut first.
  t.same(events.filter((e) => e.type === 'enter' || e.type === 'exit').map((e) => e.type === 'enter' ? js.slice(e.start).split('\n')[0] : 'exit'), ['const a = {', 'exit', '/* one', 'exit'])
  const doc = '# About main.\n# More.\n\nmain()\n'
  t.same(blocks(await collectEvents(code, doc, { input_format: 'python', code_parsing: 'fallback' })).map((b) => [b.kind, b.attachNext === true]), [['comment', true], ['code', false]])
  const sh = 'x=${#arr[@]}\nif [ $# -gt 0 ]; then {\n\necho\n}\nfi\n\ny=2\n'
  const shEvents = await collectEvents(code, sh, { input_format: 'bash', code_parsing: 'fallback' })
  assertTiles(shEvents, sh)
  t.same(blocks(shEvents).map((b) => b.text.split('\n')[0]), ['x=${#arr[@]}', 'echo', 'y=2'], '`${#` and `$#` are not comments')
})

// Offsets (UTF-16) where one chunk ends and the next starts.
function boundaries (r: SplitResponse): number[] {
  const out: number[] = []
  let pos = 0
  for (const c of r.chunks.slice(0, -1)) { pos += c.text.length; out.push(pos) }
  return out
}

/** Declarations in the tree whose surroundings fit the budget: no boundary may fall inside them. */
function fittingDeclarations (root: Node, spec: LanguageSpec, text: string, max: number): Array<[number, number]> {
  const decl = new Set(Object.keys(spec.declarations))
  const wrap = new Set([...Object.keys(spec.wrappers ?? {}), 'variable_declarator'])
  const out: Array<[number, number]> = []
  const cursor = root.walk()
  const hiOf = (n: Node): number => {
    for (let x: Node | null = n; x !== null && x.id !== root.id; x = x.parent) {
      const next = x.nextNamedSibling
      if (next !== null) return next.startIndex
    }
    return text.length
  }
  // What is glued before a node: comments, decorators and docstrings (attachNext) and, for the
  // first member of a body, the signature of its container (attachNext), and so on outwards.
  const glued = (n: Node): boolean => n.type.includes('comment') || DECORATIONS.has(n.type) ||
    (n.type === 'expression_statement' && n.namedChildCount === 1 && n.namedChild(0)?.type === 'string')
  const lists = new Set(spec.bodies)
  const loOf = (n: Node): number => {
    for (let x: Node | null = n; x !== null && x.id !== root.id; x = x.parent) {
      const inList = x.parent === null || x.parent.id === root.id || lists.has(x.parent.type)
      if (!inList) continue
      let prev = x.previousNamedSibling
      while (prev !== null && glued(prev)) prev = prev.previousNamedSibling
      if (prev !== null) return prev.endIndex
    }
    return 0
  }
  let more = true
  while (more) {
    if (decl.has(cursor.nodeType)) {
      let n = cursor.currentNode
      while (n.parent !== null && wrap.has(n.parent.type)) n = n.parent
      // Declarations are items of a list (the file, a body); a function passed as an argument is not.
      const inList = n.parent === null || n.parent.id === root.id || lists.has(n.parent.type)
      if (inList && hiOf(n) - loOf(n) <= max) out.push([n.startIndex, n.endIndex])
    }
    if (cursor.gotoFirstChild()) continue
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent()) { more = false; break }
    }
  }
  cursor.delete()
  return out
}

/** Python statements from `ast`: [start, end, lo, hi] as UTF-8 byte offsets (lo..hi: with surroundings). */
const AST_SCRIPT = `
import ast, json, re, sys
src = sys.stdin.buffer.read()
lines = [0] + [m.end() for m in re.finditer(b'\\n', src)]
off = lambda l, c: lines[l - 1] + c
def start(s):
    a = off(s.lineno, s.col_offset)
    for d in getattr(s, 'decorator_list', None) or []:
        a = min(a, off(d.lineno, d.col_offset) - 1)
    return a
out = []
def walk(stmts, lo, hi):
    for i, s in enumerate(stmts):
        a, b = start(s), off(s.end_lineno, s.end_col_offset)
        glued = i == 0 or (i == 1 and isinstance(stmts[0], ast.Expr) and isinstance(stmts[0].value, ast.Constant) and isinstance(stmts[0].value.value, str))
        plo = lo if glued else off(stmts[i - 1].end_lineno, stmts[i - 1].end_col_offset)
        phi = start(stmts[i + 1]) if i + 1 < len(stmts) else hi
        out.append([a, b, plo, phi])
        bodies = [getattr(s, k, None) for k in ('body', 'orelse', 'finalbody')]
        bodies += [h.body for h in getattr(s, 'handlers', None) or []] + [c.body for c in getattr(s, 'cases', None) or []]
        for body in bodies:
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                walk(body, plo, phi)
walk(ast.parse(src).body, 0, len(src))
print(json.dumps(out))
`

function byteToU16 (text: string): (byte: number) => number {
  const map = new Map<number, number>()
  let b = 0
  for (let i = 0; i < text.length; i++) {
    map.set(b, i)
    const c = text.codePointAt(i)!
    b += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4
    if (c >= 0x10000) i++
  }
  map.set(b, text.length)
  return (byte) => map.get(byte) ?? -1
}

t.test('split: lossless, budget, no boundary inside a declaration that fits (tree-sitter)', async (t) => {
  const docs: Array<[string, string, string]> = LANGUAGES.map((l) => [l.name, `sample.${EXT[l.name]}`, fixture(l.name)])
  for (const f of sourceFiles(join(nodeModules, 'semver'), ['.js'], 80_000)) docs.push(['javascript', f, readFileSync(f, 'utf8')])
  for (const f of sourceFiles(join(nodeModules, 'ajv/lib/compile'), ['.ts'], 80_000)) docs.push(['typescript', f, readFileSync(f, 'utf8')])
  for (const f of sourceFiles(join(nodeModules, '@types/node'), ['.d.ts'], 60_000)) docs.push(['typescript', f, readFileSync(f, 'utf8')])
  let checked = 0
  for (const [lang, name, src] of docs) {
    const spec = languageByFormat(lang)!
    const g = (await loadGrammar(spec.grammar))!
    const parser = g.newParser()
    const tree = parser.parse(src)!
    for (const max of [120, 400, 1500]) {
      const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: CHARS })
      t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${name} @${max}: invariants`)
      t.equal(r.metadata.syntax_aware, true)
      const cuts = boundaries(r)
      const bad: string[] = []
      for (const [a, b] of fittingDeclarations(tree.rootNode, spec, src, max)) {
        checked++
        for (const c of cuts) if (c > a && c < b) bad.push(`boundary ${c} inside declaration ${a}-${b} (${JSON.stringify(src.slice(a, a + 30))})`)
      }
      t.same(bad.slice(0, 5), [], `${name} @${max}: fitting declarations are whole`)
    }
    tree.delete()
    parser.delete()
  }
  t.ok(checked > 100, `${checked} declaration checks`)
})

t.test('split (python): every boundary is a statement boundary unless the statement is over budget (ast)', { skip: python3 ? false : 'python3 not found' }, async (t) => {
  const files: Array<[string, string]> = [['sample.py', fixture('python')]]
  if (pythonLib !== undefined) {
    for (const name of ['textwrap.py', 'shlex.py', 'fnmatch.py', 'json/decoder.py', 'dataclasses.py']) {
      const f = join(pythonLib, name)
      if (existsSync(f)) files.push([name, readFileSync(f, 'utf8')])
    }
  }
  let statements = 0
  for (const [name, src] of files) {
    const stmts = JSON.parse(execFileSync('python3', ['-c', AST_SCRIPT], { input: src, maxBuffer: 1 << 26 }).toString()) as number[][]
    const u16 = byteToU16(src)
    const spans = stmts.map((s) => s.map(u16) as [number, number, number, number])
    t.notOk(spans.some((s) => s.includes(-1)), `${name}: statement offsets map to characters`)
    statements += spans.length
    for (const max of [200, 800, 3000]) {
      const r = await split(src, { input_format: 'python', max_tokens: max, tokenizer: CHARS })
      t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${name} @${max}: invariants`)
      const bad: string[] = []
      for (const c of boundaries(r)) {
        for (const [a, b, lo, hi] of spans) {
          if (c > a && c < b && hi - lo <= max) bad.push(`boundary ${c} inside a statement that fits (${a}-${b}: ${JSON.stringify(src.slice(a, a + 30))})`)
        }
      }
      t.same(bad.slice(0, 5), [], `${name} @${max}: boundaries fall between statements`)
    }
  }
  t.ok(statements > 500, `${statements} statements checked`)
})

t.test('split: formats by name, by extension, by shebang; options', async (t) => {
  const rs = fixture('rust')
  const byExt = await split(rs, { filename: 'lib.rs', max_tokens: 64, tokenizer: CHARS })
  t.equal(byExt.document.input_format, 'rust')
  t.equal(byExt.document.info.language, 'rust')
  const chunk = byExt.chunks.find((c) => c.text.includes('Matrix product'))
  t.ok(chunk !== undefined && chunk.path.includes('impl Mat2'), 'path names the impl')
  const sh = fixture('bash')
  const sniffed = await split(sh, { max_tokens: 64, tokenizer: CHARS })
  t.equal(sniffed.document.info.language, 'bash', 'a shebang names the language')
  t.equal(sniffed.metadata.syntax_aware, true)
  const fb = await split(fixture('go'), { input_format: 'go', max_tokens: 64, tokenizer: CHARS, code_parsing: 'fallback' })
  t.equal(fb.metadata.syntax_aware, false)
  t.same(invariantProblems(fb, fixture('go'), { tokenizer: charCount }), [])
  await t.rejects(split('x = 1\n', { input_format: 'python', code_parsing: 'sometimes' }), { code: 'DOCSPLIT_INVALID_OPTION' })
})

t.test('a bare TypeScript namespace and a Go struct or interface are containers', async (t) => {
  const ts = 'namespace Geometry {\n' + Array.from({ length: 30 }, (_, i) => `  export const v${i} = ${i} * 2\n`).join('') + '}\n'
  const r = await split(ts, { input_format: 'typescript', max_tokens: 48 })
  t.ok(r.chunks.length > 1 && r.chunks.every((c) => c.path[0] === 'namespace Geometry'), r.chunks.map((c) => JSON.stringify(c.path)).join(' '))
  const go = 'package main\n\ntype Reader interface {\n' + Array.from({ length: 30 }, (_, i) => `\tRead${i}(p []byte) (n int, err error)\n`).join('') + '}\n'
  const g = await split(go, { input_format: 'go', max_tokens: 48 })
  t.ok(g.chunks.slice(1).every((c) => c.path[0] === 'type Reader'), g.chunks.map((c) => JSON.stringify(c.path)).join(' '))
})

/**
 * A switch (match, when, case) in each language: a function around it, then `n` cases of
 * `lines[i]` statements each. `cases` are the offsets of each case's label and the end of its
 * last statement, and the label each case gets.
 */
interface SwitchDoc { src: string, cases: Array<{ start: number, end: number, label: string }> }
interface SwitchSyntax { head: string, label: (i: number) => string, open?: string, stmt: (i: number, j: number) => string, close?: string, tail: string, indent: string, labelOf: (i: number) => string }
const C_SWITCH = (head: string, tail: string, stmt = (i: number, j: number) => `x += input[${j}] * ${i};`): SwitchSyntax =>
  ({ head, label: (i) => `case ${i}:`, stmt, close: 'break;', tail, indent: '      ', labelOf: (i) => `case ${i}` })
const SWITCHES: Record<string, SwitchSyntax> = {
  typescript: C_SWITCH('export function step (s: number, input: number[]): number {\n  let x = 0\n  switch (s) {\n', '  }\n  return x\n}\n'),
  javascript: C_SWITCH('function step (s, input) {\n  let x = 0\n  switch (s) {\n', '  }\n  return x\n}\n'),
  tsx: C_SWITCH('export function step (s: number, input: number[]): number {\n  let x = 0\n  switch (s) {\n', '  }\n  return x\n}\n'),
  c: C_SWITCH('int step(int s, int *input) {\n  int x = 0;\n  switch (s) {\n', '  }\n  return x;\n}\n'),
  cpp: C_SWITCH('int step(int s, int *input) {\n  int x = 0;\n  switch (s) {\n', '  }\n  return x;\n}\n'),
  java: C_SWITCH('class M {\n  int step(int s, int[] input) {\n    int x = 0;\n    switch (s) {\n', '    }\n    return x;\n  }\n}\n'),
  csharp: C_SWITCH('class M {\n  int Step(int s, int[] input) {\n    int x = 0;\n    switch (s) {\n', '    }\n    return x;\n  }\n}\n'),
  php: C_SWITCH('<?php\nfunction step($s, $input) {\n  $x = 0;\n  switch ($s) {\n', '  }\n  return $x;\n}\n', (i, j) => `$x += $input[${j}] * ${i};`),
  go: { ...C_SWITCH('package main\n\nfunc step(s int, input []int) int {\n\tx := 0\n\tswitch s {\n', '\t}\n\treturn x\n}\n', (i, j) => `x += input[${j}] * ${i}`), close: undefined, indent: '\t\t' },
  swift: { ...C_SWITCH('func step(s: Int, input: [Int]) -> Int {\n    var x = 0\n    switch s {\n', '    }\n    return x\n}\n', (i, j) => `x += input[${j}] * ${i}`), close: undefined },
  rust: { head: 'fn step(s: u32, input: &[u32]) -> u32 {\n    let mut x = 0;\n    match s {\n', label: (i) => `${i} => {`, stmt: (i, j) => `x += input[${j}] * ${i};`, close: '}', tail: '        _ => {}\n    }\n    x\n}\n', indent: '            ', labelOf: (i) => `${i} =>` },
  kotlin: { head: 'fun step(s: Int, input: IntArray): Int {\n    var x = 0\n    when (s) {\n', label: (i) => `${i} -> {`, stmt: (i, j) => `x += input[${j}] * ${i}`, close: '}', tail: '    }\n    return x\n}\n', indent: '            ', labelOf: (i) => `${i} ->` },
  zig: { head: 'fn step(s: u32, input: []const u32) u32 {\n    var x: u32 = 0;\n    switch (s) {\n', label: (i) => `${i} => {`, stmt: (i, j) => `x += input[${j}] * ${i};`, close: '},', tail: '        else => {},\n    }\n    return x;\n}\n', indent: '            ', labelOf: (i) => `${i} =>` },
  ruby: { head: 'def step(s, input)\n  x = 0\n  case s\n', label: (i) => `when ${i}`, stmt: (i, j) => `x += input[${j}] * ${i}`, tail: '  end\n  x\nend\n', indent: '    ', labelOf: (i) => `when ${i}` },
  bash: { head: 'step() {\n  case "$1" in\n', label: (i) => `${i})`, stmt: (i, j) => `x=$((x + $2 * ${i} + ${j}))`, close: ';;', tail: '  esac\n}\n', indent: '      ', labelOf: (i) => `${i})` },
  python: { head: 'def step(s, input):\n    x = 0\n    match s:\n', label: (i) => `case ${i}:`, stmt: (i, j) => `x += input[${j}] * ${i}`, tail: '    return x\n', indent: '            ', labelOf: (i) => `case ${i}` },
}

function switchDoc (lang: string, lines: number[]): SwitchDoc {
  const s = SWITCHES[lang]!
  const caseIndent = s.indent.slice(0, s.indent.length - (s.indent.startsWith('\t') ? 1 : s.indent.length > 6 ? 4 : 2))
  let src = s.head
  const cases: SwitchDoc['cases'] = []
  lines.forEach((n, i) => {
    src += caseIndent
    const start = src.length
    src += s.label(i) + '\n'
    for (let j = 0; j < n; j++) src += s.indent + s.stmt(i, j) + '\n'
    if (s.close !== undefined && n > 0) src += (s.close.startsWith('}') ? caseIndent : s.indent) + s.close + '\n'
    cases.push({ start, end: src.length - 1, label: s.labelOf(i) })
  })
  return { src: src + s.tail, cases }
}

/** Asserts that the language's grammar parses `src` without an error node. */
async function parsesCleanly (t: Test, lang: string, src: string): Promise<void> {
  const p = (await loadGrammar(languageByFormat(lang)!.grammar))!.newParser()
  const tree = p.parse(src)!
  t.notOk(tree.rootNode.hasError, `${lang}: the sample parses`)
  tree.delete()
  p.delete()
}

t.test('a switch over budget is split between its cases, in every language that has one', async (t) => {
  for (const lang of Object.keys(SWITCHES)) {
    const { src, cases } = switchDoc(lang, [8, 8, 8, 8])
    await parsesCleanly(t, lang, src)
    const caseLength = Math.max(...cases.map((c) => c.end - c.start))
    const max = Math.floor(caseLength * 1.6) // one case fits, two do not
    const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
    t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang}: invariants`)
    const cuts = boundaries(r)
    const inside = cuts.filter((c) => cases.some((k) => c > k.start && c < k.end))
    t.same(inside.map((c) => JSON.stringify(src.slice(c - 20, c + 20))), [], `${lang}: no cut inside a case (${cuts.length} cuts, budget ${max})`)
    t.ok(cuts.length >= 2, `${lang}: the cases are apart`)
  }
})

t.test('a case over budget is a container of its statements, labelled with its label', async (t) => {
  for (const lang of Object.keys(SWITCHES)) {
    const { src, cases } = switchDoc(lang, [3, 40, 3])
    const big = cases[1]!
    const r = await split(src, { input_format: lang, max_tokens: Math.floor((big.end - big.start) / 3), tokenizer: CHARS, code_parsing: 'syntax' })
    t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang}: invariants`)
    let pos = 0
    const paths: string[] = []
    for (const c of r.chunks) {
      const at = pos
      pos += c.text.length
      if (at > big.start + 40 && pos < big.end) paths.push(c.path.at(-1) ?? '')
    }
    t.ok(paths.length >= 1, `${lang}: chunks inside the big case`)
    t.same([...new Set(paths)], [big.label], `${lang}: their path ends with the case`)
  }
})

t.test('zig: a switch arm is labelled with its pattern, without its payload capture', async (t) => {
  const body = (n: number): string => Array.from({ length: n }, (_, j) => `            x += input[${j}] * v;\n`).join('')
  const src = `fn step(s: Op, input: []const u32) u32 {\n    var x: u32 = 0;\n    switch (s) {\n        .add => |v| {\n${body(8)}        },\n        .mul, .shl => |*v, i| {\n${body(8)}            x += i;\n        },\n        else => {},\n    }\n    return x;\n}\n`
  const events = await collectEvents(code, src, { input_format: 'zig', max_tokens: 120 })
  assertTiles(events, src)
  assertContainers(events)
  const got = labels(events)
  t.ok(got.includes('.add =>') && got.includes('.mul, .shl =>'), JSON.stringify(got))
  t.same(got.filter((l) => l.includes('|')), [], 'no capture in a label')
  // What the arm holds starts after the capture: the capture line is the arm's signature.
  const add = events.findIndex((e) => e.type === 'enter' && e.label === '.add =>')
  t.match(events[add + 1], { type: 'block', attachNext: true, text: '        .add => |v| {\n' })
  const r = await split(src, { input_format: 'zig', max_tokens: 120, tokenizer: CHARS, code_parsing: 'syntax' })
  t.same(invariantProblems(r, src, { tokenizer: charCount }), [], 'invariants')
  t.same(r.chunks.flatMap((c) => c.path).filter((l) => l.includes('|')), [], 'no capture in a path')
})

t.test('a switch held by a declaration, a return or an assignment is opened too', async (t) => {
  const held: Array<[string, string, string]> = [
    ['rust', 'fn step(s: u32, input: &[u32]) -> u32 {\n    let mut x = 0;\n    let y = match s {\n', '        _ => 0,\n    };\n    y\n}\n'],
    ['rust', 'fn step(s: u32, input: &[u32]) -> u32 {\n    let mut x = 0;\n    return match s {\n', '        _ => 0,\n    };\n}\n'],
    ['java', 'class M {\n  int step(int s, int[] input) {\n    int x = 0;\n    int y = switch (s) {\n', '    };\n    return y;\n  }\n}\n'],
    ['csharp', 'class M {\n  int Step(int s, int[] input) {\n    int x = 0;\n    var y = s switch {\n', '    };\n    return y;\n  }\n}\n'],
    ['kotlin', 'fun step(s: Int, input: IntArray): Int {\n    var x = 0\n    val y = when (s) {\n', '        else -> 0\n    }\n    return y\n}\n'],
    ['zig', 'fn step(s: u32, input: []const u32) u32 {\n    var x: u32 = 0;\n    const y = switch (s) {\n', '        else => 0,\n    };\n    return y;\n}\n'],
    ['php', '<?php\nfunction step($s, $input) {\n  $x = 0;\n  $y = match($s) {\n', '  };\n  return $y;\n}\n'],
    ['ruby', 'def step(s, input)\n  x = 0\n  y = case s\n', '  end\n  y\nend\n'],
  ]
  const arms: Record<string, (i: number, body: string) => string> = {
    rust: (i, b) => `        ${i} => {\n${b}            x\n        }\n`,
    java: (i, b) => `      case ${i} -> {\n${b}        yield x;\n      }\n`,
    csharp: (i, b) => `      ${i} => Sum(\n${b}        x),\n`,
    kotlin: (i, b) => `        ${i} -> {\n${b}            x\n        }\n`,
    zig: (i, b) => `        ${i} => blk: {\n${b}            break :blk x;\n        },\n`,
    php: (i, b) => `    ${i} => sum(\n${b}      $x),\n`,
    ruby: (i, b) => `  when ${i}\n${b}    x\n`,
  }
  const stmt: Record<string, (i: number, j: number) => string> = {
    rust: (i, j) => `            x += input[${j}] * ${i};\n`,
    java: (i, j) => `        x += input[${j}] * ${i};\n`,
    csharp: (i, j) => `        input[${j}] * ${i},\n`,
    kotlin: (i, j) => `            x += input[${j}] * ${i}\n`,
    zig: (i, j) => `            x += input[${j}] * ${i};\n`,
    php: (i, j) => `      $input[${j}] * ${i},\n`,
    ruby: (i, j) => `    x += input[${j}] * ${i}\n`,
  }
  for (const [lang, head, tail] of held) {
    let src = head
    const cases: Array<[number, number]> = []
    for (let i = 0; i < 4; i++) {
      let body = ''
      for (let j = 0; j < 8; j++) body += stmt[lang]!(i, j)
      const arm = arms[lang]!(i, body)
      const start = src.length + arm.length - arm.trimStart().length
      src += arm
      cases.push([start, src.length - 1])
    }
    src += tail
    await parsesCleanly(t, lang, src)
    const max = Math.floor(Math.max(...cases.map(([a, b]) => b - a)) * 1.6)
    const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
    t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang}: invariants`)
    const cuts = boundaries(r)
    const inside = cuts.filter((c) => cases.some(([a, b]) => c > a && c < b))
    t.same(inside.map((c) => JSON.stringify(src.slice(c - 20, c + 20))), [], `${lang} ${JSON.stringify(head.split('\n').at(-2))}: no cut inside an arm`)
    t.ok(r.chunks.slice(1, -1).some((c) => /^(?:let y = match s|return match s|int y = switch \(s\)|var y = s switch|val y = when \(s\)|const y = switch \(s\)|\$y = match\(\$s\)|y = case s)$/.test(c.path.at(-1) ?? '')), `${lang}: the statement is the container: ${r.chunks.map((c) => JSON.stringify(c.path)).join(' ')}`)
  }
})

t.test('rust: an if or a loop in an expression statement is a compound statement', async (t) => {
  const body = Array.from({ length: 30 }, (_, i) => `        let v${i} = compute(${i}, ${i} * 2);\n`).join('')
  const src = `fn f(x: i32) -> i32 {\n    if x > 0 {\n${body}    } else {\n${body}    }\n    for i in 0..x {\n${body}    }\n    0\n}\n`
  const r = await split(src, { input_format: 'rust', max_tokens: 300, tokenizer: CHARS, code_parsing: 'syntax' })
  t.same(invariantProblems(r, src, { tokenizer: charCount }), [], 'invariants')
  const labelsSeen = new Set(r.chunks.flatMap((c) => c.path))
  for (const l of ['if x > 0', 'else', 'for i in 0..x']) t.ok(labelsSeen.has(l), `${l}: ${JSON.stringify([...labelsSeen])}`)
})

t.test('kotlin, swift and bash: `if`, `else if`, `else`, loops and `do` too big to fit are containers, cut between statements', async (t) => {
  // Statements over two lines, so a cut at a line inside one shows.
  const stmts = (n: number): string => Array.from({ length: n }, (_, j) => `        x += compute(${j},\n            ${j} * 2)\n`).join('')
  const sh = (n: number): string => Array.from({ length: n }, (_, j) => `    compute "$x" ${j} \\\n      "$((x * 2))"\n`).join('')
  const docs: Array<[string, string, string[]]> = [
    ['kotlin', `fun f(x: Int): Int {\n    var x = x\n    if (x > 1) {\n${stmts(6)}    } else if (x > 0) {\n${stmts(6)}    } else {\n${stmts(6)}    }\n    for (i in 0..x) {\n${stmts(6)}    }\n    while (x > 0) {\n${stmts(6)}    }\n    do {\n${stmts(6)}    } while (x < 3)\n    try {\n${stmts(6)}    } catch (e: Exception) {\n${stmts(6)}    }\n    return x\n}\n`,
      ['if (x > 1)', 'else if (x > 0)', 'else', 'for (i in 0..x)', 'while (x > 0)', 'do', 'try', 'catch (e: Exception)']],
    ['swift', `func f(x: Int) -> Int {\n    var x = x\n    if x > 1 {\n${stmts(6)}    } else if x > 0 {\n${stmts(6)}    } else {\n${stmts(6)}    }\n    for i in 0..<x {\n${stmts(6)}    }\n    while x > 0 {\n${stmts(6)}    }\n    repeat {\n${stmts(6)}    } while x < 3\n    do {\n${stmts(6)}    } catch {\n${stmts(6)}    }\n    return x\n}\n`,
      ['if x > 1', 'else if x > 0', 'else', 'for i in 0..<x', 'while x > 0', 'repeat', 'do', 'catch']],
    ['bash', `f() {\n  if [ "$1" = a ]; then\n${sh(6)}  elif [ "$1" = b ]; then\n${sh(6)}  else\n${sh(6)}  fi\n  for i in 1 2 3; do\n${sh(6)}  done\n  while [ "$x" -lt 9 ]\n  do\n${sh(6)}  done\n  until [ "$x" -gt 9 ]; do\n${sh(6)}  done\n}\n`,
      ['if [ "$1" = a ]', 'elif [ "$1" = b ]', 'else', 'for i in 1 2 3', 'while [ "$x" -lt 9 ]', 'until [ "$x" -gt 9 ]']],
  ]
  for (const [lang, src, want] of docs) {
    await parsesCleanly(t, lang, src)
    const statements = [...src.matchAll(/ {8}x \+= compute\([^)]*\)\n| {4}compute "\$x" \d+ \\\n.*\n/g)].map((m) => [m.index, m.index + m[0].length] as const)
    t.equal(statements.length, want.length * 6, `${lang}: statements found (6 under each container)`)
    const r = await split(src, { input_format: lang, max_tokens: 200, tokenizer: CHARS, code_parsing: 'syntax' })
    t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang}: invariants`)
    const inside = boundaries(r).filter((c) => statements.some(([a, b]) => c > a && c < b))
    t.same(inside.map((c) => JSON.stringify(src.slice(c - 20, c + 20))), [], `${lang}: no cut inside a statement`)
    const got = labels(await collectEvents(code, src, { input_format: lang, max_tokens: 200 }))
    for (const l of want) t.ok(got.includes(l), `${lang}: container ${JSON.stringify(l)} in ${JSON.stringify(got)}`)
    const headEnds = r.chunks.slice(0, -1).filter((c) => /\b(?:else|then|do)\s*\{?\s*$/.test(c.text.trimEnd().split('\n').at(-1)!))
    t.same(headEnds.map((c) => c.text.slice(-30)), [], `${lang}: no chunk ends with an else, then or do line`)
  }
})

t.test('zig: `if`, `else if`, `else` and loops, and bash: `{ ... }` groups and `( ... )` subshells too big to fit are containers, cut between statements', async (t) => {
  const zs = (n: number): string => Array.from({ length: n }, (_, j) => `        x += compute(${j},\n            ${j} * 2);\n`).join('')
  const sh = (n: number): string => Array.from({ length: n }, (_, j) => `    compute "$x" ${j} \\\n      "$((x * 2))"\n`).join('')
  const docs: Array<[string, string, string[]]> = [
    ['zig', `fn f(x: u32, input: []u32) u32 {\n    var y = x;\n    if (x > 1) {\n${zs(6)}    } else if (x > 0) {\n${zs(6)}    } else {\n${zs(6)}    }\n    while (y > 0) : (y -= 1) {\n${zs(6)}    }\n    for (input) |v| {\n${zs(6)}    }\n    outer: while (true) {\n${zs(6)}    }\n    return y;\n}\n`,
      ['if (x > 1)', 'else if (x > 0)', 'else', 'while (y > 0) : (y -= 1)', 'for (input) |v|', 'outer: while (true)']],
    ['bash', `f() {\n  {\n${sh(6)}  } > out.txt\n  (\n${sh(6)}  )\n}\n{\n${sh(6)}}\n`, ['{', '(']],
  ]
  for (const [lang, src, want] of docs) {
    await parsesCleanly(t, lang, src)
    const statements = [...src.matchAll(/ {8}x \+= compute\([^)]*\);\n| {4}compute "\$x" \d+ \\\n.*\n/g)].map((m) => [m.index, m.index + m[0].length] as const)
    t.equal(statements.length, lang === 'zig' ? want.length * 6 : 18, `${lang}: statements found`)
    for (const max of [150, 200, 250]) {
      const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
      t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang} @${max}: invariants`)
      const inside = boundaries(r).filter((c) => statements.some(([a, b]) => c > a && c < b))
      t.same(inside.map((c) => JSON.stringify(src.slice(c - 20, c + 20))), [], `${lang} @${max}: no cut inside a statement`)
      const heads = r.chunks.slice(0, -1).filter((c) => /(?:\belse|[{(])\s*$/.test(c.text.trimEnd().split('\n').at(-1)!))
      t.same(heads.map((c) => c.text.slice(-30)), [], `${lang} @${max}: no chunk ends with a header line`)
    }
    const got = labels(await collectEvents(code, src, { input_format: lang, max_tokens: 150 }))
    for (const l of want) t.ok(got.includes(l), `${lang}: container ${JSON.stringify(l)} in ${JSON.stringify(got)}`)
  }
})

t.test('a compound statement whose node fits but whose span (its indentation, the line break after it) does not is opened', async (t) => {
  const stmts = (ind: string, semi: string, lead = 'x += '): string => Array.from({ length: 6 }, (_, j) => `${ind}${lead}compute(${j},\n${ind}    ${j} * 2)${semi}\n`).join('')
  // [language, before, the compound statement's node, after]
  const docs: Array<[string, string, string, string]> = [
    ['typescript', 'function f (x: number): number {\n  x += 1\n  ', `if (x > 1) {\n${stmts('    ', '')}  }`, '\n  return x\n}\n'],
    ['zig', 'fn f(x: u32) u32 {\n    var y = x;\n    ', `while (y > 0) : (y -= 1) {\n${stmts('        ', ';')}    }`, '\n    return y;\n}\n'],
    ['rust', 'fn f(x: i32) -> i32 {\n    let a = 1;\n    ', `let y = match x {\n${stmts('        ', ',', '_ => ')}    };`, '\n    y\n}\n'],
  ]
  for (const [lang, before, node, after] of docs) {
    const src = before + node + after
    await parsesCleanly(t, lang, src)
    const statements = [...src.matchAll(/(?:x \+= |_ => )compute\(\d+,\n.*\n/g)].map((m) => [m.index, m.index + m[0].length] as const)
    for (const max of [node.length, node.length + 1, node.length + 2]) {
      const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
      t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang} @${max}: invariants`)
      const inside = boundaries(r).filter((c) => statements.some(([a, b]) => c > a && c < b))
      t.same(inside.map((c) => JSON.stringify(src.slice(c - 20, c + 20))), [], `${lang} @${max}: no cut inside a statement`)
    }
  }
})

t.test('a file preamble (`package main`, `<?php`) goes with the function after it when the function\'s body is one statement too big to fit', async (t) => {
  const loop = (n: number): string => Array.from({ length: n }, (_, j) => `\t\tx += input[${j}] * ${j + 1}\n`).join('')
  const docs: Array<[string, string]> = [
    ['go', switchDoc('go', [8, 8, 8, 8]).src],
    ['php', switchDoc('php', [8, 8, 8, 8]).src],
    ['go', `package main\n\nfunc f(x int, input []int) int {\n\tfor i := 0; i < 3; i++ {\n${loop(30)}\t}\n\treturn x\n}\n`],
  ]
  for (const [lang, src] of docs) {
    for (const max of [150, 250, 400]) {
      const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
      t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang} @${max}: invariants`)
      t.match(r.chunks[0]!.text, /^(?:package main\n\n|<\?php\n)(?:func|function) /, `${lang} @${max}: the preamble starts the function's first chunk: ${JSON.stringify(r.chunks[0]!.text.slice(0, 40))}`)
    }
  }
})

t.test('a case label with nothing after it stays with the next case (fall-through)', async (t) => {
  for (const lang of ['typescript', 'javascript', 'c', 'cpp', 'java', 'csharp', 'php']) {
    const { src, cases } = switchDoc(lang, [8, 0, 8, 0, 8, 0, 8])
    const max = Math.floor((cases[2]!.end - cases[1]!.start) * 1.3)
    const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
    t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang}: invariants`)
    const ends = r.chunks.slice(0, -1).map((c) => c.text.trimEnd().split('\n').at(-1)!.trim())
    t.same(ends.filter((l) => /^case \d+:$/.test(l)), [], `${lang}: no chunk ends with a bare case label (${ends.length} cuts)`)
  }
})

t.test('ruby: a heredoc body goes with the statement that opens it', async (t) => {
  const heredoc = (i: number): string => `  html << <<EOF\n${Array.from({ length: 4 }, (_, j) => `  <p>${i}.${j}</p>\n`).join('')}EOF\n`
  const src = `def page(html)\n${Array.from({ length: 6 }, (_, i) => `  x${i} = compute(${i})\n${heredoc(i)}`).join('')}  html\nend\n`
  const events = await collectEvents(code, src, { input_format: 'ruby', max_tokens: 8 })
  assertTiles(events, src)
  t.same(blocks(events).filter((b) => b.text.startsWith('\n')).map((b) => b.text.slice(0, 20)), [], 'no block starts with the rest of a heredoc line')
  for (let max = 40; max <= 160; max += 20) {
    const r = await split(src, { input_format: 'ruby', max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
    t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `@${max}: invariants`)
    t.same(boundaries(r).filter((b) => src[b - 1] !== '\n').map((b) => JSON.stringify(src.slice(b - 12, b + 12))), [], `@${max}: every cut at a line start`)
  }
})

t.test('an item first on its line starts at the line start: its indentation goes with it', async (t) => {
  for (const spec of LANGUAGES) {
    const src = fixture(spec.name)
    const events = await collectEvents(code, src, { input_format: spec.name, max_tokens: 8 })
    assertTiles(events, src)
    assertContainers(events)
    const bad = blocks(events).filter((b) => {
      const ls = src.lastIndexOf('\n', b.start - 1) + 1
      return b.start > ls && src.slice(ls, b.start).trim() === ''
    })
    t.same(bad.map((b) => JSON.stringify(src.slice(b.start - 8, b.start + 20))), [], `${spec.name}: no block starts after indentation`)
    // Through split: chunks start at line starts, so none ends with the next line's indentation
    // (at budgets over the longest line, which the packer would cut between words).
    for (const max of [150, 250, 400]) {
      const r = await split(src, { input_format: spec.name, max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
      t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${spec.name} @${max}: invariants`)
      const indented = r.chunks.slice(0, -1).filter((c) => /\n[ \t]+$/.test(c.text))
      t.same(indented.map((c) => JSON.stringify(c.text.slice(-30))), [], `${spec.name} @${max}: no chunk ends with indentation`)
    }
  }
  const py = 'class Wrapper:\n    def __init__(self):\n        self.width = 70\n        self.indent = ""\n\n\n    # -- Private methods\n\n    def _munge(self, text):\n        return text\n'
  const r = await split(py, { input_format: 'python', max_tokens: 70, tokenizer: CHARS, code_parsing: 'syntax' })
  t.same(invariantProblems(r, py, { tokenizer: charCount }), [], 'invariants')
  t.ok(r.chunks.some((c) => c.text.startsWith('    # -- Private methods')), r.chunks.map((c) => JSON.stringify(c.text)).join(' | '))
})

t.test('`} else {` and `} catch (e) {` go whole with the clause: no cut after `} `', async (t) => {
  const stmts = (n: number, f: (j: number) => string): string => Array.from({ length: n }, (_, j) => f(j)).join('')
  const c = (ind: string) => (j: number) => `${ind}x += input[${j}] * ${j + 1};\n`
  const docs: Array<[string, string]> = [
    ['typescript', `function f (x: number, input: number[]): number {\n  if (x > 1) {\n${stmts(8, c('    '))}  } else if (x > 0) {\n${stmts(8, c('    '))}  } else {\n${stmts(8, c('    '))}  }\n  try {\n${stmts(8, c('    '))}  } catch (e) {\n${stmts(8, c('    '))}  } finally {\n${stmts(8, c('    '))}  }\n  do {\n${stmts(8, c('    '))}  } while (x > 0)\n  return x\n}\n`],
    ['javascript', `function f (x, input) {\n  if (x > 1) {\n${stmts(8, c('    '))}  } else if (x > 0) {\n${stmts(8, c('    '))}  } else {\n${stmts(8, c('    '))}  }\n  try {\n${stmts(8, c('    '))}  } catch (e) {\n${stmts(8, c('    '))}  } finally {\n${stmts(8, c('    '))}  }\n  return x\n}\n`],
    ['c', `int f(int x, int *input) {\n  if (x > 1) {\n${stmts(8, c('    '))}  } else if (x > 0) {\n${stmts(8, c('    '))}  } else {\n${stmts(8, c('    '))}  }\n  do {\n${stmts(8, c('    '))}  } while (x > 0);\n  return x;\n}\n`],
    ['java', `class M {\n  int f(int x, int[] input) {\n    if (x > 1) {\n${stmts(8, c('      '))}    } else if (x > 0) {\n${stmts(8, c('      '))}    } else {\n${stmts(8, c('      '))}    }\n    try {\n${stmts(8, c('      '))}    } catch (Exception e) {\n${stmts(8, c('      '))}    } finally {\n${stmts(8, c('      '))}    }\n    return x;\n  }\n}\n`],
    ['csharp', `class M {\n  int F(int x, int[] input) {\n    if (x > 1) {\n${stmts(8, c('      '))}    } else if (x > 0) {\n${stmts(8, c('      '))}    }\n    try {\n${stmts(8, c('      '))}    } catch (Exception e) {\n${stmts(8, c('      '))}    } finally {\n${stmts(8, c('      '))}    }\n    return x;\n  }\n}\n`],
    ['csharp', `class M {\n  int F(int x, int[] input) {\n    if (x > 1)\n    {\n${stmts(8, c('      '))}    }\n    else if (x > 0)\n    {\n${stmts(8, c('      '))}    }\n    else\n    {\n${stmts(8, c('      '))}    }\n    return x;\n  }\n}\n`],
    ['go', `package main\n\nfunc f(x int, input []int) int {\n\tif x > 1 {\n${stmts(8, (j) => `\t\tx += input[${j}] * ${j + 1}\n`)}\t} else if x > 0 {\n${stmts(8, (j) => `\t\tx += input[${j}] * ${j + 1}\n`)}\t}\n\treturn x\n}\n`],
    ['rust', `fn f(mut x: i32, input: &[i32]) -> i32 {\n    if x > 1 {\n${stmts(8, c('        '))}    } else if x > 0 {\n${stmts(8, c('        '))}    } else {\n${stmts(8, c('        '))}    }\n    x\n}\n`],
    ['php', `<?php\nfunction f($x, $input) {\n  if ($x > 1) {\n${stmts(8, (j) => `    $x += $input[${j}] * ${j + 1};\n`)}  } elseif ($x > 0) {\n${stmts(8, (j) => `    $x += $input[${j}] * ${j + 1};\n`)}  } else {\n${stmts(8, (j) => `    $x += $input[${j}] * ${j + 1};\n`)}  }\n  try {\n${stmts(8, (j) => `    $x += $input[${j}] * ${j + 1};\n`)}  } catch (Exception $e) {\n${stmts(8, (j) => `    $x += $input[${j}] * ${j + 1};\n`)}  }\n  return $x;\n}\n`],
  ]
  for (const [lang, src] of docs) {
    // Which cuts fall at a clause depends on the budget (the packer keeps a short remainder of a
    // branch with the clause after it): at one budget at least, one does.
    let clauseStarts = false
    for (const max of [250, 400]) {
      const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
      t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang} @${max}: invariants`)
      const midLine = boundaries(r).filter((b) => src[b - 1] !== '\n')
      t.same(midLine.map((b) => JSON.stringify(src.slice(b - 12, b) + '|' + src.slice(b, b + 12))), [], `${lang} @${max}: every cut at a line start`)
      clauseStarts ||= r.chunks.some((ch) => /^\s*(?:\} )?(?:else|elseif|catch|finally)\b/.test(ch.text))
    }
    t.ok(clauseStarts, `${lang}: a chunk starts with a clause line`)
  }
})

t.test('a body after `else` with no clause node (Java, Go, C#) is the else clause: `} else {` never ends a chunk', async (t) => {
  const body = (ind: string, semi: string): string => Array.from({ length: 10 }, (_, j) => `${ind}x += input[${j}] * ${j + 1}${semi}\n`).join('')
  const docs: Array<[string, string]> = [
    ['java', `class M {\n  int f(int x, int[] input) {\n    if (x > 1) {\n${body('      ', ';')}    } else {\n${body('      ', ';')}    }\n    return x;\n  }\n}\n`],
    ['go', `package main\n\nfunc f(x int, input []int) int {\n\tif x > 1 {\n${body('\t\t', '')}\t} else {\n${body('\t\t', '')}\t}\n\treturn x\n}\n`],
    ['csharp', `class M {\n  int F(int x, int[] input) {\n    if (x > 1) {\n${body('      ', ';')}    } else {\n${body('      ', ';')}    }\n    return x;\n  }\n}\n`],
    ['csharp', `class M {\n  int F(int x, int[] input) {\n    if (x > 1)\n    {\n${body('      ', ';')}    }\n    else\n    {\n${body('      ', ';')}    }\n    return x;\n  }\n}\n`],
  ]
  for (const [lang, src] of docs) {
    const ends: string[] = []
    let clause = false
    for (let max = 120; max <= 420; max += 15) {
      const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
      t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang} @${max}: invariants`)
      for (const c of r.chunks.slice(0, -1)) if (/\belse\s*\{?\s*$/.test(c.text.trimEnd().split('\n').at(-1)!)) ends.push(`@${max}: ${JSON.stringify(c.text.slice(-40))}`)
      clause ||= r.chunks.some((c) => c.path.at(-1) === 'else' && /^\s*(?:\} )?else\b/.test(c.text))
    }
    t.same(ends, [], `${lang}: no chunk ends with the else line`)
    t.ok(clause, `${lang}: a chunk starts with the else line, under the path "else"`)
  }
})

/**
 * Each sample split at budgets from 120 to 420 characters: the invariants hold, no chunk but the
 * last ends as `endsBadly` says (`what`, for the message), and each container label in `want`
 * is in some chunk's path.
 */
async function opensHeldBlocks (t: Test, docs: Array<[string, string, string[]]>, endsBadly: (text: string) => boolean, what: string): Promise<void> {
  for (const [lang, src, want] of docs) {
    await parsesCleanly(t, lang, src)
    const ends: string[] = []
    const paths = new Set<string>()
    for (let max = 120; max <= 420; max += 15) {
      const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
      t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang} @${max}: invariants`)
      for (const c of r.chunks.slice(0, -1)) if (endsBadly(c.text)) ends.push(`@${max}: ${JSON.stringify(c.text.slice(-40))}`)
      for (const c of r.chunks) for (const l of c.path) paths.add(l)
    }
    t.same(ends, [], `${lang} ${JSON.stringify(src.split('\n')[0])}: no chunk ends with ${what}`)
    for (const l of want) t.ok(paths.has(l), `${lang}: container ${JSON.stringify(l)} in ${JSON.stringify([...paths])}`)
  }
}

t.test('a function, closure, object or labelled loop held by an expression is opened: `} else {` never ends a chunk', async (t) => {
  const body = (ind: string, semi = ';'): string => Array.from({ length: 10 }, (_, j) => `${ind}x += input[${j}] * ${j + 1}${semi}\n`).join('')
  const ifElse = (ind: string, cond: string, semi = ';'): string => `${ind}if ${cond} {\n${body(ind + '  ', semi)}${ind}} else {\n${body(ind + '  ', semi)}${ind}}\n`
  const docs: Array<[string, string, string[]]> = [
    ['javascript', `obj.handler = function (x, input) {\n${ifElse('  ', '(x > 1)')}  return x\n}\n`, ['obj.handler = function (x, input)']],
    ['javascript', `const o = {\n  key: function (x, input) {\n${ifElse('    ', '(x > 1)')}    return x\n  },\n  arrow: (x, input) => {\n${ifElse('    ', '(x > 1)')}    return x\n  },\n}\n`,
      ['const o', 'key: function (x, input)', 'arrow: (x, input) =>']],
    ['typescript', `exports.run = async (x: number, input: number[]) => {\n  try {\n${body('    ')}  } catch (e) {\n${body('    ')}  } finally {\n${body('    ')}  }\n}\n`, ['exports.run = async (x: number, input: number[]) =>']],
    ['typescript', `function g (x: number, input: number[]): number {\n  outer: for (let i = 0; i < 3; i++) {\n${ifElse('    ', '(x > 1)')}  }\n  return x\n}\n`, ['outer: for (let i = 0; i < 3; i++)']],
    ['tsx', `items.forEach((x: number) => {\n${ifElse('  ', '(x > 1)')}})\n`, ['items.forEach((x: number) =>']],
    ['rust', `fn main() {\n    let f = |x: i32| {\n${ifElse('        ', 'x > 1')}    };\n}\n`, ['let f = |x: i32|']],
    ['rust', `fn main() {\n    let f = |x: i32| if x > 1 {\n${body('        ')}    } else {\n${body('        ')}    };\n}\n`, ['let f = |x: i32| if x > 1']],
    ['rust', `fn main() {\n    let v: Vec<i32> = items.iter().map(|x| {\n${ifElse('        ', '*x > 1')}    }).collect();\n}\n`, ['let v: Vec<i32> = items.iter().map(|x|']],
    ['rust', `fn main() {\n    thread::spawn(move || {\n${ifElse('        ', 'x > 1')}    });\n}\n`, ['thread::spawn(move ||']],
  ]
  const clause = /\b(?:else|catch|finally)\b[^\n]*\{\s*$/
  await opensHeldBlocks(t, docs, (text) => clause.test(text.trimEnd().split('\n').at(-1)!), 'an else, catch or finally line')
})

t.test('a lambda, closure, anonymous function or class held by an expression is opened (Java, Kotlin, Go, C#, PHP, Swift, Ruby)', async (t) => {
  const body = (ind: string, semi: string): string => Array.from({ length: 10 }, (_, j) => `${ind}x += input[${j}] * ${j + 1}${semi}\n`).join('')
  /** `if (x > 1) {...} else {...}` in the language's own syntax. */
  const ifElse = (ind: string, lang: string): string => {
    const semi = ['go', 'kotlin', 'swift', 'ruby'].includes(lang) ? '' : ';'
    const b = body(ind + '  ', lang === 'php' ? ';' : semi).replace(/x \+=/g, lang === 'php' ? '$x +=' : 'x +=')
    if (lang === 'ruby') return `${ind}if x > 1\n${b}${ind}else\n${b}${ind}end\n`
    const cond = lang === 'go' || lang === 'swift' ? 'x > 1' : lang === 'php' ? '($x > 1)' : '(x > 1)'
    return `${ind}if ${cond} {\n${b}${ind}} else {\n${b}${ind}}\n`
  }
  const tryCatch = (ind: string, lang: string): string => {
    const semi = lang === 'kotlin' ? '' : ';'
    const e = lang === 'kotlin' ? '(e: Exception)' : '(Exception e)'
    return `${ind}try {\n${body(ind + '  ', semi)}${ind}} catch ${e} {\n${body(ind + '  ', semi)}${ind}} finally {\n${body(ind + '  ', semi)}${ind}}\n`
  }
  const java = (s: string): string => `class M {\n  void f(int x, int[] input) {\n${s}  }\n}\n`
  const kt = (s: string): string => `fun main() {\n${s}}\n`
  const go = (s: string): string => `package main\n\nfunc main() {\n${s}}\n`
  const cs = (s: string): string => `class M {\n  void F(int x, int[] input) {\n${s}  }\n}\n`
  const docs: Array<[string, string, string[]]> = [
    ['java', java(`    list.forEach(x -> {\n${ifElse('      ', 'java')}    });\n`), ['list.forEach(x ->']],
    ['java', java(`    executor.submit(() -> {\n${tryCatch('      ', 'java')}    });\n`), ['executor.submit(() ->']],
    ['java', java(`    Runnable r = () -> {\n${ifElse('      ', 'java')}    };\n`), ['Runnable r = () ->']],
    ['java', java(`    new Thread() {\n      public void run() {\n${ifElse('        ', 'java')}      }\n    }.start();\n`), ['new Thread()', 'public void run()']],
    ['java', java(`    Collections.sort(xs, new Comparator<Integer>() {\n      public int compare(Integer a, Integer b) {\n${ifElse('        ', 'java')}        return x;\n      }\n    });\n`),
      ['Collections.sort(xs, new Comparator<Integer>()', 'public int compare(Integer a, Integer b)']],
    ['java', java(`    restart: for (;;) {\n${ifElse('      ', 'java')}    }\n`), ['restart: for (;;)']],
    ['kotlin', kt(`    list.forEach { x ->\n${ifElse('        ', 'kotlin')}    }\n`), ['list.forEach { x ->']],
    ['kotlin', kt(`    val r = x.apply {\n${ifElse('        ', 'kotlin')}    }\n`), ['val r = x.apply']],
    ['kotlin', kt(`    val f = { x: Int, input: IntArray ->\n${ifElse('        ', 'kotlin')}    }\n`), ['val f = { x: Int, input: IntArray ->']],
    ['kotlin', kt(`    scope.launch {\n${tryCatch('        ', 'kotlin')}    }\n`), ['scope.launch']],
    ['kotlin', `fun f(input: IntArray): List<Int> {\n    return list.map { x ->\n${ifElse('        ', 'kotlin')}        x\n    }\n}\n`, ['return list.map { x ->']],
    ['kotlin', `class A(val input: IntArray) {\n    val cache by lazy {\n${ifElse('        ', 'kotlin')}        x\n    }\n}\n`, ['val cache by lazy']],
    ['kotlin', kt(`    run(1) {\n${ifElse('        ', 'kotlin')}    }\n`), ['run(1)']],
    ['kotlin', kt(`    val o = object : Runnable {\n        override fun run() {\n${ifElse('            ', 'kotlin')}        }\n    }\n`), ['val o = object : Runnable', 'override fun run()']],
    ['go', go(`\tgo func() {\n${ifElse('\t\t', 'go')}\t}()\n`), ['go func()']],
    ['go', go(`\tdefer func() {\n${ifElse('\t\t', 'go')}\t}()\n`), ['defer func()']],
    ['go', go(`outer:\n\tfor {\n${ifElse('\t\t', 'go')}\t}\n`), ['outer: for']],
    ['go', go(`\tf := func(x int) error {\n${ifElse('\t\t', 'go')}\t\treturn nil\n\t}\n`), ['f := func(x int) error']],
    ['go', go(`\thttp.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {\n${ifElse('\t\t', 'go')}\t})\n`), ['http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request)']],
    ['go', go(`\thandlers := map[string]func(x int) int{\n\t\t"a": func(x int) int {\n${ifElse('\t\t\t', 'go')}\t\t\treturn x\n\t\t},\n\t\t"b": func(x int) int { return x },\n\t}\n\t_ = handlers\n`),
      ['handlers := map[string]func(x int) int', '"a": func(x int) int']],
    ['csharp', cs(`    Task.Run(() => {\n${tryCatch('      ', 'csharp')}    });\n`), ['Task.Run(() =>']],
    ['csharp', cs(`    list.ForEach(x => {\n${ifElse('      ', 'csharp')}    });\n`), ['list.ForEach(x =>']],
    ['csharp', cs(`    Func<int, int> f = x => {\n${ifElse('      ', 'csharp')}      return x;\n    };\n`), ['Func<int, int> f = x =>']],
    ['csharp', cs(`    button.Click += delegate {\n${ifElse('      ', 'csharp')}    };\n`), ['button.Click += delegate']],
    ['csharp', cs(`    var o = new Foo {\n      A = 1,\n      B = () => {\n${ifElse('        ', 'csharp')}      },\n      C = 3,\n    };\n`), ['var o = new Foo', 'B = () =>']],
    ['php', `<?php\n$f = function ($x) use ($input) {\n${ifElse('    ', 'php')}    return $x;\n};\n`, ['$f = function ($x) use ($input)']],
    ['php', `<?php\n$r = array_map(function ($x) use ($input) {\n${ifElse('    ', 'php')}    return $x;\n}, $xs);\n`, ['$r = array_map(function ($x) use ($input)']],
    ['php', `<?php\nRoute::get('/', function () use ($input) {\n${ifElse('    ', 'php')}});\n`, ["Route::get('/', function () use ($input)"]],
    ['php', `<?php\n$handlers = [\n    'a' => function ($x) use ($input) {\n${ifElse('        ', 'php')}        return $x;\n    },\n    'b' => fn($y) => $y * 2,\n];\n`,
      ['$handlers', "'a' => function ($x) use ($input)"]],
    // The array on a line of its own: labelled by what holds it, not by its bracket.
    ['php', `<?php\n$r = route(\n    [\n        'a' => function ($x) use ($input) {\n${ifElse('            ', 'php')}            return $x;\n        },\n    ]);\n`,
      ['$r = route(', "'a' => function ($x) use ($input)"]],
    ['swift', `func f() {\n    DispatchQueue.main.async {\n${ifElse('        ', 'swift')}    }\n}\n`, ['DispatchQueue.main.async']],
    ['swift', `func f() {\n    let ys = items.map { x in\n${ifElse('        ', 'swift')}        return x\n    }\n}\n`, ['let ys = items.map { x in']],
    ['swift', `func f(input: [Int]) {\n    var x = 0\n    outer: for i in input {\n${ifElse('        ', 'swift')}    }\n}\n`, ['outer: for i in input']],
    ['ruby', `def f(input)\n  items.each do |x|\n${ifElse('    ', 'ruby')}  end\nend\n`, ['items.each do |x|']],
    ['ruby', `def f(input)\n  ys = items.map { |x|\n${ifElse('    ', 'ruby')}  }\nend\n`, ['ys = items.map { |x|']],
  ]
  // A line that opens a block or a clause: `{`, `[`, `->`, `=>`, `do |x|`, `x in`, `} else`, `else`. A chunk may end
  // with one only when it holds nothing else: nested headers that, with a first statement, are over budget.
  const opens = /(?:[{([]|->|=>|\bdo(?: \|[^|]*\|)?|\bin|\belse)\s*$|^\s*\}?\s*(?:else|catch|finally)\b/
  const endsOpen = (text: string): boolean => {
    const lines = text.trimEnd().split('\n')
    return opens.test(lines.at(-1)!) && !lines.every((l) => l.trim() === '' || opens.test(l))
  }
  await opensHeldBlocks(t, docs, endsOpen, 'a line that opens a block')
})

t.test('a loop\'s label goes with its loop and starts its container\'s label, even from the line before', async (t) => {
  const body = (ind: string, semi: string): string => Array.from({ length: 6 }, (_, j) => `${ind}x += input[${j}] * ${j + 1}${semi}\n`).join('')
  const ifElse = (ind: string, cond: string, semi: string): string => `${ind}if ${cond} {\n${body(ind + '  ', semi)}${ind}} else {\n${body(ind + '  ', semi)}${ind}}\n`
  const docs: Array<[string, string, string]> = [
    // The label stands on the line before: a labelled statement holds the loop.
    ['go', `package main\n\nfunc f(x int, input []int) {\nouter:\n\tfor i := 0; i < 3; i++ {\n${ifElse('\t\t', 'i > 1', '')}\t}\n}\n`, 'outer: for i := 0; i < 3; i++'],
    ['javascript', `function f (x, input) {\n  outer:\n  for (const i of input) {\n${ifElse('    ', '(i > 1)', '')}  }\n}\n`, 'outer: for (const i of input)'],
    ['java', `class M {\n  void f(int x, int[] input) {\n    outer:\n    for (int i : input) {\n${ifElse('      ', '(i > 1)', ';')}    }\n  }\n}\n`, 'outer: for (int i : input)'],
    // Swift's label is the loop's sibling, on its line.
    ['swift', `func f(input: [Int]) {\n    var x = 0\n    outer: for i in input {\n${ifElse('        ', 'i > 1', '')}    }\n}\n`, 'outer: for i in input'],
  ]
  const approx = await tokenizerByName('approx').load()
  for (const [lang, src, label] of docs) {
    await parsesCleanly(t, lang, src)
    const from = src.indexOf('outer:')
    const loop = src.indexOf('for', from)
    for (let max = 32; max <= 64; max += 8) {
      const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: 'approx', code_parsing: 'syntax' })
      t.same(invariantProblems(r, src, { tokenizer: approx }), [], `${lang} @${max}: invariants`)
      const apart = boundaries(r).filter((b) => b > from && b <= loop)
      t.same(apart, [], `${lang} @${max}: no boundary between the label and its loop`)
      const inside = r.chunks.filter((c) => c.char_start >= loop && c.char_end < src.lastIndexOf('}'))
      t.ok(inside.length > 0 && inside.every((c) => c.path.includes(label)), `${lang} @${max}: the loop is the container ${JSON.stringify(label)}: ${inside.map((c) => JSON.stringify(c.path)).join(' ')}`)
    }
  }
})

t.test('an `else if` too big to fit is opened like the `if` it holds', async (t) => {
  const body = (ind: string): string => Array.from({ length: 12 }, (_, j) => `${ind}x += input[${j}] * ${j + 1};\n`).join('')
  const chain = (open: (c: string) => string, ind: string): string => `${open('x > 2')}\n${body(ind)}  } else ${open('x > 1')}\n${body(ind)}  } else {\n${body(ind)}  }\n`
  const docs: Array<[string, string, string]> = [
    ['typescript', `function f (x: number, input: number[]): number {\n  ${chain((c) => `if (${c}) {`, '    ')}  return x\n}\n`, 'else if (x > 1)'],
    ['javascript', `function f (x, input) {\n  ${chain((c) => `if (${c}) {`, '    ')}  return x\n}\n`, 'else if (x > 1)'],
    ['c', `int f(int x, int *input) {\n  ${chain((c) => `if (${c}) {`, '    ')}  return x;\n}\n`, 'else if (x > 1)'],
    ['cpp', `int f(int x, int *input) {\n  ${chain((c) => `if (${c}) {`, '    ')}  return x;\n}\n`, 'else if (x > 1)'],
    ['rust', `fn f(mut x: i32, input: &[i32]) -> i32 {\n  ${chain((c) => `if ${c} {`, '    ')}  x\n}\n`, 'else if x > 1'],
    // No else clause node: `else` then the `if`.
    ['java', `class M {\n int f(int x, int[] input) {\n  ${chain((c) => `if (${c}) {`, '    ')}  return x;\n }\n}\n`, 'else if (x > 1)'],
    ['csharp', `class M {\n int F(int x, int[] input) {\n  ${chain((c) => `if (${c}) {`, '    ')}  return x;\n }\n}\n`, 'else if (x > 1)'],
    ['go', `package main\n\nfunc f(x int, input []int) int {\n  ${chain((c) => `if ${c} {`, '    ')}  return x\n}\n`, 'else if x > 1'],
    ['kotlin', `fun f(x: Int, input: IntArray): Int {\n  ${chain((c) => `if (${c}) {`, '    ')}  return x\n}\n`, 'else if (x > 1)'],
    ['swift', `func f(x: Int, input: [Int]) -> Int {\n  ${chain((c) => `if ${c} {`, '    ')}  return x\n}\n`, 'else if x > 1'],
  ]
  for (const [lang, src, label] of docs) {
    const r = await split(src, { input_format: lang, max_tokens: 200, tokenizer: CHARS, code_parsing: 'syntax' })
    t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang}: invariants`)
    const inside = r.chunks.filter((c) => c.text.includes('x > 1') || (c.path.includes(label) && !c.text.includes('} else {')))
    t.ok(inside.length >= 2 && inside.every((c) => c.path.at(-1) === label), `${lang}: the else-if branch is a container: ${r.chunks.map((c) => JSON.stringify(c.path.slice(1))).join(' ')}`)
  }
})

t.test('labels: a signature over several lines is read up to its body, as one line', async (t) => {
  const body = (n: number, line: string): string => Array.from({ length: n }, () => line).join('')
  const cases: Array<[string, string, string[]]> = [
    ['python', `class Wrapper(\n    Base,\n    metaclass=Meta,\n):\n    def __init__(self,\n                 width=70,  # columns\n                 initial_indent="",\n                 ):\n        # Set the options.\n        # (All of them.)\n${body(4, '        self.width = width\n')}\n    def g(self):  # a note\n${body(4, '        return self.width\n')}`,
      ['class Wrapper(Base, metaclass=Meta)', 'def __init__(self, width=70, initial_indent="")', 'def g(self)']],
    ['typescript', `export function decodeWithTrie(\n  input: string,\n  isStrict: boolean, // strict mode\n): string {\n${body(4, '  input = input.trim()\n')}  if (\n    isStrict &&\n    input.length > 0\n  ) {\n${body(4, '    input = input.trim()\n')}  }\n  return input\n}\n`,
      ['export function decodeWithTrie(input: string, isStrict: boolean): string', 'if (isStrict && input.length > 0)']],
    ['java', `class StringJoiner {\n  public StringJoiner(CharSequence delimiter,\n                      CharSequence prefix,\n                      CharSequence suffix) {\n${body(4, '    this.delimiter = delimiter;\n')}  }\n}\n`,
      ['class StringJoiner', 'public StringJoiner(CharSequence delimiter, CharSequence prefix, CharSequence suffix)']],
    ['c', `static int\nring_push(struct ring *r, /* the ring */\n          int v)\n{\n${body(4, '  r->n++;\n')}}\n`,
      ['static int ring_push(struct ring *r, int v)']],
    ['go', `package main\n\nfunc Describe(\n\ts *Stack,\n\tverbose bool,\n) string {\n${body(4, '\ts.n++\n')}\treturn ""\n}\n`,
      ['func Describe(s *Stack, verbose bool) string']],
    ['rust', `fn mul<T>(a: T, b: T) -> T\nwhere\n    T: Copy,\n{\n${body(4, '    let c = a;\n')}    c\n}\n`,
      ['fn mul<T>(a: T, b: T) -> T where T: Copy']],
    ['ruby', `class Book\n  def initialize(title,\n                 author)\n    # Store them.\n${body(4, '    @title = title\n')}  end\nend\n`,
      ['class Book', 'def initialize(title, author)']],
  ]
  for (const [lang, src, want] of cases) {
    const events = await collectEvents(code, src, { input_format: lang, max_tokens: 8 })
    assertTiles(events, src)
    const got = labels(events)
    for (const l of want) t.ok(got.includes(l), `${lang}: ${JSON.stringify(l)} in ${JSON.stringify(got)}`)
  }
  // Long signatures keep the cap: 160 characters, the last one an ellipsis.
  const params = Array.from({ length: 40 }, (_, i) => `    argument_number_${i}=None,\n`).join('')
  const long = `def configure(\n${params}):\n    return 1\n`
  const got = labels(await collectEvents(code, long, { input_format: 'python', max_tokens: 8 }))
  t.equal(got.length, 1)
  t.equal(got[0]!.length, 160)
  t.match(got[0], /^def configure\(argument_number_0=None, argument_number_1=None, .*…$/)
  // A compound statement's header is its first line but for brackets: C's `#else` is not read on.
  const c = `int main(void) {\n#ifdef A\n  a();\n#else no_a\n  b();\n  {\n${body(4, '    c();\n')}  }\n#endif\n  return 0;\n}\n`
  const cl = labels(await collectEvents(code, c, { input_format: 'c', max_tokens: 8 }))
  t.ok(cl.includes('#else no_a'), JSON.stringify(cl))
})

t.test('auto mode: the parse budget counts parser work, not time', async (t) => {
  // A minified-style line: the densest parser work per character measured (see parseBudget).
  const src = 'var a=' + Array.from({ length: 4000 }, (_, i) => `function(b${i}){return b${i}?{x:[b${i},${i}]}:b${i}+${i}}`).join(',') + ';\n'
  const spec = languageByFormat('javascript') as LanguageSpec
  const grammar = await loadGrammar(spec.grammar)
  if (grammar === null) return t.fail('javascript grammar')
  const parser = grammar.newParser()
  let work = 0
  parser.parse(src, null, { progressCallback: () => { work++; return false } })?.delete()
  parser.delete()
  t.ok(work > 0)
  t.equal(parseBudget(src), parseBudget(src), 'a function of the text alone')
  t.ok(work * 2 < parseBudget(src), `minified code stays well under the budget (${work} of ${parseBudget(src)})`)
  // Past the budget by one unit of work: no tree (the caller falls back); at it: a tree.
  const none: DocEvent[] = []
  t.equal(emitSyntax(src, spec, grammar, (e) => none.push(e), 0, work - 1), false)
  t.same(none, [])
  t.equal(emitSyntax(src, spec, grammar, () => {}, 0, work), true)

  const opts = { input_format: 'javascript', max_tokens: 200, tokenizer: CHARS }
  const calm = await split(src, opts)
  t.equal(calm.metadata.syntax_aware, true)
  // A machine so slow that every clock read is 10 s later than the last: same decision, same chunks.
  const now = performance.now.bind(performance)
  let skew = 0
  performance.now = () => now() + (skew += 10_000)
  let slow: SplitResponse
  try {
    slow = await split(src, opts)
  } finally {
    performance.now = now
  }
  t.equal(slow.metadata.syntax_aware, true)
  t.same(slow.chunks, calm.chunks)
})

t.test('a declaration that fits alone is not cut for the comment above it: the comment ends its chunk', async (t) => {
  const comment = '# The helper below is used by the loader. It exists because the older\n# implementation called the operator directly, which could recurse without\n# end when the reflected method also returned NotImplemented. Keep it small.\n'
  const fn = 'def greater_than(a, b):\n    result = a.less_than(b)\n    if result is NotImplemented:\n        return result\n    return not result and a != b\n'
  const jsdoc = '/**\n * Compares two values the way the loader expects. The older implementation\n * called the operator directly, which could recurse without end when the\n * reflected method also returned NotImplemented. Keep this helper small.\n */\n'
  const tsFn = 'export function greaterThan(a: Value, b: Value): boolean {\n  const result = a.lessThan(b)\n  if (result === undefined) {\n    return false\n  }\n  return !result && a !== b\n}\n'
  const doc = `    """${'Holds the attributes of the parser. '.repeat(6)}"""\n\n`
  const method = fn.replace(/^/gm, '    ').replace('(a, b)', '(self, a, b)')
  const cases: Array<[string, string, string, string]> = [
    // A blank line between: the comment is a block before the function's container.
    ['python', `import os\n\n${comment}\n${fn}\n\ndef other():\n    return 1\n`, comment, fn],
    // Right above: the comment is inside the container, before the signature.
    ['python', `import os\n\n${comment}${fn}\n\ndef other():\n    return 1\n`, comment, fn],
    ['typescript', `import { x } from './x'\n\n${jsdoc}${tsFn}\nexport function other(): number {\n  return 1\n}\n`, jsdoc, tsFn],
    // A class's docstring before its first method: the method goes whole.
    ['python', `class Holder:\n${doc}${method}\n    def other(self):\n        return 1\n`, doc, method],
  ]
  for (const [lang, src, above, decl] of cases) {
    const declStart = src.indexOf(decl)
    // Budgets that hold either alone, not both.
    const least = Math.max(above.length, decl.length)
    for (const max of [least + 10, above.length + decl.length - 10]) {
      const r = await split(src, { input_format: lang, max_tokens: max, tokenizer: CHARS, code_parsing: 'syntax' })
      t.same(invariantProblems(r, src, { tokenizer: charCount }), [], `${lang} @${max}: invariants`)
      const holder = r.chunks.find((c) => c.char_start <= declStart && declStart < c.char_end)!
      t.ok(holder.char_start === declStart - (src.slice(0, declStart).match(/[ \t]*$/)![0].length) && holder.char_end >= declStart + decl.trimEnd().length,
        `${lang} @${max}: the declaration starts a chunk and is whole in it: ${r.chunks.map((c) => JSON.stringify(c.text.slice(0, 40))).join(' | ')}`)
    }
  }
})

t.test('a run of comment lines is one block: it is not cut between its lines when it fits', async (t) => {
  const src = 'def f(x):\n    y = x + 1\n    # If we are not allowed to break long words, and there is already\n    # text on the current line, do nothing. Next time through the main\n    # loop we will wind up here again.\n\n    # A second run after a blank line.\n    return y\n'
  const events = await parserEvents(code, src, { input_format: 'python', code_parsing: 'syntax', max_tokens: 16 })
  const comments = events.filter((e) => e.type === 'block' && e.kind === 'comment') as Array<{ text: string }>
  t.same(comments.map((c) => c.text.trim().split('\n').length), [3, 1], 'one block per run of lines, a blank line ends a run')
  const r = await split(src, { input_format: 'python', max_tokens: 200, tokenizer: CHARS, code_parsing: 'syntax' })
  t.same(invariantProblems(r, src, { tokenizer: charCount }), [], 'invariants')
  const run = src.indexOf('    # If we')
  const runEnd = src.indexOf('again.\n') + 7
  t.ok(r.chunks.some((c) => c.char_start <= run && runEnd <= c.char_end), `the run is in one chunk: ${r.chunks.map((c) => JSON.stringify(c.text)).join(' | ')}`)
})

t.test('the comment rule: after a class docstring or a banner, and with overlap', async (t) => {
  // Reviewer's cases: the comment inside the method's container after the class docstring; and
  // overlap_tokens, where the attached-only path took the first statement too.
  const method = '    # Compares two values the way the loader expects them to be compared.\n    def greater_than(self, a, b):\n        result = a.less_than(b)\n        if result is NotImplemented:\n            return result\n        return not result and a != b\n'
  const classDoc = `class Holder:\n    """Holds the attributes of the parser and the state it keeps."""\n\n${method}\n    def other(self):\n        return 1\n`
  const fn = 'def total(values):\n    s = 0\n    for v in values:\n        s += v\n    return s\n'
  const lead = `import os\n\n# This helper computes the total of the values in a list and it is documented\n# with a fairly long comment that spans a few lines so that the comment plus\n# the function do not fit one chunk together.\n${fn}\n\ndef other(x):\n    return x + 1\n`
  const cases: Array<[string, string, Record<string, unknown>]> = [
    [classDoc, method.slice(method.indexOf('def')), { max_tokens: 64 }],
    [classDoc, method.slice(method.indexOf('def')), { max_tokens: 72 }],
    [lead, fn, { max_tokens: 64, overlap_tokens: 8 }],
  ]
  for (const [src, decl, options] of cases) {
    const r = await split(src, { input_format: 'python', code_parsing: 'syntax', tokenizer: 'approx', ...options })
    t.same(invariantProblems(r, src, { tokenizer: await tokenizerByName('approx').load() }), [], 'invariants')
    const at = src.indexOf(decl)
    t.ok(r.chunks.some((c) => c.char_start <= at && at + decl.trimEnd().length <= c.char_end), `${JSON.stringify(options)}: the declaration whole: ${r.chunks.map((c) => JSON.stringify(c.text.slice(0, 30))).join(' | ')}`)
  }
})

t.test('zig: a generic type (a function that returns a struct) is opened into its members', async (t) => {
  const method = (i: number): string => `        /// Method ${i} does its part of the work.\n        pub fn method${i}(self: *Self, value: T) void {\n${Array.from({ length: 6 }, (_, k) => `            self.total += value * ${k + 1} + ${i};\n`).join('')}        }\n\n`
  const source = `const std = @import("std");\n\npub fn List(comptime T: type) type {\n    return struct {\n        const Self = @This();\n        total: T = 0,\n\n${Array.from({ length: 12 }, (_, i) => method(i)).join('')}    };\n}\n`
  const r = await split(source, { input_format: 'zig', max_tokens: 128, tokenizer: 'approx' })
  t.equal(r.chunks.map((c) => c.text).join(''), source)
  t.ok(r.chunks.length > 3, `${r.chunks.length} chunks`)
  t.ok(r.chunks.some((c) => c.path.includes('return struct')), 'the struct is a container in the path')
  // Each method fits a chunk: none is cut (a chunk boundary inside `pub fn method..{ ... }`).
  for (let i = 0; i < 12; i++) {
    const start = source.indexOf(`        /// Method ${i} `)
    const end = source.indexOf('        }\n', start) + 10
    t.notOk(r.chunks.some((c) => c.char_start > start && c.char_start < end), `method${i} whole`)
  }
})

t.test('a small method under a doc comment over the budget is not cut', async (t) => {
  const method = '    static final int hash(Object key) {\n        int h;\n        return (key == null) ? 0 : (h = key.hashCode()) ^ (h >>> 16);\n    }\n'
  // The comment is cut in pieces; its last piece and the method did not fit one chunk, which
  // ended inside the method (HashMap.hash() at 128 tokens).
  for (let lines = 12; lines <= 24; lines++) {
    const javadoc = `    /**\n${Array.from({ length: lines }, (_, i) => `     * Line ${i} of the comment explains the spreading of the hash bits.\n`).join('')}     */\n`
    const source = `public class Table {\n    private int size;\n\n${javadoc}${method}\n    public int size() {\n        return size;\n    }\n}\n`
    const r = await split(source, { input_format: 'java', max_tokens: 128, tokenizer: 'o200k_base' })
    t.equal(r.chunks.map((c) => c.text).join(''), source)
    const start = source.indexOf(method)
    t.notOk(r.chunks.some((c) => c.char_start > start && c.char_start < start + method.length), `${lines} lines of comment: the method is whole`)
  }
})

t.test('fallback: a file that is one class is cut between its members, not line by line', async (t) => {
  const method = (i: number): string => `    /** Method ${i} adds its part. */\n    public int method${i}(int value) {\n${Array.from({ length: 5 }, (_, k) => `        value += compute(${i}, ${k}, value);\n`).join('')}        return value;\n    }\n\n`
  const source = `package demo;\n\npublic class Demo {\n    private int total;\n\n${Array.from({ length: 12 }, (_, i) => method(i)).join('')}}\n`
  const r = await split(source, { input_format: 'java', code_parsing: 'fallback', max_tokens: 128, tokenizer: 'o200k_base' })
  t.equal(r.chunks.map((c) => c.text).join(''), source)
  for (let i = 0; i < 12; i++) {
    const start = source.indexOf(`    /** Method ${i} `)
    const end = source.indexOf('    }\n', start) + 6
    t.notOk(r.chunks.some((c) => c.char_start > start && c.char_start < end), `method${i} whole, with its comment`)
  }
})
