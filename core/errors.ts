/**
 * One table of stable error codes. Each code maps to one HTTP status, one CLI exit code and a
 * problem title. Codes are never reused or renamed: clients match on them.
 * Messages say what was wrong and how to fix it; they never hold document text or server paths.
 */

export interface ErrorSpec {
  /** HTTP status of the problem+json response. */
  status: number
  /** `docsplit` exit code: 2 usage, 3 input, 4 missing optional dependency, 1 internal. */
  exit: number
  /** Short, fixed title (RFC 9457 `title`). */
  title: string
  /** What it means and how to solve it (README and OpenAPI tables). */
  description: string
}

export const errorTable = {
  DOCSPLIT_INVALID_OPTION: {
    status: 400, exit: 2, title: 'Invalid option',
    description: 'An option has the wrong type or is out of range. The message names the option and the accepted values or range.',
  },
  DOCSPLIT_INVALID_BUDGET: {
    status: 400, exit: 2, title: 'Invalid budget',
    description: '`max_tokens` is not an integer from 8 to 1,000,000, or `overlap_tokens` is not an integer from 0 to half of it.',
  },
  DOCSPLIT_UNKNOWN_OPTION: {
    status: 400, exit: 2, title: 'Unknown option',
    description: 'An option name is not known to the engine or to any loaded plugin. The message lists the accepted names.',
  },
  DOCSPLIT_UNSUPPORTED_FORMAT: {
    status: 400, exit: 2, title: 'Unsupported format',
    description: 'The `input_format` is not registered, or `auto` could not tell the format. The message lists the formats.',
  },
  DOCSPLIT_UNKNOWN_SPLITTER: {
    status: 400, exit: 2, title: 'Unknown splitter',
    description: 'The `splitter` is not registered. The message lists the splitters.',
  },
  DOCSPLIT_UNKNOWN_TOKENIZER: {
    status: 400, exit: 2, title: 'Unknown tokenizer',
    description: 'The `tokenizer` is neither a registered tokenizer nor a known model name. The message lists them.',
  },
  DOCSPLIT_UNSUPPORTED_ENCODING: {
    status: 400, exit: 2, title: 'Unsupported encoding',
    description: 'The `encoding` is not UTF-8, UTF-16 or a single-byte WHATWG encoding (latin1, windows-1252, ...).',
  },
  DOCSPLIT_FORMAT_NEEDS_FILE: {
    status: 400, exit: 2, title: 'Format needs a file upload',
    description: 'A binary format (such as xlsx) was sent as text. Send it to the file endpoint or give the CLI a file.',
  },
  DOCSPLIT_INVALID_REQUEST: {
    status: 400, exit: 2, title: 'Invalid request',
    description: 'The request body or form does not match the documented schema.',
  },
  DOCSPLIT_INVALID_UTF8: {
    status: 422, exit: 3, title: 'Invalid UTF-8',
    description: 'The input is not valid UTF-8. The message gives the byte offset; pass `encoding` if the input uses another encoding, or `invalid_bytes: replace` to read the bad bytes as U+FFFD. Bytes of a binary format read as text (a workbook named `.txt`) are named first, with the `input_format` that reads them. Text given as a string with a lone surrogate (no UTF-8 form) is refused too, at its string index, unless `invalid_bytes` is `replace`.',
  },
  DOCSPLIT_READ_FAILED: {
    status: 400, exit: 3, title: 'Input could not be read',
    description: 'Reading the input failed: an I/O error (EIO, EISDIR, ...) or an input stream that emitted an error. The message gives the error code.',
  },
  DOCSPLIT_PARSE_ERROR: {
    status: 422, exit: 3, title: 'Document not parseable',
    description: 'The document is not valid in its declared format. The message gives the line and column where known (1-based; a column counts UTF-16 code units, as JavaScript string positions do); for bytes not valid in their encoding (UTF-16, a single-byte one), the byte offset, a BOM counted, as for UTF-8.',
  },
  DOCSPLIT_LIMIT_EXCEEDED: {
    status: 422, exit: 3, title: 'Document exceeds a safety limit',
    description: 'The document exceeds a limit that protects the service (nesting depth, inflated size, sheet or row count, alias expansion).',
  },
  DOCSPLIT_VERIFY_FAILED: {
    status: 500, exit: 3, title: 'Verification failed',
    description: '`--verify` found a chunk that breaks an invariant (lossless, offsets, overlap, budget). Please report it with the input that caused it.',
  },
  DOCSPLIT_TOKENIZER_UNAVAILABLE: {
    status: 422, exit: 4, title: 'Tokenizer unavailable',
    description: 'The tokenizer needs an optional dependency that is not installed. The message names the package to install.',
  },
  DOCSPLIT_EXTRA_UNAVAILABLE: {
    status: 422, exit: 4, title: 'Optional feature unavailable',
    description: 'The feature needs an optional extra (`web`, `spreadsheets`, `code-parsing`) that is not installed. The message names it.',
  },
  DOCSPLIT_PLUGIN_LOAD_FAILED: {
    status: 500, exit: 2, title: 'Plugin failed to load',
    description: 'A plugin module (or a package or file it imports) could not be found, threw on import or did not finish loading within 30 s (a top-level `await` that never settles), registered a name that is taken, is not a valid plugin, or is a parser whose `defaultSplitter` no loaded plugin registers.',
  },
  DOCSPLIT_PLUGIN_API_MISMATCH: {
    status: 500, exit: 2, title: 'Plugin built for another API version',
    description: 'A plugin declares a `docsplit` API range that this engine does not satisfy.',
  },
  DOCSPLIT_REGISTRY_FROZEN: {
    status: 500, exit: 1, title: 'Registry frozen',
    description: 'A plugin was registered after the first split. Load plugins before splitting (`--plugin`, `DOCSPLIT_PLUGINS`, or `register` at start).',
  },
  DOCSPLIT_PLUGIN_CONTRACT: {
    status: 500, exit: 1, title: 'Plugin broke its contract',
    description: 'A plugin emitted events or chunks that do not tile the text, or a chunk over budget. This is a bug in the plugin.',
  },
  DOCSPLIT_UNSUPPORTED_MEDIA_TYPE: {
    status: 415, exit: 2, title: 'Unsupported media type',
    description: 'The request has the wrong `content-type` (the text endpoint takes `application/json`, the file endpoint `multipart/form-data`).',
  },
  DOCSPLIT_INPUT_TOO_LARGE: {
    status: 413, exit: 3, title: 'Input too large',
    description: 'The request body or uploaded file is larger than `DOCSPLIT_WEB_MAX_BODY_BYTES`, or a multipart limit was passed.',
  },
  DOCSPLIT_HEADERS_TOO_LARGE: {
    status: 431, exit: 2, title: 'Request headers too large',
    description: 'The request headers are larger than the service accepts (16 KiB in all). Send fewer or shorter headers.',
  },
  DOCSPLIT_EXPECTATION_FAILED: {
    status: 417, exit: 2, title: 'Expectation not supported',
    description: 'The request has an `Expect` header other than `100-continue`, the only expectation the service meets. Leave the header out.',
  },
  DOCSPLIT_REQUEST_TIMEOUT: {
    status: 408, exit: 1, title: 'Request not received in time',
    description: 'The client did not send its whole request (headers and body) within a minute. Send it faster or retry.',
  },
  DOCSPLIT_NOT_FOUND: {
    status: 404, exit: 2, title: 'Not found',
    description: 'No route has this path.',
  },
  DOCSPLIT_METHOD_NOT_ALLOWED: {
    status: 405, exit: 2, title: 'Method not allowed',
    description: 'The path exists but not for this method (GET on a split route, say); the `Allow` header lists its methods.',
  },
  DOCSPLIT_RATE_LIMITED: {
    status: 429, exit: 1, title: 'Too many requests',
    description: 'The client sent more split requests than the window allows. Wait for `Retry-After` seconds.',
  },
  DOCSPLIT_TIMEOUT: {
    status: 503, exit: 1, title: 'Split timed out',
    description: 'The split ran past `DOCSPLIT_WEB_SPLIT_TIMEOUT_SECONDS` and was stopped. Send a smaller document or raise the budget; when the detail names a plugin step it waited for (a parser\'s `create()`), that step took the time, not the document.',
  },
  DOCSPLIT_OVERLOADED: {
    status: 503, exit: 1, title: 'Service busy',
    description: 'The split queue is full (`DOCSPLIT_WEB_MAX_QUEUED_SPLITS`) or the service is shutting down. Retry after `Retry-After` seconds.',
  },
  DOCSPLIT_CANCELLED: {
    status: 499, exit: 1, title: 'Split stopped early',
    description: 'Library only: the caller stopped reading chunks before the last one (`break` out of a `splitStream` loop), so the document summary was never made; `summary` rejects with this code. Also the error of a split whose `signal` was aborted (its `cause` is the signal\'s reason).',
  },
  DOCSPLIT_INTERNAL: {
    status: 500, exit: 1, title: 'Internal error',
    description: 'An unexpected failure. No detail is returned; the request can be retried.',
  },
} as const satisfies Record<string, ErrorSpec>

