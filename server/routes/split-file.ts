/**
 * POST /docsplit/api/split/file: multipart/form-data with one `file` part and options as form
 * fields (strings; numbers are coerced by the engine). The file is read into memory only, never
 * written to disk. Every multipart limit is set, and parts are iterated so that a second file
 * is a 413 rather than silently ignored.
 */
import type { IncomingMessage } from 'node:http'
import { basename } from 'node:path/win32'
import multipart from '@fastify/multipart'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TSchema } from 'typebox'
import { DocsplitError } from '../../core/errors.js'
import { unknownOptionError } from '../../core/options.js'
import { fileBody, splitResponses } from '../schemas.js'
import { refuseQueryOptionsAndEncoding, sendSplit } from '../split-reply.js'

export interface SplitFileOptions {
  options: Record<string, TSchema>
  maxBodyBytes: number
}

const FIELD_BYTES = 16 * 1024
/** The `filename` option's longest value, in code points (its schema's maxLength). */
const MAX_FILENAME = 1024
/**
 * Repeated parts allowed for each list option (`sheets`) beyond its first; past it, the form has
 * too many fields (413). One part may also hold a comma-separated list.
 */
const LIST_PARTS = 100

/** What form fields, part headers and boundaries may add to the largest file. */
const FORM_OVERHEAD = 1 << 20

function formTooLarge (cap: number): DocsplitError {
  return new DocsplitError('DOCSPLIT_INPUT_TOO_LARGE', `a form body is limited to ${cap} bytes: the largest file (DOCSPLIT_WEB_MAX_BODY_BYTES) and ${FORM_OVERHEAD} for the fields`)
}

/**
 * Refuses a form body past `cap` bytes while it arrives: the parser drops bytes outside the
 * parts (a preamble, an epilogue) without counting them against any limit. The error goes to
 * the form parser through the request, so the parts being read end with it. Call once the
 * parser reads the request (before, a 'data' listener would start the flow without it).
 */
function capBody (raw: IncomingMessage, cap: number): () => void {
  let received = 0
  const onData = (data: Buffer): void => {
    received += data.length
    if (received <= cap) return
    raw.off('data', onData)
    raw.emit('error', formTooLarge(cap))
  }
  raw.on('data', onData)
  return () => raw.off('data', onData)
}

async function requireMultipart (request: FastifyRequest, optionNames: ReadonlySet<string>): Promise<void> {
  refuseQueryOptionsAndEncoding(request, optionNames)
  // The multipart parser has not run yet: look at the header.
  const type = (request.headers['content-type'] ?? '').split(';', 1)[0]?.trim().toLowerCase()
  if (type !== 'multipart/form-data') {
    throw new DocsplitError('DOCSPLIT_UNSUPPORTED_MEDIA_TYPE',
      'POST /docsplit/api/split/file takes multipart/form-data with a `file` part; send text as JSON to POST /docsplit/api/split/text')
  }
}

/**
 * The part named `file` is the document even without `filename=` (what `curl -F 'file=<x'`
 * sends): read as bytes, under the file limits, not as a 16 KiB text field.
 */
function isPartAFile (fieldName: string | undefined, contentType: string | undefined, fileName: string | undefined): boolean {
  return fieldName === 'file' || contentType === 'application/octet-stream' || fileName !== undefined
}

function misnamedFile (): DocsplitError {
  return new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'the document goes in a form part named "file"')
}

