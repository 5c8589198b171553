/**
 * Route schemas, built from the engine's TypeBox definitions (options, chunk, response,
 * problem) so validation, types and OpenAPI come from one source. Built after external plugins
 * load, so their options and formats are in the enums.
 */
import { Type, type TObject, type TSchema } from 'typebox'
import { optionsSchema, errorTable, listPackers, listParsers, listTokenizers, type ErrorCode } from '../index.js'
import { Metadata, DocumentInfo, ReferenceDefinition, SCHEMA_VERSION } from '../core/schema.js'
import { responseSchemas } from '../core/chunk-fields.js'
import { problemType } from './problem.js'

export const SPLIT_PREFIX = '/docsplit/api/split/'

/** A markdown list of the registered plugins of a kind: "- `csv`, `tsv`: what it does". */
function pluginList (plugins: Array<{ names: readonly string[], description?: string }>): string {
  return plugins.map((p) => `- ${p.names.map((n) => `\`${n}\``).join(', ')}${p.description !== undefined && p.description !== '' ? `: ${p.description}` : ''}`).join('\n')
}

/**
 * What each name of the options that name a plugin means, from the plugins' own descriptions,
 * for the OpenAPI description of that option (the engine's table keeps its one sentence).
 */
function pluginLists (): Record<string, string> {
  return {
    input_format: pluginList(listParsers().map((p) => ({ names: p.formats, description: p.description }))),
    splitter: pluginList(listPackers().map((p) => ({ names: [p.name], description: p.description }))),
    tokenizer: pluginList(listTokenizers().map((t) => ({ names: [t.name], description: t.description }))),
  }
}

/** The split options, by name. */
export function splitOptions (): Record<string, TSchema> {
  const out: Record<string, TSchema> = {}
  const lists = pluginLists()
  for (const [name, schema] of Object.entries((optionsSchema() as TObject).properties)) {
    const s = schema as TSchema & { enum?: unknown[], description?: string }
    // An empty enum (nothing of that kind registered) would make the whole schema invalid.
    const emptyEnum = Array.isArray(s.enum) && s.enum.length === 0
    const list = lists[name]
    if (!emptyEnum && (list === undefined || list === '')) {
      out[name] = schema
      continue
    }
    // Copy with descriptors: TypeBox keeps `~optional` as a non-enumerable key.
    const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(s)) as { enum?: unknown, description?: string }
    if (emptyEnum) delete copy.enum
    if (list !== undefined && list !== '') copy.description = `${s.description ?? ''}\n\n${list}`
    out[name] = copy as TSchema
  }
  return out
}

const TEXT_EXAMPLE = { text: '# Title\n\nA first paragraph.\n\n## Part\n\nA second paragraph.\n', input_format: 'markdown', max_tokens: 64 }

/**
 * An option of the JSON body, which may also be null: null is "not given" (the default), as in
 * the library, since clients send unset optional fields as null. The description and default
 * stay outside, where OpenAPI readers look for them; the value's schema keeps type and bounds.
 */
function orNull (schema: TSchema): TSchema {
  const { description, default: fallback, ...value } = schema as TSchema & { description?: string, default?: unknown }
  return Type.Optional(Type.Union([value as TSchema, Type.Null()], {
    ...(description !== undefined ? { description } : {}),
    ...(fallback !== undefined ? { default: fallback } : {}),
  }))
}

/** JSON body of POST /docsplit/api/split/text: `text` plus every split option (each may be null). */
export function textBody (options: Record<string, TSchema>): TObject {
  const nullable = Object.fromEntries(Object.entries(options).map(([name, schema]) => [name, orNull(schema)]))
  return Type.Object({
    text: Type.String({ description: 'The document. Binary formats (xlsx) go to the file endpoint.' }),
    ...nullable,
    // The text is decoded already (JSON is UTF-8): `encoding` applies to uploaded bytes.
    ...(options.encoding !== undefined ? { encoding: orNull(Type.String({ default: 'utf-8', description: TEXT_ENCODING })) } : {}),
  }, { additionalProperties: false, examples: [TEXT_EXAMPLE] })
}

/** What `encoding` means on the text endpoint. */
export const TEXT_ENCODING = 'Only `utf-8` (or a label for it, such as `utf8`) on this endpoint: `text` is decoded already, as JSON is UTF-8. `encoding` tells how to decode uploaded bytes: send a file in another encoding to POST /docsplit/api/split/file. Any other value is a 400 DOCSPLIT_INVALID_OPTION.'

/** Multipart form of POST /docsplit/api/split/file, for the documentation (parsed by hand). */
export function fileBody (options: Record<string, TSchema>): TObject {
  return Type.Object({
    file: Type.String({ format: 'binary', description: 'The document. Its file name picks the format when `input_format` is `auto`.' }),
    ...options,
  }, { additionalProperties: false })
}

/** The header line of an NDJSON response. */
export const NdjsonHeader = Type.Object({
  schema_version: Type.Literal(SCHEMA_VERSION),
  input_format: Type.String(),
  metadata: Metadata,
}, { description: 'First line.' })

/** A chunk line (the Chunk schema with the parsers' fields, without its $id so it can be inlined). */
function ndjsonChunk (): TObject {
  return Type.Object({ ...responseSchemas(listParsers()).chunk.properties }, { additionalProperties: true, description: 'One line per chunk, in order.' })
}

/** The last line of an NDJSON response that completed. */
export const NdjsonTrailer = Type.Object({
  document: DocumentInfo,
  reference_definitions: Type.Array(ReferenceDefinition),
  chunk_count: Type.Integer({ minimum: 0 }),
}, { description: 'Last line when the split completed.' })

const ProblemInline = Type.Object({
  type: Type.String({ description: 'urn:docsplit:error:<code>' }),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String({ description: 'What was wrong and how to fix it. Never holds document text or server paths.' }),
  code: Type.String({ enum: Object.keys(errorTable) }),
})

export const NdjsonError = Type.Object({ error: ProblemInline }, { description: 'Last line when the split failed after its first chunk was sent (timeout, parse error).' })

const splitErrors: ErrorCode[] = [
  'DOCSPLIT_INVALID_REQUEST', 'DOCSPLIT_INVALID_OPTION', 'DOCSPLIT_INVALID_BUDGET', 'DOCSPLIT_UNKNOWN_OPTION',
  'DOCSPLIT_UNSUPPORTED_FORMAT', 'DOCSPLIT_UNKNOWN_SPLITTER', 'DOCSPLIT_UNKNOWN_TOKENIZER', 'DOCSPLIT_UNSUPPORTED_ENCODING',
  'DOCSPLIT_FORMAT_NEEDS_FILE', 'DOCSPLIT_INPUT_TOO_LARGE', 'DOCSPLIT_UNSUPPORTED_MEDIA_TYPE', 'DOCSPLIT_INVALID_UTF8',
  'DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_LIMIT_EXCEEDED', 'DOCSPLIT_TOKENIZER_UNAVAILABLE', 'DOCSPLIT_EXTRA_UNAVAILABLE',
  'DOCSPLIT_RATE_LIMITED', 'DOCSPLIT_PLUGIN_CONTRACT', 'DOCSPLIT_INTERNAL', 'DOCSPLIT_TIMEOUT', 'DOCSPLIT_OVERLOADED',
  ...requestErrors(),
]

/** Refusals that come before a request is routed, so before the rate limit counts it. */
const UNROUTED = new Set<ErrorCode>(['DOCSPLIT_HEADERS_TOO_LARGE', 'DOCSPLIT_EXPECTATION_FAILED', 'DOCSPLIT_REQUEST_TIMEOUT'])

/** What any request may get before it reaches its route: malformed (no `Host`), headers too large, an Expect not met, a body too slow. */
function requestErrors (): ErrorCode[] {
  return ['DOCSPLIT_INVALID_REQUEST', 'DOCSPLIT_HEADERS_TOO_LARGE', 'DOCSPLIT_EXPECTATION_FAILED', 'DOCSPLIT_REQUEST_TIMEOUT']
}

const integerHeader = (description: string): unknown => ({ type: 'integer', minimum: 0, description })
/**
 * The rate limit's headers (draft-ietf-httpapi-ratelimit-headers), on every split response that
 * was counted: a 200, and a refusal once the request's headers passed the limit (not a 503
 * refused as they arrive, before it is counted).
 */
const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': integerHeader('Split requests allowed per window for this client (DOCSPLIT_WEB_RATE_LIMIT_REQUESTS).'),
  'RateLimit-Remaining': integerHeader('Requests left in the current window.'),
  'RateLimit-Reset': integerHeader('Seconds until the window resets.'),
}
/** Sent with 429 and with 503 DOCSPLIT_OVERLOADED (not with DOCSPLIT_TIMEOUT: the same input would time out again). */
const RETRY_AFTER = { 'Retry-After': integerHeader('Seconds to wait before retrying: sent with DOCSPLIT_RATE_LIMITED and DOCSPLIT_OVERLOADED, not with DOCSPLIT_TIMEOUT.') }

/**
 * One documented response per status, listing the codes that use it, as problem+json.
 * `counted`: the route is rate limited, so a refusal after the count carries its RateLimit-* headers.
 */
function problemResponses (codes: ErrorCode[], counted = false): Record<number, unknown> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of new Set(codes)) {
    const status = errorTable[code].status
    byStatus.set(status, [...(byStatus.get(status) ?? []), code])
  }
  const out: Record<number, unknown> = {}
  for (const [status, list] of byStatus) {
    const lines = list.map((code) => `- \`${code}\` (${problemType(code)}): ${errorTable[code].description}`)
    // Refused before routing (a request too slow, headers too large, an Expect not met): never counted.
    const withCount = counted && list.some((code) => !UNROUTED.has(code))
    out[status] = {
      description: `${list.map((c) => errorTable[c].title).join('; ')}.\n\n${lines.join('\n')}`,
      ...(status === 429 || status === 503 || withCount ? { headers: { ...(withCount ? RATE_LIMIT_HEADERS : {}), ...(status === 429 || status === 503 ? RETRY_AFTER : {}) } } : {}),
      content: { 'application/problem+json': { schema: Type.Object({ ...ProblemInline.properties, code: Type.String({ enum: list }) }) } },
    }
  }
  return out
}

/** Responses of both split routes: the response object, or NDJSON, or a problem. */
export function splitResponses (): Record<number, unknown> {
  return {
    200: {
      headers: RATE_LIMIT_HEADERS,
      description: `The split, \`schema_version\` ${SCHEMA_VERSION}. With \`Accept: application/x-ndjson\`, the same content as lines: a header (schema_version, input_format, metadata), one chunk per line as it is made, then a trailer (document, reference_definitions, chunk_count) or, if the split failed after its first chunk, an \`{"error": problem}\` line. The header goes out with the first chunk: a failure before any chunk is a problem response.`,
      content: {
        'application/json': { schema: { $ref: 'SplitResponse#' } },
        'application/x-ndjson': { schema: Type.Union([NdjsonHeader, ndjsonChunk(), NdjsonTrailer, NdjsonError]) },
      },
    },
    ...problemResponses(splitErrors, true),
  }
}

/** Health, version and docs fail by a server fault, while the service shuts down (503), or before routing. */
export function plainErrorResponses (): Record<number, unknown> {
  return problemResponses(['DOCSPLIT_INTERNAL', 'DOCSPLIT_OVERLOADED', ...requestErrors()])
}