export type ErrorCode = keyof typeof errorTable

/**
 * The codes a parser fails with through `ctx.fail`: what is wrong with the input, or with the
 * request as it applies to the format. The service's own (rate limit, timeout), the engine's
 * (a broken contract, an internal error) and the checks' (`--verify`) are not a parser's to give.
 */
export const PARSER_ERROR_CODES = [
  'DOCSPLIT_PARSE_ERROR',
  'DOCSPLIT_LIMIT_EXCEEDED',
  'DOCSPLIT_INVALID_UTF8',
  'DOCSPLIT_UNSUPPORTED_ENCODING',
  'DOCSPLIT_INVALID_OPTION',
  'DOCSPLIT_UNSUPPORTED_FORMAT',
  'DOCSPLIT_EXTRA_UNAVAILABLE',
] as const satisfies readonly ErrorCode[]

export type ParserErrorCode = typeof PARSER_ERROR_CODES[number]

/**
 * The error of a parser's `ctx.fail(code, message)`: the code it gave, when a parser may give
 * it, else DOCSPLIT_PLUGIN_CONTRACT naming the parser. A code that is not one is not quoted:
 * what a plugin passes may be document text.
 */
export function parserFailError (parser: string, code: unknown, message: string): DocsplitError {
  if ((PARSER_ERROR_CODES as readonly unknown[]).includes(code)) return new DocsplitError(code as ParserErrorCode, message)
  const given = isErrorCode(code) ? code : `a ${typeof code} that is not a docsplit error code`
  return new DocsplitError('DOCSPLIT_PLUGIN_CONTRACT', `parser "${parser}" failed with ${given}; ctx.fail takes ${PARSER_ERROR_CODES.join(', ')}`)
}

