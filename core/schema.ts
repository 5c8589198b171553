/**
 * The output schema `docsplit.chunk.v1`, defined once. The same objects validate responses in
 * tests, type the library, describe the HTTP API in OpenAPI and generate the README table.
 */
import { Type, type Static } from 'typebox'

export const SCHEMA_VERSION = 'docsplit.chunk.v1'

const Offset = (description: string): ReturnType<typeof Type.Integer> => Type.Integer({ minimum: 0, description })

export const Boundary = Type.Union([
  Type.Literal('section'), Type.Literal('block'), Type.Literal('line'), Type.Literal('sentence'),
  Type.Literal('word'), Type.Literal('grapheme'), Type.Literal('record'), Type.Literal('end'),
], { description: 'Why the chunk ended: `section` where a container of the document opens or closes (a heading\'s section, but also a list or list item, a quote, front matter, a class or function), `block` between two blocks of the same container; inside a block at a `line`, `sentence`, `word` or `grapheme` (the block alone was over budget); after a `record`; or at the `end` of the document.' })

export const Chunk = Type.Object({
  id: Type.String({ description: 'Stable id: a hash of the chunk\'s text and character offsets, and of nothing else: another document with the same text at the same offsets gives the same id, so a store that holds many documents keys chunks by document and id. The same on every run and machine; an edit before a chunk moves its offsets and so changes its id (to keep the embeddings of unchanged text when re-indexing an edited document, key them by a hash of `text`).' }),
  index: Type.Integer({ minimum: 0, description: 'Position of the chunk in the document, from 0.' }),
  text: Type.String({ description: 'The chunk, exactly as it is in the source (for text formats: source[char_start:char_end]).' }),
  token_count: Type.Integer({ minimum: 0, description: 'The tokenizer\'s exact count of `text`.' }),
  char_start: Offset('First character, in Unicode code points from 0 (as a Python slice).'),
  char_end: Offset('End (exclusive), in Unicode code points.'),
  byte_start: Offset('First byte in the input as received (BOM and source encoding included).'),
  byte_end: Offset('End byte (exclusive) in the input as received.'),
  line_start: Type.Integer({ minimum: 1, description: 'Line of the first character, from 1 (a line ends at LF, CRLF or a lone CR).' }),
  line_end: Type.Integer({ minimum: 1, description: 'Line of the last character.' }),
  path: Type.Array(Type.String(), { description: 'Enclosing structure: heading path, class and function, XML element path, sheet name, JSON path; of a chunk that spans sibling sections or declarations, the path around all of them (the innermost container that holds the whole chunk, so not the heading of a subsection it starts with; with overlap, the chunk\'s own text after the repeated tail: a chunk that repeats a parent section\'s last sentence before a subsection\'s heading has the subsection\'s path). Under `record`, a chunk of a single record also ends with that record\'s label (a log entry\'s `line N`, a CSV `row N`); a chunk of several has only the path around them. A label over 200 characters keeps its start and end around a `…` (a code signature over 160 keeps its start and a `…`); a path more than 64 containers deep keeps the outermost 8 and the innermost 55 around a `…`.' }),
  kinds: Type.Array(Type.String(), { description: 'Kinds of the blocks or records inside, in order of first appearance.' }),
  boundary: Boundary,
  protected: Type.Boolean({ description: 'True only for a single record over budget (the `record` splitter): emitted whole, never cut.' }),
  record_start: Type.Optional(Type.Integer({ minimum: 0, description: 'Index (from 0) of the first record in the chunk. Under the `record` splitter, on every chunk that holds a record (a file of comments or blank lines only has none); `sibling` leaves it out.' })),
  record_count: Type.Optional(Type.Integer({ minimum: 0, description: 'Number of records in the chunk. Under the `record` splitter, on every chunk that holds a record (a file of comments or blank lines only has none); `sibling` leaves it out.' })),
  context: Type.Optional(Type.String({ description: 'What the chunk needs to be read alone: the CSV header row of its records, the header of the markdown table whose rows it starts with, the first child (a `<title>`) of each XML element opened around its records, or, for YAML, the key line of each record opened around them with the first pairs of scalars of a mapping (a Kubernetes document\'s `apiVersion`, `kind` and `metadata` `name`, then `spec:`, `template:`, ...), so that it reads as the YAML around the chunk; one a line. Not part of `text` or `token_count`.' })),
}, { $id: 'Chunk', additionalProperties: true, description: 'One chunk (docsplit.chunk.v1). A parser may add fields of its own (declared as its `chunkFields`).' })

