/**
 * The built-in plugins: the only file that lists them, one line each. Each folder
 * default-exports what it defines with definePlugin, and registers through the same door as a
 * third-party plugin. Order matters only for `docsplit formats` listings.
 */
import { register } from '../core/registry.js'
import sibling from './splitters/sibling/index.js'; register(sibling)
import record from './splitters/record/index.js'; register(record)
import text from './formats/text/index.js'; register(text)
