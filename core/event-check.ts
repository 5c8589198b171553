/**
 * The optional fields of an event, checked as it leaves a parser: splitters read them as
 * typed (a `cut` of `sentences` has no cut levels, a `context` that is not a string reaches
 * chunks), so a parser's slip would otherwise surface as a splitter's crash. Offsets, texts and
 * labels are checked by the pipeline itself; the conformance kit runs the same checks.
 */
import type { DocEvent } from './events.js'
import { isCount } from './plugin-values.js'
import { Chunk, Metadata } from './schema.js'

const CUTS = new Set(['prose', 'lines'])
/** Fields core sets: a record's extra `fields` may add to a chunk, never replace these. */
export const CORE_CHUNK_FIELDS = new Set(Object.keys(Chunk.properties))
/** Metadata core sets: an `info` event of scope `metadata` may add entries, never replace these. */
const CORE_METADATA = new Set(Object.keys(Metadata.properties))


/** A value as a message shows it: a short JSON form, or its type. */
function shown (value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 32))
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value)
  return Array.isArray(value) ? 'a list' : `a ${typeof value}`
}

/** The event types of the contract, and what is said of any other. */
export const EVENT_TYPES: ReadonlySet<string> = new Set(['enter', 'exit', 'block', 'record', 'definition', 'info'])
export const UNKNOWN_EVENT_TYPE = `an event of an unknown type; the types are ${[...EVENT_TYPES].slice(0, -1).join(', ')} and ${[...EVENT_TYPES].at(-1)!}`

/** What is wrong with `fields` of a record, or undefined. */
export function fieldsProblem (fields: unknown): string | undefined {
  if (fields === null || typeof fields !== 'object' || Array.isArray(fields)) return `fields that are ${shown(fields)}, not an object of names and values`
  for (const [name, value] of Object.entries(fields)) {
    if (CORE_CHUNK_FIELDS.has(name)) return `a field "${name}", which is a chunk field core sets`
    if (typeof value !== 'string' && typeof value !== 'number') return `a field "${name.slice(0, 64)}" that is not a string or a number`
  }
  return undefined
}

/**
 * What is wrong with the optional fields of `event` (its type known, its offsets and text
 * checked), as the rest of a sentence "emitted a block at 12 with ...", or undefined.
 */
export function eventFieldProblem (event: DocEvent): string | undefined {
  switch (event.type) {
    case 'block':
      if (event.cut !== undefined && !CUTS.has(event.cut)) return `cut ${shown(event.cut)}; a cut is "prose" or "lines" (or left out: prose)`
      if (event.attachNext !== undefined && typeof event.attachNext !== 'boolean') return `attachNext ${shown(event.attachNext)}, not true or false`
      if (event.context !== undefined && typeof event.context !== 'string') return `a context that is ${shown(event.context)}, not a string`
      if (event.refs !== undefined) {
        if (!Array.isArray(event.refs)) return `refs that are ${shown(event.refs)}, not a list of { label, offset }`
        for (const ref of event.refs as unknown[]) {
          const r = ref as { label?: unknown, offset?: unknown } | null
          if (r === null || typeof r !== 'object' || typeof r.label !== 'string' || !isCount(r.offset) || (r.offset as number) < event.start || (r.offset as number) > event.end) {
            return 'a ref that is not { label, offset } with a string label and an offset inside the block'
          }
        }
      }
      break
    case 'record':
      if (event.context !== undefined && typeof event.context !== 'string') return `a context that is ${shown(event.context)}, not a string`
      if (event.fields !== undefined) {
        const problem = fieldsProblem(event.fields)
        if (problem !== undefined) return problem
      }
      break
    case 'definition':
      if (typeof event.label !== 'string' || typeof event.url !== 'string') return 'a label or url that is not a string'
      if (event.title !== undefined && typeof event.title !== 'string') return `a title that is ${shown(event.title)}, not a string`
      return undefined
    case 'info':
      if (typeof event.key !== 'string') return `a key that is ${shown(event.key)}, not a string`
      if (event.scope !== undefined && event.scope !== 'document' && event.scope !== 'metadata') return `scope ${shown(event.scope)}; a scope is "document" or "metadata"`
      if (event.scope === 'metadata' && CORE_METADATA.has(event.key)) return `metadata "${event.key}", which core sets`
      return undefined
    default:
      return undefined
  }
  // Counted ahead by the engine, after the event left the parser: a parser's own would be trusted as exact.
  if (event.tokens !== undefined) return 'tokens, which only the engine sets (a count made ahead)'
  return undefined
}