export default async function splitFile (app: FastifyInstance, opts: SplitFileOptions): Promise<void> {
  const listOptions = new Set(Object.entries(opts.options).filter(([, schema]) => (schema as { type?: string }).type === 'array').map(([name]) => name))
  // A list option's repeated parts count against the part limit too.
  const fieldCount = Object.keys(opts.options).length + listOptions.size * LIST_PARTS
  const optionNames = new Set(['file', ...Object.keys(opts.options)])
  await app.register(multipart, {
    limits: {
      fileSize: opts.maxBodyBytes,
      files: 1,
      fields: fieldCount,
      fieldSize: FIELD_BYTES,
      fieldNameSize: 100,
      parts: fieldCount + 1,
      headerPairs: 100,
    },
    throwFileSizeLimit: true,
  })
  const cap = opts.maxBodyBytes + FORM_OVERHEAD
  app.post('/docsplit/api/split/file', {
    async preParsing (request, _reply, payload) {
      await requireMultipart(request, optionNames)
      if (Number(request.headers['content-length']) > cap) throw formTooLarge(cap)
      return payload
    },
    // The form is parsed by hand below; the schema is for the documentation.
    validatorCompiler: () => () => true,
    schema: {
      operationId: 'splitFile',
      summary: 'Split an uploaded file',
      description: 'Splits the uploaded `file`. `input_format` defaults to `auto`: chosen by the file name, then by content. Options are form fields.',
      tags: ['split'],
      consumes: ['multipart/form-data'],
      body: fileBody(opts.options),
      response: splitResponses() as never,
    },
  }, async (request, reply) => {
    let file: Buffer | undefined
    let filename: string | undefined
    const options: Record<string, unknown> = {}
    // The form parser refuses a part named like a member of Object.prototype (`constructor`,
    // `toString`) with an error that does not say which: its name is noted here, as the
    // parser reads each part's headers, to answer as for any other name.
    let refusedPart: { name: string, file: boolean } | undefined
    const form = request.parts({
      isPartAFile: (fieldName, contentType, fileName) => {
        const file = isPartAFile(fieldName, contentType, fileName)
        if (refusedPart === undefined && fieldName !== undefined && fieldName in Object.prototype) refusedPart = { name: fieldName, file }
        return file
      },
    })[Symbol.asyncIterator]()
    // The first step attaches the form parser to the request.
    const first = form.next()
    const stopCounting = capBody(request.raw, cap)
    try {
      for (let step = await first; step.done !== true; step = await form.next()) {
        const part = step.value
        if (part.type === 'file') {
          // Read it all (it counts against the limit) even when misnamed, then refuse.
          const data = await part.toBuffer()
          if (part.fieldname !== 'file') throw misnamedFile()
          file = data
          filename = part.filename
          continue
        }
        if (part.valueTruncated || part.fieldnameTruncated) {
          throw new DocsplitError('DOCSPLIT_INPUT_TOO_LARGE', `form field values are limited to ${FIELD_BYTES} bytes`)
        }
        const value = typeof part.value === 'string' ? part.value : String(part.value)
        if (value === '') continue
        const name = part.fieldname
        if (Object.hasOwn(options, name)) {
          // A list option may come as repeated parts, one value each (how OpenAPI clients send
          // an array); a single part is a comma-separated list.
          if (!listOptions.has(name)) throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', `form field "${name.slice(0, 64)}" is given twice`)
          const previous = options[name]
          const list = Array.isArray(previous) ? previous as unknown[] : [previous]
          if (list.length > LIST_PARTS) throw new DocsplitError('DOCSPLIT_INPUT_TOO_LARGE', `form field "${name}" may be repeated up to ${LIST_PARTS + 1} times; send more values in one comma-separated field`)
          list.push(value)
          options[name] = list
          continue
        }
        options[name] = value
      }
    } catch (err) {
      // busboy reports a malformed or cut-off form (no boundary, a part cut short, no closing
      // boundary, a client gone mid-upload) as plain Errors: the client's fault, not ours.
      const code = (err as { code?: unknown } | undefined)?.code
      if (code === 'FST_PROTO_VIOLATION' && refusedPart !== undefined) {
        throw refusedPart.file ? misnamedFile() : unknownOptionError(refusedPart.name, Object.keys(opts.options))
      }
      if (err instanceof DocsplitError || (typeof code === 'string' && code.startsWith('FST_'))) throw err
      throw new DocsplitError('DOCSPLIT_INVALID_REQUEST',
        'the multipart/form-data body is malformed or incomplete (no boundary, a part cut short, or no closing boundary)', { cause: err })
    } finally {
      stopCounting()
    }
    if (file === undefined) {
      throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'the form needs a part named "file" with the document')
    }
    if (options.filename === undefined && filename !== undefined && filename !== '') {
      // Browsers may send C:\fakepath\name.md: keep the last segment of either separator.
      const name = basename(filename)
      // Never cut: a cut name can end in another extension (`.csv` to `.cs`), another format.
      const length = [...name].length
      if (length > MAX_FILENAME) {
        throw new DocsplitError('DOCSPLIT_INVALID_OPTION', `the file part's name has ${length} characters; filename takes at most ${MAX_FILENAME}: send a shorter name, or a filename field (it wins over the part's name)`)
      }
      options.filename = name
    }
    return sendSplit(app, request, reply, new Uint8Array(file.buffer, file.byteOffset, file.byteLength), options)
  })
}
