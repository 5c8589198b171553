/** The `docsplit` package: the engine's public API with the built-in plugins registered. */
import './plugins/index.js'

export * from './core/index.js'
