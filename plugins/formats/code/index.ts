/**
 * Source code in 16 languages (17 grammars with TSX), syntax-aware through tree-sitter when the
 * `code-parsing` extra (web-tree-sitter) is installed, and by blank lines, indentation and
 * bracket depth when it is not. Declarations are containers whose members are their statements
 * and nested declarations (see syntax.ts); the fallback gives flat blocks (see fallback.ts).
 *
 * The whole source is buffered: a parser needs all of it, and so does error recovery.
 */
import { definePlugin } from '../../../core/registry.js'
import type { ParserContext, ParserHandler } from '../../../core/types.js'
import { loadGrammar, type Grammar } from './grammars.js'
import { LANGUAGES, languageByFilename, languageByFormat, sniffLanguage, type LanguageSpec } from './languages.js'
import { MODES, codeOptions, type Mode } from './options.js'

export { setGrammarLoader, type Grammar, type GrammarLoader } from './grammars.js'

/**
 * The language `input_format` names (`auto` has chosen one by then: by the file's extension,
 * or by a shebang through formatOf), else the file name's.
 */
function chosenLanguage (options: ParserContext['options']): LanguageSpec | undefined {
  return languageByFormat(String(options.input_format)) ?? (typeof options.filename === 'string' ? languageByFilename(options.filename) : undefined)
}

export default definePlugin({
  kind: 'parser',
  name: 'code',
  docsplit: '^1',
  description: 'Source code (Python, JavaScript, TypeScript, TSX, Bash, C, C++, C#, Go, Java, Kotlin, Lua, PHP, Ruby, Rust, Swift, Zig): one container per class or function, cut at statements.',
  extra: 'code-parsing',
  formats: [...LANGUAGES.map((l) => l.name), ...LANGUAGES.flatMap((l) => l.aliases)],
  extensions: LANGUAGES.flatMap((l) => l.extensions),
  extensionFormats: Object.fromEntries(LANGUAGES.flatMap((l) => l.extensions.map((e) => [e, l.name]))),
  formatAliases: Object.fromEntries(LANGUAGES.flatMap((l) => l.aliases.map((a) => [a, l.name]))),
  reads: 'text',
  whole: true,
  defaultSplitter: 'sibling',
  options: codeOptions,
  detect (sample: string): number {
    return sniffLanguage(sample) !== undefined ? 0.9 : 0
  },
  formatOf (sample: string): string | undefined {
    return sniffLanguage(sample)?.name
  },
  async create (ctx: ParserContext<typeof codeOptions>): Promise<ParserHandler<string>> {
    const { codeParser, EXTRA_MESSAGE } = await import('./handler.js')
    const mode = (MODES as readonly string[]).includes(String(ctx.options.code_parsing)) ? ctx.options.code_parsing as Mode : 'auto'
    const spec = chosenLanguage(ctx.options)
    let grammar: Grammar | null = null
    if (mode !== 'fallback') {
      if (spec !== undefined) {
        grammar = await loadGrammar(spec.grammar)
        if (grammar === null && mode === 'syntax') ctx.fail('DOCSPLIT_EXTRA_UNAVAILABLE', EXTRA_MESSAGE)
      }
    }
    return codeParser(ctx, spec, grammar, mode)
  },
})
