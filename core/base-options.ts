/**
 * The engine's own options (the table every front shares). Apart from options.ts, which
 * validates them, so that the registry can refuse a plugin option that takes one of these names.
 */
import { Type } from 'typebox'

export const MIN_TOKENS = 8
export const MAX_TOKENS = 1_000_000
/** The tokenizer when none is named; also what parsers estimate by and packers sharpen estimates with. */
export const DEFAULT_TOKENIZER = 'approx'

/** The engine's own options. Enums of names are filled from the registry by `optionsSchema()`. */
export const baseOptions = {
  input_format: Type.String({ default: 'auto', description: 'Format of the input, or `auto` to choose by file name, then by content. Names are case-insensitive; another name of a format (`md`, `yml`, `ndjson`, `txt`, `py`) is reported as the format\'s own (`markdown`, ...).' }),
  max_tokens: Type.Integer({ minimum: MIN_TOKENS, maximum: MAX_TOKENS, default: 512, description: 'Budget: no chunk (except a `protected` record) has more tokens.' }),
  splitter: Type.String({ description: 'How chunks are packed. Default: the format\'s own (`sibling` for documents, `record` for records). Names are case-insensitive.' }),
  tokenizer: Type.String({ default: DEFAULT_TOKENIZER, description: 'Counts tokens: `approx` (no dependency; at least the real o200k/cl100k count on 99.4% of corpus pieces), an encoding such as `o200k_base`, or a model name such as `gpt-4o` (a dated snapshot such as `gpt-4o-2024-08-06` too). Name the model\'s encoding when the budget is a hard limit. Names are case-insensitive (`O200K_BASE`, `GPT-4o`).' }),
  overlap_tokens: Type.Integer({ minimum: 0, maximum: MAX_TOKENS / 2, default: 0, description: 'Each chunk repeats up to this many tokens from the end of the previous one (at most half of `max_tokens`), starting at a word or a record; never across the end of a section (a chunk that opens the next section starts with its heading). The repeat takes what room is left under `max_tokens`.' }),
  // No `default` here: a client that sends every default (an OpenAPI client) would send utf-8,
  // and a document's declared encoding applies only when none is given (resolveOptions falls back).
  encoding: Type.String({ description: 'Encoding of the input bytes: `utf-8`, `utf-16le`, `utf-16be` or a single-byte WHATWG label (`latin1`, `windows-1252`, ...). A BOM overrides it. When it is not given, UTF-16 without a BOM is told from the first bytes (text with some ASCII among it: a zero byte in at least a fifth of the byte pairs, nearly always on the same side), else an encoding the document declares is used (an XML declaration\'s `encoding="ISO-8859-1"`), else UTF-8. Labels follow WHATWG: `latin1` and `iso-8859-1` decode as `windows-1252` (bytes 0x80-0x9F are `€`, `‚`, ...), the name `document.encoding` and `metadata.options.encoding` report (`metadata.options` names the encoding given, declared or told from the first bytes; `document.encoding` the one read, a BOM\'s). Text given as a string is decoded already: there, only `utf-8` is accepted.' }),
  invalid_bytes: Type.String({ enum: ['error', 'replace'], default: 'error', description: 'What bytes that are not valid UTF-8 do: `error` stops the split with DOCSPLIT_INVALID_UTF8, naming the byte offset (chunks before it are out already); `replace` reads each invalid sequence as U+FFFD, as WHATWG decoders do, and goes on (a log with a stray Latin-1 byte): byte offsets still count the bytes as received, and `document.replaced` (UTF-8 input only) says how many sequences were replaced and where the first was. Text given as a string: each lone surrogate (no UTF-8 form; `error` refuses it at its string index) is read as U+FFFD, as `String.prototype.toWellFormed` does. UTF-16 must be valid (DOCSPLIT_PARSE_ERROR at the byte offset of the first bad unit), and single-byte encodings decode every byte.' }),
  filename: Type.String({ maxLength: 1024, description: 'Name of the input file, used by `auto` to choose the format by extension.' }),
} as const
