/**
 * Dev-only: regenerates plugins/formats/code/grammars/ (the vendored tree-sitter grammars of the
 * `code-parsing` extra) and its manifest.json.
 *
 *   node --import tsx scripts/vendor-grammars.ts            # fetch, copy, write manifest.json
 *   node --import tsx scripts/vendor-grammars.ts --check    # only verify files against manifest.json
 *
 * Why vendored: the per-language npm packages are 1.4–73 MB each (C sources, node-gyp install
 * scripts) and conflict on their optional `tree-sitter` peers (npm ERESOLVE), while the 17 .wasm
 * files are about 27 MB. web-tree-sitter >= 0.26 needs grammars in the `dylink.0` format, which
 * the popular `tree-sitter-wasms` bundle does not have (see DEPENDENCIES.md §5), so each grammar
 * comes from its own package; Swift comes from `@repomix/tree-sitter-wasms` (the
 * `tree-sitter-swift` package ships no .wasm).
 *
 * Each package is fetched with `npm pack` into a temporary folder outside the repo (no install,
 * no scripts run), the one .wasm is copied, and its sha256 goes into manifest.json. A test checks
 * every vendored file against the manifest and loads all of them.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

interface Source {
  /** Grammar name used by the plugin's language table (file is `<grammar>.wasm`). */
  grammar: string
  /** docsplit input formats that use it. */
  languages: string[]
  package: string
  version: string
  /** Path of the .wasm inside the package tarball (under `package/`). */
  path: string
  license: string
}

export const SOURCES: Source[] = [
  { grammar: 'python', languages: ['python'], package: 'tree-sitter-python', version: '0.25.0', path: 'tree-sitter-python.wasm', license: 'MIT' },
  { grammar: 'javascript', languages: ['javascript'], package: 'tree-sitter-javascript', version: '0.25.0', path: 'tree-sitter-javascript.wasm', license: 'MIT' },
  { grammar: 'typescript', languages: ['typescript'], package: 'tree-sitter-typescript', version: '0.23.2', path: 'tree-sitter-typescript.wasm', license: 'MIT' },
  { grammar: 'tsx', languages: ['tsx'], package: 'tree-sitter-typescript', version: '0.23.2', path: 'tree-sitter-tsx.wasm', license: 'MIT' },
  { grammar: 'bash', languages: ['bash'], package: 'tree-sitter-bash', version: '0.25.1', path: 'tree-sitter-bash.wasm', license: 'MIT' },
  { grammar: 'c', languages: ['c'], package: 'tree-sitter-c', version: '0.24.1', path: 'tree-sitter-c.wasm', license: 'MIT' },
  { grammar: 'cpp', languages: ['cpp'], package: 'tree-sitter-cpp', version: '0.23.4', path: 'tree-sitter-cpp.wasm', license: 'MIT' },
  { grammar: 'c_sharp', languages: ['csharp'], package: 'tree-sitter-c-sharp', version: '0.23.5', path: 'tree-sitter-c_sharp.wasm', license: 'MIT' },
  { grammar: 'go', languages: ['go'], package: 'tree-sitter-go', version: '0.25.0', path: 'tree-sitter-go.wasm', license: 'MIT' },
  { grammar: 'java', languages: ['java'], package: 'tree-sitter-java', version: '0.23.5', path: 'tree-sitter-java.wasm', license: 'MIT' },
  { grammar: 'kotlin', languages: ['kotlin'], package: '@tree-sitter-grammars/tree-sitter-kotlin', version: '1.1.0', path: 'tree-sitter-kotlin.wasm', license: 'MIT' },
  { grammar: 'lua', languages: ['lua'], package: '@tree-sitter-grammars/tree-sitter-lua', version: '0.4.1', path: 'tree-sitter-lua.wasm', license: 'MIT' },
  { grammar: 'php', languages: ['php'], package: 'tree-sitter-php', version: '0.24.2', path: 'tree-sitter-php.wasm', license: 'MIT' },
  { grammar: 'ruby', languages: ['ruby'], package: 'tree-sitter-ruby', version: '0.23.1', path: 'tree-sitter-ruby.wasm', license: 'MIT' },
  { grammar: 'rust', languages: ['rust'], package: 'tree-sitter-rust', version: '0.24.0', path: 'tree-sitter-rust.wasm', license: 'MIT' },
  // Built by repomix from tree-sitter-swift ^0.7.1 (MIT); the bundle itself is Unlicense.
  { grammar: 'swift', languages: ['swift'], package: '@repomix/tree-sitter-wasms', version: '0.1.17', path: 'out/tree-sitter-swift.wasm', license: 'MIT (tree-sitter-swift); bundle Unlicense' },
  { grammar: 'zig', languages: ['zig'], package: '@tree-sitter-grammars/tree-sitter-zig', version: '1.1.2', path: 'tree-sitter-zig.wasm', license: 'MIT' },
]

export interface ManifestEntry {
  grammar: string
  languages: string[]
  file: string
  package: string
  version: string
  path: string
  license: string
  bytes: number
  sha256: string
}

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..')
const target = join(root, 'plugins/formats/code/grammars')

function sha256 (file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex')
}

function check (): number {
  const manifest = JSON.parse(readFileSync(join(target, 'manifest.json'), 'utf8')) as { grammars: ManifestEntry[] }
  let bad = 0
  for (const e of manifest.grammars) {
    const file = join(target, e.file)
    const ok = existsSync(file) && sha256(file) === e.sha256
    if (!ok) bad++
    console.log(`${ok ? 'ok ' : 'BAD'} ${e.file} ${e.package}@${e.version}`)
  }
  return bad
}

function vendor (): void {
  const scratch = mkdtempSync(join(tmpdir(), 'docsplit-grammars-'))
  try {
    mkdirSync(target, { recursive: true })
    const unpacked = new Map<string, string>()
    const entries: ManifestEntry[] = []
    for (const s of SOURCES) {
      const spec = `${s.package}@${s.version}`
      let dir = unpacked.get(spec)
      if (dir === undefined) {
        const out = execFileSync('npm', ['pack', spec, '--silent', '--pack-destination', scratch], { cwd: scratch, encoding: 'utf8' })
        const tgz = out.trim().split('\n').pop() ?? ''
        dir = join(scratch, `x-${unpacked.size}`)
        mkdirSync(dir)
        execFileSync('tar', ['xzf', join(scratch, tgz), '-C', dir])
        unpacked.set(spec, dir)
      }
      const from = join(dir, 'package', s.path)
      const file = `${s.grammar}.wasm`
      copyFileSync(from, join(target, file))
      entries.push({ ...s, file, bytes: statSync(from).size, sha256: sha256(from) })
      console.log(`${file}  ${spec}  ${statSync(from).size} bytes`)
    }
    for (const name of readdirSync(target)) {
      if (name.endsWith('.wasm') && !entries.some((e) => e.file === name)) rmSync(join(target, name))
    }
    const manifest = {
      about: 'tree-sitter grammars for the code-parsing extra, loaded by web-tree-sitter 0.27.x. Regenerate with scripts/vendor-grammars.ts.',
      web_tree_sitter: '0.27.1',
      grammars: entries,
    }
    writeFileSync(join(target, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n')
    const total = entries.reduce((n, e) => n + e.bytes, 0)
    console.log(`${entries.length} grammars, ${(total / 1e6).toFixed(1)} MB`)
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--check')) process.exitCode = check() === 0 ? 0 : 1
  else vendor()
}
