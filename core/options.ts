/**
 * One table of split options, shared by the library, the CLI (`--max-tokens` is `max_tokens`)
 * and the HTTP service (JSON keys and form fields). Plugins add their own options; they are
 * validated by core before any plugin code sees them.
 */
import { Type, type TObject, type TSchema } from 'typebox'
import { DEFAULT_TOKENIZER, MAX_TOKENS, MIN_TOKENS, baseOptions } from './base-options.js'
import { checkSimple, isSimpleSchema } from './check.js'
import { DocsplitError, listValues } from './errors.js'
import { MODEL_NAME_CHARACTERS, MODEL_NAME_MAX, formatNames, listPackers, listParsers, listTokenizers, tokenizerAliases, tokenizerModelPrefixes } from './registry.js'
import { didYouMean } from './suggest.js'
import type { CoreOptions, ResolvedOptions } from './types.js'

export { MIN_TOKENS, MAX_TOKENS, DEFAULT_TOKENIZER, baseOptions }

type BaseName = keyof typeof baseOptions
/** CoreOptions, the type plugins are given, names every option of the table and no other. */
const coreOptionsNameTheTable: [BaseName] extends [keyof CoreOptions] ? [keyof CoreOptions] extends [BaseName] ? true : never : never = true
void coreOptionsNameTheTable

/** Every option a plugin declares, with the plugin that declares it. */
function pluginOptions (): Map<string, TSchema> {
  const out = new Map<string, TSchema>()
  for (const p of [...listParsers(), ...listPackers()]) {
    for (const [name, schema] of Object.entries(p.options?.properties ?? {})) {
      if (!out.has(name)) out.set(name, schema as TSchema)
    }
  }
  return out
}

/**
 * The tokenizer option: a name or model name of the registry's, or, when tokenizers declare
 * model prefixes, a model name that starts with one (`gpt-4o-2024-08-06`).
 */
function tokenizerSchema (): TSchema {
  const names = [...listTokenizers().map((t) => t.name), ...tokenizerAliases()]
  const prefixes = tokenizerModelPrefixes()
  if (prefixes.length === 0) return Type.String({ ...baseOptions.tokenizer, enum: names })
  const escaped = prefixes.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  return Type.Union([
    Type.String({ enum: names }),
    Type.String({
      pattern: `^(?:${escaped.join('|')})${MODEL_NAME_CHARACTERS}*$`,
      maxLength: MODEL_NAME_MAX,
      title: `a model name that starts with ${listValues(prefixes)}`,
    }),
  ], { default: DEFAULT_TOKENIZER, description: (baseOptions.tokenizer as { description?: string }).description })
}

/** The full options schema, with the registry's names as enums (for OpenAPI and `formats`). */
export function optionsSchema (): TObject {
  const properties: Record<string, TSchema> = {
    ...baseOptions,
    input_format: Type.String({ ...baseOptions.input_format, enum: ['auto', ...formatNames()] }),
    splitter: Type.String({ ...baseOptions.splitter, enum: listPackers().map((p) => p.name) }),
    tokenizer: tokenizerSchema(),
  }
  for (const [name, schema] of pluginOptions()) properties[name] = schema
  return Type.Object(Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, Type.Optional(v)])), { additionalProperties: false })
}

/** "an integer from 8 to 1000000", "one of "a", "b"": what a schema accepts, in words. */
export function describeSchema (schema: TSchema): string {
  const s = schema as Record<string, unknown>
  // A pattern is no rule in words: its title says it (a model name that starts with ...).
  if (typeof s.pattern === 'string' && typeof s.title === 'string') return s.title
  if (Array.isArray(s.enum)) return `one of ${listValues(s.enum.map(String))}`
  const consts = Array.isArray(s.anyOf) ? (s.anyOf as Array<{ const?: unknown }>).map((o) => o.const) : []
  if (consts.length > 0 && consts.every((c) => c !== undefined)) return `one of ${listValues(consts.map(String))}`
  const range = (unit: string): string => {
    const min = s.minimum as number | undefined
    const max = s.maximum as number | undefined
    if (min !== undefined && max !== undefined) return `${unit} from ${min} to ${max}`
    if (min !== undefined) return `${unit} of at least ${min}`
    if (max !== undefined) return `${unit} of at most ${max}`
    return unit
  }
  switch (s.type) {
    case 'integer': return range('an integer')
    case 'number': return range('a number')
    case 'boolean': return 'true or false'
    case 'array': {
      const count = s.maxItems !== undefined ? ` of at most ${String(s.maxItems)} items` : ''
      const each = s.items !== undefined ? `, each ${describeSchema(s.items as TSchema)}` : ''
      return `a list${count}${each} (a JSON array; on the command line and in forms, repeated or comma-separated)`
    }
    case 'string': {
      const min = (s.minLength as number | undefined) ?? 0
      if (s.maxLength === undefined) return min > 0 ? `a string of at least ${min} characters` : 'a string'
      return min > 0 ? `a string of ${min} to ${String(s.maxLength)} characters` : `a string of at most ${String(s.maxLength)} characters`
    }
    default:
      if (Array.isArray(s.anyOf)) return (s.anyOf as TSchema[]).map(describeSchema).join(' or ')
      return 'a valid value'
  }
}

