/**
 * The plugin registry: maps by name, format and extension. Built-ins and third-party plugins
 * come through the same door (`register`). The registry freezes at the first split, so what a
 * running service offers never changes under it.
 */
// The two functions used, by path: semver's index loads all of its 50 modules.
import satisfies from 'semver/functions/satisfies.js'
import validRange from 'semver/ranges/valid.js'
import { DocsplitError, listValues } from './errors.js'
import { chunkFieldNames, chunkFieldsProblem } from './chunk-fields.js'
import { pluginOptionNames, pluginOptionsProblem, sameOptionSchema } from './plugin-options.js'
import { typeInWords } from './plugin-values.js'
import { closestName, didYouMean } from './suggest.js'
import type { TObject } from 'typebox'
import type { NoOwnOptions, PackerPlugin, ParserPlugin, Plugin, TokenizerPlugin } from './types.js'

/** The plugin API version this engine implements. Plugins declare a range (`docsplit: '^1'`). */
export const PLUGIN_API_VERSION = '1.0.0'

const parsers = new Map<string, ParserPlugin>()
const parsersByFormat = new Map<string, ParserPlugin>()
const parsersByExtension = new Map<string, ParserPlugin>()
const packers = new Map<string, PackerPlugin>()
const tokenizers = new Map<string, TokenizerPlugin>()
const tokenizersByAlias = new Map<string, TokenizerPlugin>()
const tokenizersByPrefix = new Map<string, TokenizerPlugin>()
let frozen = false

/**
 * What a model name that is matched by prefix is made of: printable ASCII without spaces, as
 * providers' model ids are (`ft:gpt-4o-mini-2024-07-18:my-org::abc123`), within 128 characters.
 */
export const MODEL_NAME_CHARACTERS = '[!-~]'
export const MODEL_NAME_MAX = 128
const MODEL_NAME = new RegExp(`^${MODEL_NAME_CHARACTERS}{1,${MODEL_NAME_MAX}}$`)

/**
 * Identity with type checking: the one way to write a plugin. `O`, the plugin's own `options`
 * schema, types `ctx.options` in its `create`; `P` keeps the plugin's exact type for OptionsOf.
 */
export function definePlugin<P extends Plugin<O>, O extends TObject = NoOwnOptions> (plugin: P & { options?: O }): P {
  return plugin
}

function fail (message: string): never {
  throw new DocsplitError('DOCSPLIT_PLUGIN_LOAD_FAILED', message)
}

/** What a plugin is called in messages: a packer is a splitter to users. */
const kindName = (plugin: Plugin): string => plugin.kind === 'packer' ? 'splitter' : plugin.kind

/** A value of a plugin's field, for a message: a short string quoted, else its type. */
const shownValue = (value: unknown): string => typeof value === 'string' ? JSON.stringify(value.slice(0, 64)) : typeInWords(value)

/**
 * The fields of each kind of plugin (types.ts). A field of another name that is a slip of one of
 * them (`detetc`, `modelPrefix`) would be ignored, so it stops the plugin at start; any other
 * (a plugin's own `version`, a class's private state) is the plugin's business. Kept in step
 * with the interfaces by hand.
 */
const BASE_FIELDS = ['kind', 'name', 'docsplit', 'description', 'extra', 'available']
const PLUGIN_FIELDS: Record<Plugin['kind'], readonly string[]> = {
  parser: [...BASE_FIELDS, 'formats', 'extensions', 'extensionFormats', 'formatAliases', 'reads', 'whole', 'defaultSplitter', 'options', 'chunkFields', 'detect', 'formatOf', 'declaredEncoding', 'create'],
  packer: [...BASE_FIELDS, 'options', 'countsUnits', 'create'],
  tokenizer: [...BASE_FIELDS, 'aliases', 'modelPrefixes', 'load'],
}

