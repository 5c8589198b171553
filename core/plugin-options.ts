/**
 * Checks the options a plugin declares. Options form one table that every front reads (CLI
 * flags, form fields, JSON keys, OpenAPI), so a plugin's options must be an object schema of
 * snake_case names with JSON types that none of the engine's own options already takes.
 */
import { baseOptions } from './base-options.js'

const JSON_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'array', 'object', 'null'])
const OPTION_NAME = /^[a-z][a-z0-9_]{0,63}$/

/** What is wrong with one option's schema (its type names, down through anyOf and items), or undefined. */
function schemaProblem (schema: unknown, depth = 0): string | undefined {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return 'is not a schema (make it with Type: Type.String(), ...)'
  if (depth > 16) return 'is nested too deeply'
  const s = schema as Record<string, unknown>
  if ('type' in s) {
    for (const type of Array.isArray(s.type) ? s.type as unknown[] : [s.type]) {
      if (typeof type !== 'string' || !JSON_TYPES.has(type)) return `has an unknown type ${JSON.stringify(String(type).slice(0, 32))}`
    }
  }
  if ('enum' in s && !Array.isArray(s.enum)) return 'has an enum that is not a list'
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    if (!(key in s)) continue
    if (!Array.isArray(s[key])) return `has ${key} that is not a list`
    for (const part of s[key] as unknown[]) {
      const problem = schemaProblem(part, depth + 1)
      if (problem !== undefined) return problem
    }
  }
  return 'items' in s ? schemaProblem(s.items, depth + 1) : undefined
}

/** What is wrong with a plugin's `options`, or undefined when they can join the options table. */
export function pluginOptionsProblem (options: unknown): string | undefined {
  if (options === undefined) return undefined
  const o = options as { type?: unknown, properties?: unknown } | null
  if (o === null || typeof o !== 'object' || o.type !== 'object' || o.properties === null || typeof o.properties !== 'object') {
    return '`options` must be an object schema: Type.Object({ my_option: Type.Optional(...) })'
  }
  // Every option may be left out (the other formats' requests leave it out): give it a default instead.
  const required = (o as { required?: unknown }).required
  if (Array.isArray(required) && required.length > 0) {
    return `option "${String(required[0]).slice(0, 64)}" must be optional: wrap it in Type.Optional(...) and give it a default if it needs one`
  }
  for (const [name, schema] of Object.entries(o.properties)) {
    if (!OPTION_NAME.test(name)) {
      return `option "${name.slice(0, 64)}" must be named in snake_case (a-z, 0-9, _): the same name is a JSON key, a form field and a command-line flag`
    }
    if (name in baseOptions) return `option "${name}" is one of the engine's own options; give the plugin's option another name`
    const problem = schemaProblem(schema)
    if (problem !== undefined) return `option "${name}" ${problem}`
  }
  return undefined
}

/** The names of a plugin's options (none when it has no valid options schema). */
export function pluginOptionNames (options: unknown): string[] {
  const properties = (options as { properties?: unknown } | undefined)?.properties
  return properties !== null && typeof properties === 'object' ? Object.keys(properties) : []
}

/** A schema as JSON with its keys sorted, so that key order makes no difference. */
function canonical (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value) ?? 'undefined'
}

/**
 * Whether two plugins declare an option alike: the same JSON schema, description and default
 * included, since the option is one row of the options table (README, OpenAPI, `--help`).
 */
export function sameOptionSchema (a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b)
}
