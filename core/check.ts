/**
 * Validation of option values against the small part of JSON Schema that option schemas use
 * (scalars with ranges, lengths, patterns and enums, unions of literals, arrays of those). TypeBox's full
 * validator loads some 300 modules (about 70 ms and 10 MB at every start); core loads it only
 * for a plugin option whose schema uses anything else (`checkSimple` answers undefined there).
 */
import { codePoints } from './positions.js'

/** Keywords that only annotate. */
const ANNOTATIONS = new Set(['description', 'default', 'title', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly'])
/** Keywords `checkSimple` evaluates. */
const KNOWN = new Set(['type', 'enum', 'const', 'anyOf', 'minimum', 'maximum', 'minLength', 'maxLength', 'pattern', 'items', 'minItems', 'maxItems'])

type Schema = Record<string, unknown>

/** Each `pattern` compiled once, as JSON Schema reads it (ECMA-262, Unicode). */
const patterns = new Map<string, RegExp>()

function patternOf (source: string): RegExp {
  let re = patterns.get(source)
  if (re === undefined) patterns.set(source, re = new RegExp(source, 'u'))
  return re
}

/** Whether `checkSimple` can decide every value for this schema. */
export function isSimpleSchema (schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false
  for (const key of Object.keys(schema)) {
    if (ANNOTATIONS.has(key)) continue
    if (!KNOWN.has(key)) return false
  }
  const s = schema as Schema
  if (s.type !== undefined && !['string', 'integer', 'number', 'boolean', 'array'].includes(s.type as string)) return false
  if (s.anyOf !== undefined && !(Array.isArray(s.anyOf) && s.anyOf.every(isSimpleSchema))) return false
  if (s.items !== undefined && !isSimpleSchema(s.items)) return false
  if (s.enum !== undefined && !(Array.isArray(s.enum) && s.enum.every((v) => v === null || typeof v !== 'object'))) return false
  if (s.pattern !== undefined) {
    if (typeof s.pattern !== 'string') return false
    try {
      patternOf(s.pattern)
    } catch {
      return false
    }
  }
  return true
}

/** Whether `value` matches a schema for which `isSimpleSchema` holds. */
export function checkSimple (schema: unknown, value: unknown): boolean {
  const s = schema as Schema
  switch (s.type) {
    case 'string': if (typeof value !== 'string') return false; break
    case 'boolean': if (typeof value !== 'boolean') return false; break
    case 'number': if (typeof value !== 'number' || !Number.isFinite(value)) return false; break
    case 'integer': if (!Number.isInteger(value)) return false; break
    case 'array': if (!Array.isArray(value)) return false; break
  }
  if (s.const !== undefined && value !== s.const) return false
  if (Array.isArray(s.enum) && !s.enum.includes(value)) return false
  if (Array.isArray(s.anyOf) && !s.anyOf.some((option) => checkSimple(option, value))) return false
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) return false
    if (typeof s.maximum === 'number' && value > s.maximum) return false
  }
  if (typeof value === 'string' && (typeof s.minLength === 'number' || typeof s.maxLength === 'number')) {
    const n = codePoints(value) // JSON Schema counts string length in code points
    if (typeof s.minLength === 'number' && n < s.minLength) return false
    if (typeof s.maxLength === 'number' && n > s.maxLength) return false
  }
  if (typeof value === 'string' && typeof s.pattern === 'string' && !patternOf(s.pattern).test(value)) return false
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) return false
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) return false
    if (s.items !== undefined && !value.every((v) => checkSimple(s.items, v))) return false
  }
  return true
}