/** The optional fields of `plugin` that hold a function, and what each does, for its message. */
const FUNCTION_FIELDS: Record<string, string> = {
  available: 'available(): whether its extra is installed',
  detect: 'detect(sample): a score from 0 to 1',
  formatOf: 'formatOf(sample): which of its formats the sample is',
  declaredEncoding: 'declaredEncoding(head): the encoding the document declares',
}

/** The checks of the fields every kind may have, and of slips of their names. */
function checkCommonFields (plugin: Plugin, what: string): void {
  const known = PLUGIN_FIELDS[plugin.kind]
  const fields = plugin as unknown as Record<string, unknown>
  for (const key of Object.keys(plugin)) {
    const meant = known.includes(key) ? undefined : closestName(key, known)
    // A field the plugin has as well (`names` beside `name`) is its own, not a slip.
    if (meant !== undefined && fields[meant] === undefined) fail(`${what}: \`${key.slice(0, 64)}\` is no field of a ${kindName(plugin)}; did you mean \`${meant}\`?`)
  }
  for (const key of ['description', 'extra'] as const) {
    if (plugin[key] !== undefined && typeof plugin[key] !== 'string') fail(`${what}: \`${key}\` is a string`)
  }
  for (const [key, role] of Object.entries(FUNCTION_FIELDS)) {
    const value = fields[key]
    if (value !== undefined && typeof value !== 'function') fail(`${what}: \`${key}\` is a function, ${role}`)
  }
}

