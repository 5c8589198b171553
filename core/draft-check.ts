/**
 * The shape of a chunk draft, checked as it leaves a splitter: core copies these fields into
 * `docsplit.chunk.v1` chunks, so a splitter's slip would otherwise reach every consumer.
 * (Text, offsets and the budget are checked by the pipeline itself.)
 */
import { CORE_CHUNK_FIELDS } from './event-check.js'
import { isCount } from './plugin-values.js'
import type { ChunkDraft } from './types.js'

const BOUNDARIES = new Set(['section', 'block', 'line', 'sentence', 'word', 'grapheme', 'record', 'end'])

function isStringList (value: unknown): boolean {
  if (!Array.isArray(value)) return false
  for (const item of value) if (typeof item !== 'string') return false
  return true
}

/** Left out, or a count. */
function isOptionalCount (value: unknown): boolean {
  return value === undefined || isCount(value)
}

/** [start, end] pairs of offsets in a text of `length`, each start <= end <= the next start. */
function stretches (value: unknown, length: number): boolean {
  if (!Array.isArray(value)) return false
  let at = 0
  for (const r of value) {
    if (!Array.isArray(r) || r.length !== 2 || !isCount(r[0]) || !isCount(r[1]) || r[0] < at || r[1] < r[0] || r[1] > length) return false
    at = r[1]
  }
  return true
}

/** What is wrong with `draft` (packed to `budget`), or undefined. */
export function draftProblem (draft: ChunkDraft, budget: number): string | undefined {
  if (!isStringList(draft.path)) return 'a path that is not a list of strings'
  if (!isStringList(draft.kinds)) return 'kinds that are not a list of strings'
  if (!BOUNDARIES.has(draft.boundary)) return `boundary ${JSON.stringify(String(draft.boundary).slice(0, 32))}, not one of ${[...BOUNDARIES].join(', ')}`
  if (!isOptionalCount(draft.recordStart) || !isOptionalCount(draft.recordCount)) return 'a recordStart or recordCount that is not a whole number of at least 0'
  if (draft.protected !== undefined && typeof draft.protected !== 'boolean') return 'a protected flag that is not true or false'
  if (draft.protected === true && (draft.recordCount !== 1 || draft.tokenCount <= budget)) {
    return `protected set on a chunk of ${draft.recordCount ?? 'no'} record${draft.recordCount === 1 ? '' : 's'} and ${draft.tokenCount} tokens: protected is only for a single record over the budget (${budget})`
  }
  if (draft.context !== undefined && typeof draft.context !== 'string') return 'a context that is not a string'
  if (draft.refs !== undefined && !isStringList(draft.refs)) return 'refs that are not a list of strings (reference labels)'
  if (draft.noOverlap !== undefined && typeof draft.noOverlap !== 'boolean') return 'a noOverlap flag that is not true or false'
  if (draft.overlapStarts !== undefined && (!Array.isArray(draft.overlapStarts) || !draft.overlapStarts.every(isCount))) return 'overlapStarts that are not a list of whole numbers of at least 0'
  if (draft.overlapAvoid !== undefined && !stretches(draft.overlapAvoid, draft.text.length)) {
    return 'overlapAvoid that is not a list of [start, end] pairs of offsets in its text, ascending and apart'
  }
  if (draft.fields !== undefined) {
    for (const [name, value] of Object.entries(draft.fields)) {
      if (CORE_CHUNK_FIELDS.has(name)) return `a record field "${name}", which is a chunk field core sets`
      if (typeof value !== 'string' && typeof value !== 'number') return `a record field "${name.slice(0, 64)}" that is not a string or a number`
    }
  }
  return undefined
}
