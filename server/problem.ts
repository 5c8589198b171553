/**
 * Turns any error into an RFC 9457 problem (`application/problem+json`) from the one error
 * table. Only a DocsplitError's own message reaches the client, and only after sanitizing:
 * no stack, no server path, nothing past a length cap. Everything unknown is a bare 500.
 */
import { DocsplitError, errorTable, type ErrorCode } from '../core/errors.js'

export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  code: string
}

export interface ProblemReply {
  body: ProblemBody
  /** Extra response headers (Retry-After). */
  headers: Record<string, string>
  /** True when nothing about the error is known: logged as an internal error. */
  internal: boolean
}

/** The problem `type`: a stable URN per code, documented in the README errors table. */
export function problemType (code: string): string {
  return `urn:docsplit:error:${code}`
}

const MAX_DETAIL = 600

/** Drops anything that looks like a file path or a stack frame, controls, and overlong tails. */
export function sanitize (message: string): string {
  let text = message.split('\n    at ')[0] ?? ''
  // Absolute file paths (two or more segments), but not the service's own routes.
  text = text.replace(/(?:file:\/\/)?(?<![\w.:/-])\/(?!docsplit\/)(?:[\w.@+-]+\/)+[\w.@+-]*/g, '<path>')
  text = text.replace(/\b[A-Za-z]:\\[^\s"']+/g, '<path>')
  text = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ')
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}...` : text
}

/** fastify's and its plugins' own error codes, by what they mean for a client. */
const fastifyCodes: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'DOCSPLIT_INPUT_TOO_LARGE',
  FST_REQ_FILE_TOO_LARGE: 'DOCSPLIT_INPUT_TOO_LARGE',
  FST_FILES_LIMIT: 'DOCSPLIT_INPUT_TOO_LARGE',
  FST_FIELDS_LIMIT: 'DOCSPLIT_INPUT_TOO_LARGE',
  FST_PARTS_LIMIT: 'DOCSPLIT_INPUT_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'DOCSPLIT_UNSUPPORTED_MEDIA_TYPE',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'DOCSPLIT_UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'DOCSPLIT_INVALID_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'DOCSPLIT_INVALID_REQUEST',
  FST_ERR_CTP_INVALID_JSON_BODY: 'DOCSPLIT_INVALID_REQUEST',
  FST_PROTO_VIOLATION: 'DOCSPLIT_INVALID_REQUEST',
  FST_ERR_BAD_URL: 'DOCSPLIT_INVALID_REQUEST',
  FST_ERR_MAX_PARAM_LENGTH: 'DOCSPLIT_INVALID_REQUEST',
}

/** Details for fastify's codes that the fixed detail of their docsplit code would misdescribe. */
const codeDetail: Record<string, string> = {
  FST_PROTO_VIOLATION: 'A form field is named like a built-in property of objects (__proto__, constructor, toString, ...), which is refused.',
}

/** Fixed details for fastify's errors: their own messages are fine, but fixed text is safer. */
const fixedDetail: Partial<Record<ErrorCode, string>> = {
  DOCSPLIT_INPUT_TOO_LARGE: 'The request body or uploaded file is larger than the service accepts (DOCSPLIT_WEB_MAX_BODY_BYTES), or the form has more than one file or too many fields.',
  DOCSPLIT_UNSUPPORTED_MEDIA_TYPE: 'Wrong content-type: POST /docsplit/api/split/text takes application/json, POST /docsplit/api/split/file takes multipart/form-data.',
  DOCSPLIT_INVALID_REQUEST: 'The request body is not valid JSON or does not match the documented schema (see /openapi.json).',
  DOCSPLIT_NOT_FOUND: 'No route matches this method and path; see /docs.',
  DOCSPLIT_INTERNAL: 'An unexpected error occurred. No detail is given; the request can be retried.',
  DOCSPLIT_RATE_LIMITED: 'Too many split requests. Retry after the number of seconds in Retry-After.',
}

function build (code: ErrorCode, detail: string, headers: Record<string, string> = {}, internal = false): ProblemReply {
  const spec = errorTable[code]
  return {
    body: { type: problemType(code), title: spec.title, status: spec.status, detail, code },
    headers,
    internal,
  }
}

/** An error with a Retry-After hint for the client (overload, rate limit). */
export interface RetryHint { retryAfterSeconds?: number }

/** Maps any thrown value to the problem the client sees. */
export function toProblem (err: unknown): ProblemReply {
  if (err instanceof DocsplitError) {
    const retry = (err as DocsplitError & RetryHint).retryAfterSeconds
    const headers = retry !== undefined ? { 'retry-after': String(Math.max(1, Math.ceil(retry))) } : undefined
    if (err.code === 'DOCSPLIT_INTERNAL') return build('DOCSPLIT_INTERNAL', fixedDetail.DOCSPLIT_INTERNAL ?? '', headers, true)
    return build(err.code, sanitize(err.message), headers)
  }
  const e = (err ?? {}) as { code?: unknown, statusCode?: unknown, validation?: unknown }
  const mapped = typeof e.code === 'string' ? fastifyCodes[e.code] : undefined
  if (mapped !== undefined) return build(mapped, codeDetail[e.code as string] ?? fixedDetail[mapped] ?? errorTable[mapped].description)
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500
  if (status === 404) return build('DOCSPLIT_NOT_FOUND', fixedDetail.DOCSPLIT_NOT_FOUND ?? '')
  if (status === 413) return build('DOCSPLIT_INPUT_TOO_LARGE', fixedDetail.DOCSPLIT_INPUT_TOO_LARGE ?? '')
  if (status === 415) return build('DOCSPLIT_UNSUPPORTED_MEDIA_TYPE', fixedDetail.DOCSPLIT_UNSUPPORTED_MEDIA_TYPE ?? '')
  if (status === 429) return build('DOCSPLIT_RATE_LIMITED', fixedDetail.DOCSPLIT_RATE_LIMITED ?? '')
  if (status >= 400 && status < 500) return build('DOCSPLIT_INVALID_REQUEST', fixedDetail.DOCSPLIT_INVALID_REQUEST ?? '')
  return build('DOCSPLIT_INTERNAL', fixedDetail.DOCSPLIT_INTERNAL ?? '', {}, true)
}

/** Every code the HTTP service can answer with, for OpenAPI and the README table. */
export const httpCodes = Object.keys(errorTable) as ErrorCode[]
