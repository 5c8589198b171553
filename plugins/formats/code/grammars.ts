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
    const language = ts.Language.loadSync(new WebAssembly.Module(await readFile(file)))
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