/** Checks a plugin's metadata and API range without registering it; throws a DocsplitError. */
export function validatePlugin (plugin: Plugin): void {
  if (plugin === null || typeof plugin !== 'object' || (!('kind' in plugin) && !('name' in plugin))) fail('not a plugin: a plugin is an object made with definePlugin({ kind, name, docsplit, ... })')
  if (typeof plugin.name !== 'string' || !/^[a-z0-9][a-z0-9_.-]*$/i.test(plugin.name)) fail('a plugin needs a `name` of letters, digits, `-`, `_` or `.`')
  if (!['parser', 'packer', 'tokenizer'].includes(plugin.kind)) fail(`plugin "${plugin.name}": \`kind\` must be "parser", "packer" or "tokenizer"`)
  if (typeof plugin.docsplit !== 'string' || validRange(plugin.docsplit) === null) {
    fail(`plugin "${plugin.name}": \`docsplit\` must be the API range it was built for, such as "^1"`)
  }
  if (!satisfies(PLUGIN_API_VERSION, plugin.docsplit)) {
    throw new DocsplitError('DOCSPLIT_PLUGIN_API_MISMATCH',
      `plugin "${plugin.name}" was built for docsplit plugin API ${plugin.docsplit}; this engine implements ${PLUGIN_API_VERSION}`)
  }
  const what = `${kindName(plugin)} "${plugin.name}"`
  checkCommonFields(plugin, what)
  if (plugin.kind === 'parser') {
    if (!Array.isArray(plugin.formats) || plugin.formats.length === 0) fail(`parser "${plugin.name}" needs at least one entry in \`formats\``)
    if (!Array.isArray(plugin.extensions)) fail(`parser "${plugin.name}" needs \`extensions\` (may be empty)`)
    // `auto` asks for detection: a format of that name could never be chosen.
    if (plugin.formats.some((f) => typeof f !== 'string' || !/^[^\s,]+$/.test(f) || f.toLowerCase() === 'auto')) {
      fail(`parser "${plugin.name}": every entry of \`formats\` is a name without spaces or commas, and not "auto" (which asks for detection)`)
    }
    if (plugin.extensions.some((e) => typeof e !== 'string' || !/^\.[^./\\\s]+(\.[^./\\\s]+)*$/.test(e))) {
      fail(`parser "${plugin.name}": every entry of \`extensions\` starts with its dot, such as ".ini" (a bare "ini" would match any name ending in those letters)`)
    }
    if (typeof plugin.defaultSplitter !== 'string' || plugin.defaultSplitter === '') fail(`parser "${plugin.name}" needs a \`defaultSplitter\`: the name of a splitter, such as "sibling" or "record"`)
    const reads: unknown = plugin.reads
    if (reads !== 'text' && reads !== 'bytes') fail(`parser "${plugin.name}": \`reads\` must be "text" or "bytes"`)
    if (plugin.whole !== undefined && (typeof plugin.whole !== 'boolean' || (plugin.whole && plugin.reads !== 'text'))) fail(`parser "${plugin.name}": \`whole\` is true or false, and true only for a parser that reads text`)
    if (typeof plugin.create !== 'function') fail(`parser "${plugin.name}" needs a create(ctx) function`)
    const aliases = Object.entries(plugin.formatAliases ?? {})
    if (aliases.some(([alias, name]) => !plugin.formats.includes(alias) || !plugin.formats.includes(name) || alias === name)) {
      fail(`parser "${plugin.name}": every entry of \`formatAliases\` maps one of its \`formats\` to another of them`)
    }
    const byExtension: unknown = plugin.extensionFormats
    if (byExtension !== undefined && (byExtension === null || typeof byExtension !== 'object' || Object.entries(byExtension).some(([ext, format]) => !plugin.extensions.includes(ext) || !plugin.formats.includes(format as string)))) {
      fail(`parser "${plugin.name}": every entry of \`extensionFormats\` maps one of its \`extensions\` (as written there) to one of its \`formats\``)
    }
    const fieldsProblem = chunkFieldsProblem(plugin.chunkFields)
    if (fieldsProblem !== undefined) fail(`parser "${plugin.name}": ${fieldsProblem}`)
  } else if (plugin.kind === 'packer') {
    if (typeof plugin.create !== 'function') fail(`packer "${plugin.name}" needs a create(ctx) function`)
    if (plugin.countsUnits !== undefined && typeof plugin.countsUnits !== 'boolean') fail(`splitter "${plugin.name}": \`countsUnits\` is true or false`)
  } else if (typeof plugin.load !== 'function') {
    fail(`tokenizer "${plugin.name}" needs a load() function`)
  } else {
    // Aliases are matched as given, so any name will do; prefixes meet the rule of the names they start.
    const aliases: unknown = plugin.aliases
    if (aliases !== undefined && (!Array.isArray(aliases) || aliases.some((a) => typeof a !== 'string' || a === ''))) {
      const bad: unknown = Array.isArray(aliases) ? aliases.find((a) => typeof a !== 'string' || a === '') : aliases
      fail(`tokenizer "${plugin.name}": \`aliases\` is a list of names, such as ["gpt-4o"]; not ${Array.isArray(aliases) || typeof bad !== 'string' ? shownValue(bad) : 'a string'}`)
    }
    const prefixes: unknown = plugin.modelPrefixes
    if (prefixes !== undefined && (!Array.isArray(prefixes) || prefixes.some((m) => typeof m !== 'string' || !MODEL_NAME.test(m)))) {
      fail(`tokenizer "${plugin.name}": every entry of \`modelPrefixes\` is the start of a model name, such as "gpt-4o-": printable ASCII without spaces, at most ${MODEL_NAME_MAX} characters`)
    }
  }
  if (plugin.kind !== 'tokenizer') {
    const problem = pluginOptionsProblem(plugin.options)
    if (problem !== undefined) fail(`${plugin.kind} "${plugin.name}": ${problem}`)
  }
}

/** The registered plugin that holds a name, as `parser "markdown"`. */
function ownerOf (what: string, name: string): string | undefined {
  const p = what === 'parser' ? parsers.get(name)
    : what === 'format' ? parsersByFormat.get(name)
      : what === 'ext' ? parsersByExtension.get(name)
        : what === 'packer' ? lookup(packers, name)
          : what === 'prefix' ? lookup(tokenizersByPrefix, name)
            : lookup(tokenizers, name) ?? lookup(tokenizersByAlias, name) // a tokenizer's name or alias
  return p === undefined ? undefined : `${kindName(p)} "${p.name}"`
}