/**
 * Marks docsplit's errors in every copy of the package: a registered symbol is the same in all
 * of them, where `instanceof` knows only its own copy's class. A plugin loaded by path, or one
 * that lists docsplit in `dependencies`, may throw from a copy of its own.
 */
const DOCSPLIT_ERROR = Symbol.for('docsplit.error')

/** The one error class of docsplit. `code` is stable; `message` is safe to show to a client. */
export class DocsplitError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly exitCode: number
  readonly title: string
  /**
   * For DOCSPLIT_INTERNAL, the part that failed: `csv parser`, `my-tokenizer tokenizer`,
   * `engine`; for the service's DOCSPLIT_TIMEOUT, the plugin step it waited for. Names from
   * code, never from the input, so the service may log it.
   */
  readonly part?: string

  constructor (code: ErrorCode, message: string, options?: { cause?: unknown, part?: string }) {
    super(message, options)
    if (options?.part !== undefined) this.part = options.part
    this.name = 'DocsplitError'
    // A code that is not in the table (a plugin's typo) must not crash here: it is internal.
    this.code = isErrorCode(code) ? code : 'DOCSPLIT_INTERNAL'
    const spec: ErrorSpec = errorTable[this.code]
    this.status = spec.status
    this.exitCode = spec.exit
    this.title = spec.title
    Object.defineProperty(this, DOCSPLIT_ERROR, { value: true })
  }
}

export function isErrorCode (value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(errorTable, value)
}

export function isDocsplitError (value: unknown): value is DocsplitError {
  return value instanceof DocsplitError
}

/**
 * `error` as a DocsplitError of this copy when another copy of docsplit made it (with a code
 * this one knows): the same code, message and part. Anything else as it is.
 */
export function ownError (error: unknown): unknown {
  if (error instanceof DocsplitError || !(error instanceof Error) || (error as unknown as Record<symbol, unknown>)[DOCSPLIT_ERROR] !== true) return error
  const { code, part } = error as Error & { code?: unknown, part?: unknown }
  if (!isErrorCode(code)) return error
  return new DocsplitError(code, error.message, { cause: error.cause, ...(typeof part === 'string' ? { part } : {}) })
}

/** Lists accepted values in a message, short enough to read. */
export function listValues (values: readonly string[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ')
}

/**
 * A name a user gave (a file, a module, a word on the command line), quoted for a message:
 * its control characters escaped, so that it can neither break the message's line nor send
 * a terminal escape.
 */
export function quoted (name: string): string {
  return escapeControls(JSON.stringify(name))
}

/**
 * `text` with the control characters JSON escapes (U+0000-U+001F) and those it leaves raw (DEL,
 * the C1 controls, the line and paragraph separators) as `\uXXXX`.
 */
export function escapeControls (text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
