/**
 * Lazy loading of web-tree-sitter (the optional `code-parsing` extra) and of the vendored
 * grammars. Each grammar loads at most once per process; a failure is remembered too, so a
 * missing extra costs one failed import, not one per request.
 *
 * The compiled plugin lives in dist/plugins/formats/code/ while the .wasm files stay in
 * plugins/formats/code/grammars/, so the folder is looked up next to this module first, then
 * from the package root.
 */
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import type { Language, Parser } from 'web-tree-sitter'

/** What the syntax-aware path needs: a parser factory for one language. */
export interface Grammar {
  language: Language
  newParser (): Parser
}

/** Loads a grammar by its file name (without `.wasm`); null when it cannot be loaded. */
export type GrammarLoader = (grammar: string) => Promise<Grammar | null>

const GRAMMAR_DIRS = ['./grammars/', '../../../../plugins/formats/code/grammars/']

let grammarDir: string | null | undefined

/** The folder holding the vendored grammars and manifest.json, or null. */
export function grammarsFolder (): string | null {
  if (grammarDir === undefined) {
    grammarDir = null
    for (const rel of GRAMMAR_DIRS) {
      const dir = fileURLToPath(new URL(rel, import.meta.url))
      if (existsSync(dir + 'manifest.json')) {
        grammarDir = dir
        break
      }
    }
  }
  return grammarDir
}

type TreeSitter = typeof import('web-tree-sitter')
/** JavaScript's WebAssembly global, which the ES library this project compiles against does not declare. */
declare const WebAssembly: { Module: new (bytes: Uint8Array) => Parameters<typeof Language.loadSync>[0] }

let runtime: Promise<TreeSitter | null> | undefined

function loadRuntime (): Promise<TreeSitter | null> {
  runtime ??= (async () => {
    try {
      const name = 'web-tree-sitter'
      const mod = await import(name) as TreeSitter
      await mod.Parser.init()
      return mod
    } catch {
      return null
    }
  })()
  return runtime
}

/**
 * Grammars whose lexer is one WebAssembly function of 140-435 KB. V8 soon tiers such a function
 * up with TurboFan, on a background thread, in 4.1 s for Swift's, 1.0 s for Bash's and 0.8 s for
 * Kotlin's; a process's exit waits for it (3 lines of Swift: output at 0.3 s, exit at 4.4 s), and
 * it cost more than it saved even on 1.8 MB of Swift (4.6 s against 1.8 s without).
 */
const BASELINE_ONLY = new Set(['swift', 'bash', 'kotlin'])
/** The process was started with its own WebAssembly tiering flags: they are left as given. */
const tieringGiven = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)].some((flag) => /^--(no-)?(liftoff|wasm-tier|wasm-dynamic-tiering)/.test(flag))
let tiering = true

/**
 * WebAssembly tier-up off in this process while the grammar loaded last is one of
 * BASELINE_ONLY, on again once another loads. V8's flags are process-wide and read after a
 * module compiles, not as it does (off around the compile alone still tiered Swift's lexer up),
 * so it stays off until then; measured on Node 20: a module compiled while it is off never tiers
 * up, one compiled after it is on again does (a test checks both).
 */
function setTiering (grammar: string): void {
  const on = !BASELINE_ONLY.has(grammar)
  if (tieringGiven || on === tiering) return
  tiering = on
  setFlagsFromString(on ? '--wasm-tier-up' : '--no-wasm-tier-up')
  setFlagsFromString(on ? '--wasm-dynamic-tiering' : '--no-wasm-dynamic-tiering')
}

const defaultLoader: GrammarLoader = async (grammar) => {
  const ts = await loadRuntime()
  const dir = grammarsFolder()
  if (ts === null || dir === null || !/^[a-z_]+$/.test(grammar)) return null
  const file = `${dir}${grammar}.wasm`
  if (!existsSync(file)) return null
  try {
    // Compiled synchronously, not by Language.load's WebAssembly.instantiate: V8's asynchronous
    // compile waited behind the grammars loaded before it (the 17th language's first split
    // waited 4.4 s, 18 s on a busy machine); compiled here, each first load takes 3-130 ms.
    const bytes = await readFile(file)
    setTiering(grammar)
    const language = ts.Language.loadSync(new WebAssembly.Module(bytes))
    return {
      language,
      newParser: () => {
        const p = new ts.Parser()
        p.setLanguage(language)
        return p
      },
    }
  } catch {
    return null
  }
}

let loader: GrammarLoader = defaultLoader
const cache = new Map<string, Promise<Grammar | null>>()

/** The grammar, loaded once per process (null when web-tree-sitter or the grammar is missing). */
export function loadGrammar (grammar: string): Promise<Grammar | null> {
  let p = cache.get(grammar)
  if (p === undefined) {
    p = loader(grammar).catch(() => null)
    cache.set(grammar, p)
  }
  return p
}

/**
 * Replaces the grammar loader (tests use it to make the extra unavailable); no argument restores
 * the default. Clears the per-process cache.
 */
export function setGrammarLoader (next?: GrammarLoader): void {
  loader = next ?? defaultLoader
  cache.clear()
}