/** Accepts numbers and booleans given as strings (CLI flags, form fields), per the schema's type. */
function coerce (schema: TSchema, value: unknown): unknown {
  if (typeof value !== 'string') return value
  const type = (schema as { type?: string }).type
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(value.trim())) return Number(value)
  if (type === 'boolean') {
    // In any letter case, as the CLI's flags take them (`--header False`).
    const word = value.trim().toLowerCase()
    if (word === 'true' || word === 'false') return word === 'true'
  }
  if (type === 'array') return value.split(',').map((v) => v.trim()).filter((v) => v !== '')
  return value
}

/** The value given, for the message: a number, a boolean or a short string (the caller's own). */
export function shown (value: unknown): string {
  if (typeof value === 'string') return value.length <= 40 ? ` (got ${JSON.stringify(value)})` : ''
  return typeof value === 'number' || typeof value === 'boolean' ? ` (got ${String(value)})` : ''
}

/**
 * "NAME must be ...", with the value given: after a short description, before a long one (a
 * list of 47 tokenizers), which a message cut at its end would lose it with.
 */
export function mustBe (name: string, schema: TSchema, value: unknown): string {
  const described = describeSchema(schema)
  const got = shown(value)
  return described.length > 160 ? `${name}${got} must be ${described}` : `${name} must be ${described}${got}`
}

let fullCheck: ((schema: TSchema, value: unknown) => boolean) | undefined

/** Loads TypeBox's full validator if a given option has a schema beyond `checkSimple`. */
export async function prepareOptionChecks (raw: Record<string, unknown> = {}, needed = false): Promise<void> {
  if (fullCheck !== undefined) return
  const plugin = pluginOptions()
  const schemas = Object.keys(raw).map((name) => (baseOptions as Record<string, TSchema>)[name] ?? plugin.get(name))
  if (!needed && schemas.every((schema) => schema === undefined || isSimpleSchema(schema))) return
  const { Value } = await import('typebox/value')
  fullCheck = (schema, value) => Value.Check(schema, value)
}

/**
 * Other splitters' names for docsplit's options (LangChain's `chunkSize`, `chunk_overlap`, a
 * `length_function` that counts tokens), by their bare form (lower case, no `-` or `_`): an
 * unknown option of these names is answered with docsplit's.
 */
export const OPTION_ALIASES: Readonly<Record<string, string>> = {
  chunksize: 'max_tokens',
  maxchunksize: 'max_tokens',
  tokens: 'max_tokens',
  budget: 'max_tokens',
  chunkoverlap: 'overlap_tokens',
  overlap: 'overlap_tokens',
  lengthfunction: 'tokenizer',
  encodingname: 'tokenizer',
  model: 'tokenizer',
  modelname: 'tokenizer',
  // Not `format`: on the command line `--format jsonl` means the output's (`--jsonl`).
  language: 'input_format',
}

/** The error for an option `name` not among `names`: the one it likely meant, and the list. */
export function unknownOptionError (name: string, names: readonly string[]): DocsplitError {
  return new DocsplitError('DOCSPLIT_UNKNOWN_OPTION', `unknown option "${name.slice(0, 64)}"${didYouMean(name, names, OPTION_ALIASES)}; accepted: ${listValues(names)}`)
}

