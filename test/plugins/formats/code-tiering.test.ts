/**
 * The grammars whose lexer is one giant WebAssembly function (swift, bash, kotlin) run on
 * Liftoff code only: V8 never spends seconds tiering that function up with TurboFan, which a
 * process's exit waited for. Told by V8's own trace of what it compiles, not by a clock. Once
 * another grammar loads, WebAssembly tiers up again: a module compiled after does.
 */
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { loadGrammar } from '../../../plugins/formats/code/grammars.js'

const dist = fileURLToPath(new URL('../../../dist/index.js', import.meta.url))

/** Function bodies this large (bytes) are the giant lexers; the runtime's largest is 27 KB. */
const GIANT = 100_000

// Swift code that made V8 tier Swift's 435 KB lexer up (16 KB of it did); then TypeScript, and a
// module of one hot loop (23 bytes of body) compiled after it, which must tier up.
const probe = [0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 127, 1, 127, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0,
  10, 25, 1, 23, 1, 1, 127, 3, 64, 32, 1, 65, 1, 106, 33, 1, 32, 1, 32, 0, 72, 13, 0, 11, 32, 1, 11]
const script = `
import { split } from ${JSON.stringify(dist)}
const swift = 'struct S { let n: Int\\n  func f(k: Int) -> [String] { return (0..<k).map { "x\\\\($0 + n)" } }\\n}\\n'.repeat(200)
await split(swift, { input_format: 'swift', max_tokens: 64 })
await split('const a = 1\\n', { input_format: 'typescript' })
const { f } = new WebAssembly.Instance(new WebAssembly.Module(new Uint8Array(${JSON.stringify(probe)}))).exports
for (let i = 0; i < 20; i++) f(1e6)
await new Promise((resolve) => setTimeout(resolve, 200))
`

t.test('a giant lexer is never tiered up with TurboFan; the other grammars still are', { skip: await loadGrammar('swift') === null ? 'the code-parsing extra (web-tree-sitter) is not installed' : false }, async (t) => {
  const trace = execFileSync(process.execPath, ['--trace-wasm-compilation-times', '--input-type=module', '-e', script], { encoding: 'utf8', maxBuffer: 256 << 20 })
  const turbofan = [...trace.matchAll(/using TurboFan, took \d+ ms .*? bodysize (\d+)/g)].map((m) => Number(m[1]))
  t.same(turbofan.filter((size) => size >= GIANT), [], 'no TurboFan compile of a function over 100 KB')
  t.ok(turbofan.includes(23), 'a module compiled after another grammar loaded is tiered up')
})
