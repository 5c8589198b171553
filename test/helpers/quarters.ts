/**
 * A test tokenizer that is exact but not cheap, and tells what it reads: one token per 4
 * UTF-16 units, rounded up; its tally sums lengths. Tests of the engine's and the splitters'
 * counting register it under their own name and watch the hooks.
 */
import { definePlugin } from '../../index.js'
import type { TokenizerPlugin } from '../../core/types.js'

export const quarters = (n: number): number => Math.ceil(n / 4)

export interface QuartersHooks {
  /** A text counted alone. */
  count?: (text: string) => void
  /** A part added to a tally, and whether its count came with it. */
  add?: (part: string, known: boolean) => void
  /** When given, the tokenizer offers countMany, and this sees each batch. */
  many?: (texts: string[]) => void
}

export function quartersTokenizer (name: string, hooks: QuartersHooks = {}): TokenizerPlugin {
  const many = hooks.many
  return definePlugin<TokenizerPlugin>({
    kind: 'tokenizer',
    name,
    docsplit: '^1',
    load: () => ({
      name,
      count: (text: string) => { hooks.count?.(text); return quarters(text.length) },
      // Reads only as far as the limit, as an encoder that stops early does.
      exceeds: (text: string, limit: number) => { hooks.count?.(text.slice(0, (limit + 1) * 4)); return quarters(text.length) > limit },
      tally: () => {
        let length = 0
        let before = 0
        return {
          add: (part: string, known?: number) => { hooks.add?.(part, known !== undefined); before = length; length += part.length; return quarters(length) },
          undo: () => { length = before; return quarters(length) },
          backlog: () => 0,
        }
      },
      ...(many === undefined ? {} : { countMany: async (texts: string[]) => { many(texts); return texts.map((text) => quarters(text.length)) } }),
    }),
  })
}