/** `given`, coerced (numbers and booleans given as strings) and checked against its schema. */
function checkedOption (name: string, schema: TSchema, given: unknown): unknown {
  const value = coerce(schema, given)
  const valid = isSimpleSchema(schema) ? checkSimple(schema, value) : fullCheck?.(schema, value)
  if (valid === undefined) throw new DocsplitError('DOCSPLIT_INTERNAL', `option "${name}" is checked by TypeBox: await prepareOptionChecks() first`)
  if (!valid) {
    const code = name === 'max_tokens' || name === 'overlap_tokens' ? 'DOCSPLIT_INVALID_BUDGET' : 'DOCSPLIT_INVALID_OPTION'
    throw new DocsplitError(code, mustBe(name, schema, value))
  }
  return value
}

/**
 * A plugin's own options among `given`, checked and coerced as resolveOptions does, with its
 * defaults filled: what the plugin is given in a split, for the test kit, which may run a
 * plugin that is not registered.
 */
export async function resolvePluginOptions (schema: TObject | undefined, given: Record<string, unknown>): Promise<Record<string, unknown>> {
  const properties = Object.entries(schema?.properties ?? {}) as Array<[string, TSchema]>
  if (properties.some(([name, prop]) => given[name] !== undefined && !isSimpleSchema(prop))) await prepareOptionChecks({}, true)
  const out: Record<string, unknown> = {}
  for (const [name, prop] of properties) {
    const raw = given[name]
    if (raw !== undefined && raw !== null) out[name] = checkedOption(name, prop, raw)
  }
  applyPluginDefaults(out as ResolvedOptions, [schema])
  return out
}

/**
 * Validates options and applies defaults. Names (format, splitter, tokenizer) are checked by
 * the pipeline against the registry; `input_format` may stay `auto` until the input is seen.
 */
export function resolveOptions (raw: Record<string, unknown> = {}): ResolvedOptions {
  const plugin = pluginOptions()
  const out: Record<string, unknown> = {}
  for (const [name, given] of Object.entries(raw)) {
    if (given === undefined || given === null) continue
    // Own names only: `toString` or `constructor` are no options.
    const schema = Object.hasOwn(baseOptions, name) ? (baseOptions as Record<string, TSchema>)[name] : plugin.get(name)
    if (schema === undefined) {
      throw unknownOptionError(name, [...Object.keys(baseOptions), ...plugin.keys()])
    }
    out[name] = checkedOption(name, schema, given)
  }
  for (const [name, schema] of Object.entries(baseOptions) as Array<[BaseName, TSchema]>) {
    const d = (schema as { default?: unknown }).default
    if (out[name] === undefined && d !== undefined) out[name] = d
  }
  // Not given, and the document declares none (see the pipeline): UTF-8.
  out.encoding ??= 'utf-8'
  const resolved = out as ResolvedOptions
  if (resolved.overlap_tokens * 2 > resolved.max_tokens) {
    throw new DocsplitError('DOCSPLIT_INVALID_BUDGET',
      `overlap_tokens must be at most half of max_tokens (${Math.floor(resolved.max_tokens / 2)} for max_tokens ${resolved.max_tokens})${shown(resolved.overlap_tokens)}`)
  }
  return resolved
}

/**
 * The options in the options table's order (the engine's, then the plugins'), whatever order
 * they were given in and whether a default filled them: the CLI, the service and the library
 * then report them (metadata.options) byte for byte alike.
 */
export function inTableOrder (options: Record<string, unknown>): Record<string, unknown> {
  const ordered: Record<string, unknown> = {}
  for (const name of [...Object.keys(baseOptions), ...pluginOptions().keys()]) if (options[name] !== undefined) ordered[name] = options[name]
  for (const name of Object.keys(options)) if (!(name in ordered) && options[name] !== undefined) ordered[name] = options[name]
  return ordered
}

/** Fills the defaults of the chosen plugins' own options, so metadata shows every effective value. */
export function applyPluginDefaults (options: ResolvedOptions, schemas: Array<TObject | undefined>): void {
  for (const schema of schemas) {
    for (const [name, prop] of Object.entries(schema?.properties ?? {})) {
      const d = (prop as { default?: unknown }).default
      if (options[name] === undefined && d !== undefined) options[name] = d
    }
  }
}
