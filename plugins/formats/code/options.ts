/**
 * The code plugin's options, apart from the plugin: the list of built-in plugins types split()
 * with them, and importing the plugin's own declarations would bring in web-tree-sitter's, which
 * need @types/emscripten that a user of docsplit does not have.
 */
import { Type } from 'typebox'

export const MODES = ['auto', 'syntax', 'fallback'] as const
export type Mode = typeof MODES[number]

export const codeOptions = Type.Object({
  // Unsafe: the same schema (a string enum), typed as its three names rather than any string.
  code_parsing: Type.Optional(Type.Unsafe<Mode>(Type.String({
    enum: [...MODES],
    default: 'auto',
    description: 'Code formats: `auto` parses with tree-sitter when the code-parsing extra is installed and falls back to blank lines and indentation otherwise; `syntax` requires the extra; `fallback` never parses.',
  }))),
})
