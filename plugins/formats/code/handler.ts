/**
 * The code parser's handler: tree-sitter's syntax walk, or the fallback's blocks. Loaded with
 * the first code document (index.ts holds what lists and detects the languages).
 */
import type { DocEvent } from '../../../core/events.js'
import type { ParserContext, ParserHandler } from '../../../core/types.js'
import { GENERIC_SYNTAX, fallbackEvents } from './fallback.js'
import type { Grammar } from './grammars.js'
import type { LanguageSpec } from './languages.js'
import type { Mode, codeOptions } from './options.js'
import { emitSyntax, parseBudget } from './syntax.js'

export const EXTRA_MESSAGE = 'syntax-aware code splitting needs the code-parsing extra: npm install web-tree-sitter'

/**
 * Containers of at most this many UTF-8 bytes fit the budget whatever the tokenizer (a token
 * covers at least one byte), so the packer never opens them and the walk need not either.
 */
function fitsBytes (options: ParserContext['options']): number {
  const max = Number(options.max_tokens) - Number(options.overlap_tokens ?? 0)
  return Number.isFinite(max) && max > 0 ? max : 0
}

export function codeParser (ctx: ParserContext<typeof codeOptions>, spec: LanguageSpec | undefined, grammar: Grammar | null, mode: Mode): ParserHandler<string> {
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