/** Which registered plugin declares option `name`, if any. */
function optionOwner (name: string): ParserPlugin | PackerPlugin | undefined {
  for (const p of [...parsers.values(), ...packers.values()]) if (pluginOptionNames(p.options).includes(name)) return p
  return undefined
}

/** The schema a plugin declares for option `name`. */
function optionSchema (p: ParserPlugin | PackerPlugin, name: string): unknown {
  return (p.options?.properties as Record<string, unknown> | undefined)?.[name]
}

function taken (what: string, name: string, owner: string | undefined, plugin: Plugin, twice = false): never {
  const by = owner !== undefined ? ` by ${owner}` : twice ? ' by the plugin itself (listed twice)' : ' by another plugin in the same list'
  // An alias is a model name the plugin gives besides its own: its name is not the clash.
  if (what === 'alias') fail(`tokenizer "${plugin.name}": its alias "${name}" is already registered${by}; drop it from the plugin's \`aliases\``)
  if (what === 'prefix') fail(`tokenizer "${plugin.name}": its model prefix "${name}" is already registered${by}; drop it from the plugin's \`modelPrefixes\``)
  const remedy = what === 'format' || what === 'extension' ? `drop it from the plugin's \`${what}s\` or give another` : 'give the plugin another name'
  fail(`${what} "${name}" is already registered${by}; ${remedy}`)
}

/** Adds plugins. Checks every entry before adding any, so a bad list changes nothing. */
export function register (...entries: Array<Plugin | Plugin[]>): void {
  const list = entries.flat()
  if (frozen) {
    const names = list.map((p) => (p !== null && typeof p === 'object' && typeof p.name === 'string' ? `"${p.name.slice(0, 64)}"` : 'a plugin')).join(', ')
    throw new DocsplitError('DOCSPLIT_REGISTRY_FROZEN',
      `${names}: plugins cannot be registered after the first split; register them at start (--plugin, DOCSPLIT_PLUGINS)`)
  }
  for (const plugin of list) validatePlugin(plugin)
  /** Names taken within the list, and which of its plugins took each. */
  const seen = new Map<string, Plugin>()
  const sharedOptions = new Map<string, unknown>()
  for (const p of list) {
    const keys = p.kind === 'parser'
      ? [`parser:${p.name}`, ...p.formats.map((f) => `format:${f.toLowerCase()}`), ...p.extensions.map((e) => `ext:${e.toLowerCase()}`)]
      : p.kind === 'packer' ? [`packer:${p.name}`] : [`tokenizer:${p.name}`, ...(p.aliases ?? []).map((a) => `alias:${a}`), ...(p.modelPrefixes ?? []).map((m) => `prefix:${m}`)]
    for (const key of keys) {
      const [what, name] = key.split(/:(.*)/s) as [string, string]
      // Tokenizer names and aliases share one namespace (either selects a tokenizer).
      const owner = ownerOf(what === 'alias' ? 'tokenizer' : what, name)
      const unique = (what === 'alias' ? `tokenizer:${name}` : key).toLowerCase()
      if (owner !== undefined || seen.has(unique)) taken(what === 'ext' ? 'extension' : what, name, owner, p, seen.get(unique) === p)
      seen.set(unique, p)
    }
    // Chunk fields join one Chunk schema: one name, one schema.
    for (const field of p.kind === 'parser' ? chunkFieldNames(p.chunkFields) : []) {
      const owner = [...parsers.values()].find((other) => chunkFieldNames(other.chunkFields).includes(field))
      const by = owner !== undefined ? `parser "${owner.name}"` : seen.has(`field:${field}`) ? 'another plugin in the same list' : undefined
      if (by !== undefined) fail(`parser "${p.name}": chunk field "${field}" is already declared by ${by}; prefix it with the plugin's name`)
      seen.set(`field:${field}`, p)
    }
    // Options are one table shared by every front: one name, one schema. Two plugins may read
    // the same option (xlsx reads csv's `header`), each declaring it, but with the same schema.
    if (p.kind !== 'tokenizer') {
      for (const option of pluginOptionNames(p.options)) {
        const schema = optionSchema(p, option)
        const owner = optionOwner(option)
        const other = owner !== undefined ? optionSchema(owner, option) : sharedOptions.get(option)
        if (other !== undefined && !sameOptionSchema(schema, other)) {
          const by = owner !== undefined ? `${owner.kind} "${owner.name}"` : 'another plugin in the same list'
          fail(`${p.kind} "${p.name}": option "${option}" is already declared by ${by} with another schema; prefix it with the plugin's name, or declare it exactly alike (type, bounds, default, description) if it is the same option`)
        }
        sharedOptions.set(option, schema)
      }
    }
  }
  for (const p of list) {
    if (p.kind === 'parser') {
      parsers.set(p.name, p)
      for (const f of p.formats) parsersByFormat.set(f.toLowerCase(), p)
      for (const e of p.extensions) parsersByExtension.set(e.toLowerCase(), p)
    } else if (p.kind === 'packer') {
      packers.set(p.name, p)
    } else {
      tokenizers.set(p.name, p)
      for (const a of p.aliases ?? []) tokenizersByAlias.set(a, p)
      for (const m of p.modelPrefixes ?? []) tokenizersByPrefix.set(m, p)
    }
  }
}

