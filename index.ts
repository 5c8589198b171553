/** The `docsplit` package: the engine's public API with the built-in plugins registered. */
import './plugins/index.js'

export * from './core/index.js'
/**
 * TypeBox, for a plugin's `options` schema: the copy docsplit uses (typebox 1.x, bundled into
 * dist/vendor/), so a plugin needs no dependency of its own and its schemas type-check against
 * docsplit's. `@sinclair/typebox` (0.x) is an older major whose types do not match.
 */
export { Type } from 'typebox'
export type { Static, TSchema, TObject } from 'typebox'
