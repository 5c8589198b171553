/**
 * Fields a parser's records add to chunks (RecordEvent.fields: xlsx's `sheet`, `row_start`,
 * `row_end`), declared by the parser as `chunkFields` so that they are part of the output
 * schema: OpenAPI's Chunk, the README's table. Fields of another parser never meet in one
 * response, but every front shows one Chunk, so a name has one schema among all parsers.
 */
import { Type, type TObject, type TSchema } from 'typebox'
import { CORE_CHUNK_FIELDS } from './event-check.js'
import { Chunk, SplitResponse } from './schema.js'

const FIELD_NAME = /^[a-z][a-z0-9_]{0,63}$/
const FIELD_TYPES = new Set(['string', 'integer', 'number'])

/** What is wrong with a parser's `chunkFields`, or undefined. */
export function chunkFieldsProblem (fields: unknown): string | undefined {
  if (fields === undefined) return undefined
  const f = fields as { type?: unknown, properties?: unknown } | null
  if (f === null || typeof f !== 'object' || f.type !== 'object' || f.properties === null || typeof f.properties !== 'object') {
    return '`chunkFields` must be an object schema: Type.Object({ my_field: Type.Optional(Type.String()) })'
  }
  for (const [name, schema] of Object.entries(f.properties)) {
    if (!FIELD_NAME.test(name)) return `chunk field "${name.slice(0, 64)}" must be named in snake_case (a-z, 0-9, _), as core's are`
    if (CORE_CHUNK_FIELDS.has(name)) return `chunk field "${name}" is one that core sets; give the plugin's field another name`
    const type = (schema as { type?: unknown } | null)?.type
    if (typeof type !== 'string' || !FIELD_TYPES.has(type)) return `chunk field "${name}" must be a string, an integer or a number (Type.String(), ...), as record fields are`
  }
  return undefined
}

/** The names of a parser's chunk fields (none when it declares none). */
export function chunkFieldNames (fields: TObject | undefined): string[] {
  return fields === undefined ? [] : Object.keys(fields.properties)
}

/**
 * The Chunk and SplitResponse schemas with the chunk fields of `parsers`, each optional (a
 * chunk of another format has none). Same $ids as the core schemas, which they stand for.
 */
export function responseSchemas (parsers: Array<{ chunkFields?: TObject | undefined }>): { chunk: TObject, response: TObject } {
  const added: Record<string, TSchema> = {}
  for (const parser of parsers) {
    for (const [name, schema] of Object.entries(parser.chunkFields?.properties ?? {})) added[name] = Type.Optional(schema)
  }
  const chunk = Type.Object({ ...Chunk.properties, ...added }, { $id: 'Chunk', additionalProperties: true, description: (Chunk as { description?: string }).description })
  const response = Type.Object({ ...SplitResponse.properties, chunks: Type.Array(chunk) }, { $id: 'SplitResponse' })
  return { chunk, response }
}