export const ReferenceDefinition = Type.Object({
  label: Type.String(),
  url: Type.String(),
  title: Type.Union([Type.String(), Type.Null()], { description: 'The document\'s title where its format has one (markdown\'s first level-1 heading, an XML root\'s `title`), or null.' }),
  chunks: Type.Array(Type.Integer({ minimum: 0 }), { description: 'Indexes of the chunks that use the label.' }),
})

export const DocumentInfo = Type.Object({
  input_format: Type.String({ description: 'The format the document was read as (`auto` resolved).' }),
  char_count: Type.Integer({ minimum: 0, description: 'Unicode code points of the decoded text (of a binary format such as xlsx: of the text extracted from it, which chunks\' offsets index).' }),
  byte_count: Type.Integer({ minimum: 0, description: 'Bytes of the input as received (of xlsx: the upload, while chunks\' byte offsets index the extracted text as UTF-8).' }),
  line_count: Type.Integer({ minimum: 0, description: 'Lines of the decoded text (a line ends at LF, CRLF or a lone CR).' }),
  token_count: Type.Integer({ minimum: 0, description: 'Sum of the chunks\' token counts (overlap counted in each chunk).' }),
  title: Type.Union([Type.String(), Type.Null()], { description: 'The document\'s title where its format has one (markdown\'s first level-1 heading, an XML root\'s `title`), or null.' }),
  front_matter: Type.Union([Type.Unknown(), Type.Null()], { description: 'Parsed YAML front matter of a markdown document, or null.' }),
  encoding: Type.String({ description: 'The encoding the input was decoded from (WHATWG name: `latin1` reads as `windows-1252`).' }),
  replaced: Type.Optional(Type.Object({
    sequences: Type.Integer({ minimum: 0, description: 'Invalid UTF-8 sequences (text given as a string: lone surrogates) read as U+FFFD.' }),
    first_byte: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'Byte offset of the first, or null when there was none.' }),
  }, { description: 'With `invalid_bytes: replace` only: the bytes that were not valid UTF-8, or the lone surrogates of text given as a string. Each sequence is one U+FFFD in the text; byte offsets count its bytes as received (a lone surrogate, as its U+FFFD: three).' })),
  info: Type.Record(Type.String(), Type.Unknown(), { description: 'Other document information a parser reported (columns, sheets, language, ...).' }),
})

export const Metadata = Type.Object({
  splitter: Type.String(),
  tokenizer: Type.String(),
  max_tokens: Type.Integer(),
  overlap_tokens: Type.Integer(),
  engine_version: Type.String(),
  options: Type.Record(Type.String(), Type.Unknown(), { description: 'The options in effect, with their values: the engine\'s and those of the parser and splitter at work (another format\'s option is accepted and left out).' }),
}, { additionalProperties: true, description: 'How the document was split. Parsers may add entries (code adds `syntax_aware`).' })

export const SplitResponse = Type.Object({
  schema_version: Type.Literal(SCHEMA_VERSION),
  document: DocumentInfo,
  metadata: Metadata,
  reference_definitions: Type.Array(ReferenceDefinition),
  chunk_count: Type.Integer({ minimum: 0 }),
  chunks: Type.Array(Chunk),
}, { $id: 'SplitResponse' })

/** RFC 9457 problem details, with docsplit's stable `code`. */
export const Problem = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  detail: Type.String(),
  code: Type.String(),
}, { $id: 'Problem' })

/**
 * Fields a plugin adds to chunks, by name (xlsx: `sheet`, `row_start`, `row_end`): a plugin
 * package adds its own with `declare module 'docsplit' { interface ChunkFields { ... } }`.
 */
export interface ChunkFields {} // filled by declaration merging

/** A chunk: the schema's fields and those plugins add. */
export type Chunk = Static<typeof Chunk> & ChunkFields
export type DocumentInfo = Static<typeof DocumentInfo>
/** Entries a parser adds (code: `syntax_aware`) are there too, as unknown. */
export type Metadata = Static<typeof Metadata> & Record<string, unknown>
export type ReferenceDefinition = Static<typeof ReferenceDefinition>
export type SplitResponse = Omit<Static<typeof SplitResponse>, 'metadata' | 'chunks'> & { metadata: Metadata, chunks: Chunk[] }
export type SplitSummary = Omit<SplitResponse, 'chunks'>

/**
 * `JSON.stringify` of a split response (`pretty`: indented by 2) up to its chunks' opening
 * bracket: a response is its summary, then its chunks. For a front that writes or builds a
 * large answer a chunk at a time, byte for byte as the whole response would stringify.
 */
export function responseOpening (summary: SplitSummary, pretty = false): string {
  const empty = JSON.stringify({ ...summary, chunks: [] }, null, pretty ? 2 : undefined)
  return empty.slice(0, empty.length - (pretty ? '[]\n}' : '[]}').length) + '['
}
export type Problem = Static<typeof Problem>