/** Called by the pipeline at the first split. */
export function freeze (): void {
  frozen = true
}

export function isFrozen (): boolean {
  return frozen
}

/** Every format name, canonical first per parser. */
export function formatNames (): string[] {
  return [...parsersByFormat.keys()]
}

export function listParsers (): ParserPlugin[] {
  return [...parsers.values()]
}

export function listPackers (): PackerPlugin[] {
  return [...packers.values()]
}

/**
 * Parsers whose `defaultSplitter` is not a registered splitter. Checked once every plugin is
 * loaded (the splitter may come from a plugin loaded after the parser), not at registration.
 */
export function parsersWithUnknownSplitter (): ParserPlugin[] {
  return [...parsers.values()].filter((p) => lookup(packers, p.defaultSplitter) === undefined)
}

export function listTokenizers (): TokenizerPlugin[] {
  return [...tokenizers.values()]
}

export function isRegistered (plugin: Plugin): boolean {
  const map = plugin.kind === 'parser' ? parsers : plugin.kind === 'packer' ? packers : tokenizers
  return map.get(plugin.name) === plugin
}

export function parserForFormat (format: string): ParserPlugin {
  const p = parsersByFormat.get(format.toLowerCase())
  if (p === undefined) {
    throw new DocsplitError('DOCSPLIT_UNSUPPORTED_FORMAT',
      `input_format "${format}" is not supported${didYouMean(format, ['auto', ...formatNames()])}; accepted: "auto", ${listValues(formatNames())}`)
  }
  return p
}

/** The parser for a file name's extension (longest match, so `.tar.gz` beats `.gz`). */
export function parserForFilename (filename: string): ParserPlugin | undefined {
  const lower = filename.toLowerCase()
  let best: ParserPlugin | undefined
  let bestLength = 0
  for (const [ext, p] of parsersByExtension) {
    if (ext.length > bestLength && lower.endsWith(ext)) {
      best = p
      bestLength = ext.length
    }
  }
  return best
}

/** The key of a registered entry, in any letter case (names are case-insensitive on every front). */
function keyOf<T> (map: Map<string, T>, name: string): string | undefined {
  if (map.has(name)) return name
  const lower = name.toLowerCase()
  for (const key of map.keys()) if (key.toLowerCase() === lower) return key
  return undefined
}

