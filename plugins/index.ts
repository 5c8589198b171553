/**
 * The built-in plugins: the only file that lists them, one line each. Each folder
 * default-exports what it defines with definePlugin, and registers through the same door as a
 * third-party plugin. Order matters only for `docsplit formats` listings.
 */
import { register } from '../core/registry.js'
import type { Static } from 'typebox'
import type { OptionsOf } from '../core/types.js'
import type { codeOptions } from './formats/code/options.js'
import sibling from './splitters/sibling/index.js'; register(sibling)
import record from './splitters/record/index.js'; register(record)
import text from './formats/text/index.js'; register(text)
import json from './formats/json/index.js'; register(json)
import xml from './formats/xml/index.js'; register(xml)
import yaml from './formats/yaml/index.js'; register(yaml)
import log from './formats/log/index.js'; register(log)
import csv from './formats/csv/index.js'; register(csv)
import xlsx from './formats/xlsx/index.js'; register(xlsx)
import code from './formats/code/index.js'; register(code)
import markdown from './formats/markdown/index.js'; register(markdown)
import approx from './tokenizers/approx/index.js'; register(approx)
import tiktoken from './tokenizers/tiktoken/index.js'; register(tiktoken)

/**
 * The built-in plugins' options, typed for `split()` (core's PluginOptions lists no format's).
 * Code's come from its options module: see there.
 */
declare module '../core/pipeline.js' {
  interface PluginOptions extends OptionsOf<typeof log>, OptionsOf<typeof csv>, OptionsOf<typeof xml>, OptionsOf<typeof xlsx>, OptionsOf<typeof sibling>, Static<typeof codeOptions> {}
}
