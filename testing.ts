/** `docsplit/testing`: the conformance kit, with the built-in plugins (and `approx`) registered. */
import './plugins/index.js'

export * from './core/testing.js'