function lookup<T> (map: Map<string, T>, name: string): T | undefined {
  const key = keyOf(map, name)
  return key === undefined ? undefined : map.get(key)
}

/**
 * The longest registered model prefix that `name` starts with, in any letter case (tiktoken's
 * rule: `gpt-4o-2024-08-06` is `gpt-4o-`'s), for a name that can be a model's id at all.
 */
function longestPrefix (name: string): string | undefined {
  return MODEL_NAME.test(name) ? startingPrefix(name) : undefined
}

/** The longest registered model prefix that `name` starts with, in any letter case, whatever the name is made of. */
function startingPrefix (name: string): string | undefined {
  const lower = name.toLowerCase()
  let best: string | undefined
  for (const prefix of tokenizersByPrefix.keys()) {
    if (lower.startsWith(prefix.toLowerCase()) && prefix.length > (best?.length ?? 0)) best = prefix
  }
  return best
}

/**
 * A tokenizer or model name as registered (`GPT-4o` → `gpt-4o`; `GPT-4o-2024-08-06` →
 * `gpt-4o-2024-08-06`, the prefix as registered and the rest as given), or the name as given.
 */
export function tokenizerSpelling (name: string): string {
  const registered = keyOf(tokenizers, name) ?? keyOf(tokenizersByAlias, name)
  if (registered !== undefined) return registered
  const prefix = longestPrefix(name)
  return prefix !== undefined ? prefix + name.slice(prefix.length) : name
}

export function packerByName (name: string): PackerPlugin {
  const p = lookup(packers, name)
  if (p === undefined) {
    const names = [...packers.keys()]
    throw new DocsplitError('DOCSPLIT_UNKNOWN_SPLITTER', `splitter "${name}" is not known${didYouMean(name, names)}; accepted: ${listValues(names)}`)
  }
  return p
}

/** Model names an unknown-tokenizer message lists. */
const MODELS_SHOWN = 6

export function tokenizerByName (name: string): TokenizerPlugin {
  const p = lookup(tokenizers, name) ?? lookup(tokenizersByAlias, name) ?? tokenizersByPrefix.get(longestPrefix(name) ?? '')
  if (p === undefined) {
    // Model names are many: a few, so that the message stays whole where it is capped (HTTP).
    const names = [...tokenizers.keys()]
    const models = [...tokenizersByAlias.keys()]
    const prefixes = [...tokenizersByPrefix.keys()]
    const starts = prefixes.length === 0 ? '' : `, or one that starts with ${prefixes.length === 1 ? listValues(prefixes) : `one of ${prefixes.length} prefixes such as ${listValues(prefixes.slice(0, 2))}`}`
    const some = models.length <= MODELS_SHOWN && prefixes.length <= 1
      ? `${listValues(models)}${starts}`
      : `such as ${listValues(models.slice(0, MODELS_SHOWN))}; ${models.length} in all${starts}; listed by docsplit formats and in the service's /openapi.json`
    // The name likely meant; else, for a name that starts with a prefix but is no model id, why.
    const hint = didYouMean(name, [...names, ...models]) ||
      (startingPrefix(name) !== undefined ? ` (a model name is printable ASCII without spaces, at most ${MODEL_NAME_MAX} characters)` : '')
    throw new DocsplitError('DOCSPLIT_UNKNOWN_TOKENIZER',
      `tokenizer "${name.slice(0, 64)}" is not known${hint}; accepted: ${listValues(names)} or a model name (${some})`)
  }
  return p
}

export function tokenizerAliases (): string[] {
  return [...tokenizersByAlias.keys()]
}

/** Every registered model prefix (`gpt-4o-`): a model name that starts with one selects its tokenizer. */
export function tokenizerModelPrefixes (): string[] {
  return [...tokenizersByPrefix.keys()]
}
