/**
 * Source code in 16 languages (17 grammars with TSX), syntax-aware through tree-sitter when the
 * `code-parsing` extra (web-tree-sitter) is installed, and by blank lines, indentation and
 * bracket depth when it is not. Declarations are containers whose members are their statements
 * and nested declarations (see syntax.ts); the fallback gives flat blocks (see fallback.ts).
 *
 * The whole source is buffered: a parser needs all of it, and so does error recovery.
 */
import type { DocEvent } from '../../../core/events.js'
import { definePlugin } from '../../../core/registry.js'
import type { ParserContext, ParserHandler } from '../../../core/types.js'
import { GENERIC_SYNTAX, fallbackEvents } from './fallback.js'
import { loadGrammar, type Grammar } from './grammars.js'
import { LANGUAGES, languageByFilename, languageByFormat, sniffLanguage, type LanguageSpec } from './languages.js'
import { MODES, codeOptions, type Mode } from './options.js'
import { emitSyntax, parseBudget } from './syntax.js'

export { setGrammarLoader, type Grammar, type GrammarLoader } from './grammars.js'

const EXTRA_MESSAGE = 'syntax-aware code splitting needs the code-parsing extra: npm install web-tree-sitter'

/**
 * The language `input_format` names (`auto` has chosen one by then: by the file's extension,
 * or by a shebang through formatOf), else the file name's.
 */
function chosenLanguage (options: ParserContext['options']): LanguageSpec | undefined {
  return languageByFormat(String(options.input_format)) ?? (typeof options.filename === 'string' ? languageByFilename(options.filename) : undefined)
}

/**
 * Containers of at most this many UTF-8 bytes fit the budget whatever the tokenizer (a token
 * covers at least one byte), so the packer never opens them and the walk need not either.
 */
function fitsBytes (options: ParserContext['options']): number {
  const max = Number(options.max_tokens) - Number(options.overlap_tokens ?? 0)
  return Number.isFinite(max) && max > 0 ? max : 0
}

function codeParser (ctx: ParserContext, spec: LanguageSpec | undefined, grammar: Grammar | null, mode: Mode): ParserHandler<string> {
  let whole = ''
  return {
    write (all: string): void {
      whole += all
    },
    end (): void {
      const text = whole
      whole = ''
      if (mode === 'syntax' && spec === undefined) {
        ctx.fail('DOCSPLIT_UNSUPPORTED_FORMAT', 'code_parsing "syntax" needs to know the language: give input_format (such as "python") or a filename with its extension')
      }
      if (grammar === null && mode === 'syntax') ctx.fail('DOCSPLIT_EXTRA_UNAVAILABLE', EXTRA_MESSAGE)
      let events: DocEvent[] | null = null
      if (grammar !== null && spec !== undefined) {
        const out: DocEvent[] = []
        try {
          // `syntax` was asked for: no work limit, only the caller's (the service's split time limit).
          const budget = mode === 'syntax' ? Infinity : parseBudget(text)
          if (emitSyntax(text, spec, grammar, (e) => out.push(e), fitsBytes(ctx.options), budget)) events = out
        } catch {
          events = null // a walker bug must not lose the document: fall back
        }
      }
      ctx.emit({ type: 'info', key: 'language', value: spec?.name ?? 'unknown' })
      ctx.emit({ type: 'info', key: 'syntax_aware', value: events !== null, scope: 'metadata' })
      if (events !== null) for (const e of events) ctx.emit(e)
      else fallbackEvents(text, spec ?? GENERIC_SYNTAX, ctx.emit)
    },
  }
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
  async create (ctx: ParserContext): Promise<ParserHandler<string>> {
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
