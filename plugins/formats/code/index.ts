/**
 * Source code in 16 languages (17 grammars with TSX), syntax-aware through tree-sitter when the
 * `code-parsing` extra (web-tree-sitter) is installed, and by blank lines, indentation and
 * bracket depth when it is not. Declarations are containers whose members are their statements
 * and nested declarations (see syntax.ts); the fallback gives flat blocks (see fallback.ts).
 *
 * The whole source is buffered: a parser needs all of it, and so does error recovery.
 */
import { Type } from 'typebox'
import type { DocEvent } from '../../../core/events.js'
import { definePlugin } from '../../../core/registry.js'
import type { ParserContext, ParserHandler } from '../../../core/types.js'
import { GENERIC_SYNTAX, fallbackEvents } from './fallback.js'
import { loadGrammar, loadedGrammar, type Grammar } from './grammars.js'
import { LANGUAGES, languageByFilename, languageByFormat, sniffLanguage, type LanguageSpec } from './languages.js'
import { emitSyntax, parseBudgetMs } from './syntax.js'

export { setGrammarLoader, type Grammar, type GrammarLoader } from './grammars.js'

const MODES = ['auto', 'syntax', 'fallback'] as const
type Mode = typeof MODES[number]

const EXTRA_MESSAGE = 'syntax-aware code splitting needs the code-parsing extra: npm install web-tree-sitter'

/** Languages a shebang or `<?php` can name (see sniffLanguage). */
const SNIFFABLE = ['python', 'bash', 'javascript', 'ruby', 'lua', 'php']

/**
 * The language chosen by `input_format`, else by `filename`; undefined until the text is seen.
 * `sure` is false when the format is the plugin's first one without a file name: that is also
 * what `auto` gives after content detection (a shebang), so the text may still name another.
 */
function chosenLanguage (options: ParserContext['options']): { spec: LanguageSpec | undefined, sure: boolean } {
  const byFormat = languageByFormat(String(options.input_format))
  const hasName = typeof options.filename === 'string'
  if (byFormat !== undefined) return { spec: byFormat, sure: hasName || byFormat !== LANGUAGES[0] || options.input_format !== LANGUAGES[0]?.name }
  return { spec: hasName ? languageByFilename(options.filename as string) : undefined, sure: true }
}

/**
 * Containers of at most this many UTF-8 bytes fit the budget whatever the tokenizer (a token
 * covers at least one byte), so the packer never opens them and the walk need not either.
 */
function fitsBytes (options: ParserContext['options']): number {
  const max = Number(options.max_tokens) - Number(options.overlap_tokens ?? 0)
  return Number.isFinite(max) && max > 0 ? max : 0
}

function codeParser (ctx: ParserContext, chosen: LanguageSpec | undefined, sure: boolean, grammar: Grammar | null, mode: Mode): ParserHandler<string> {
  let whole = ''
  return {
    write (all: string): void {
      whole += all
    },
    end (): void {
      const text = whole
      whole = ''
      const sniffed = sure ? undefined : sniffLanguage(text)
      const spec = sniffed ?? chosen
      let g = spec === chosen ? grammar : null
      if (g === null && spec !== undefined && spec !== chosen && mode !== 'fallback') g = loadedGrammar(spec.grammar)
      if (mode === 'syntax' && spec === undefined) {
        ctx.fail('DOCSPLIT_UNSUPPORTED_FORMAT', 'code_parsing "syntax" needs to know the language: give input_format (such as "python") or a filename with its extension')
      }
      if (g === null && mode === 'syntax') ctx.fail('DOCSPLIT_EXTRA_UNAVAILABLE', EXTRA_MESSAGE)
      let events: DocEvent[] | null = null
      if (g !== null && spec !== undefined) {
        const out: DocEvent[] = []
        try {
          // `syntax` was asked for: no time limit but the caller's (the service's split budget).
          const budget = mode === 'syntax' ? Infinity : parseBudgetMs(text)
          if (emitSyntax(text, spec, g, (e) => out.push(e), fitsBytes(ctx.options), budget)) events = out
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
  options: Type.Object({
    code_parsing: Type.Optional(Type.String({
      enum: [...MODES],
      default: 'auto',
      description: 'Code formats: `auto` parses with tree-sitter when the code-parsing extra is installed and falls back to blank lines and indentation otherwise; `syntax` requires the extra; `fallback` never parses.',
    })),
  }),
  detect (sample: string): number {
    return sniffLanguage(sample) !== undefined ? 0.9 : 0
  },
  async create (ctx: ParserContext): Promise<ParserHandler<string>> {
    const mode = (MODES as readonly string[]).includes(String(ctx.options.code_parsing)) ? ctx.options.code_parsing as Mode : 'auto'
    const { spec, sure } = chosenLanguage(ctx.options)
    let grammar: Grammar | null = null
    if (mode !== 'fallback') {
      // Not sure of the language: have every grammar a shebang can name ready for end().
      if (!sure) await Promise.all(SNIFFABLE.map((name) => loadGrammar(languageByFormat(name)?.grammar ?? name)))
      if (spec !== undefined) {
        grammar = await loadGrammar(spec.grammar)
        if (grammar === null && mode === 'syntax') ctx.fail('DOCSPLIT_EXTRA_UNAVAILABLE', EXTRA_MESSAGE)
      }
    }
    return codeParser(ctx, spec, sure, grammar, mode)
  },
})
