/**
 * POST /docsplit/api/split/text: a JSON body with `text` and split options (snake_case).
 * Only `application/json` is read (415 otherwise, before the body is read); the body limit
 * answers 413 from Content-Length or while reading.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { TSchema } from 'typebox'
import { DocsplitError } from '../../core/errors.js'
import { encodingInfo } from '../../core/decode.js'
import { tokenizerSpelling } from '../../core/registry.js'
import { textBody, splitResponses } from '../schemas.js'
import { refuseQueryOptionsAndEncoding, sendSplit } from '../split-reply.js'

export interface SplitTextOptions {
  options: Record<string, TSchema>
  maxBodyBytes: number
}

/** The `charset` parameter of a content-type, lower case and unquoted, if it has one. */
function charsetOf (contentType: string): string | undefined {
  for (const parameter of contentType.split(';').slice(1)) {
    const [name = '', value = ''] = parameter.split('=', 2).map((s) => s.trim())
    if (name.toLowerCase() === 'charset') return value.replace(/^"(.*)"$/, '$1').toLowerCase()
  }
  return undefined
}

/** preParsing: refuse anything but JSON before reading the body. */
export async function requireJson (request: FastifyRequest, optionNames: ReadonlySet<string>): Promise<void> {
  refuseQueryOptionsAndEncoding(request, optionNames)
  const contentType = request.headers['content-type'] ?? ''
  const type = contentType.split(';', 1)[0]?.trim().toLowerCase()
  if (type !== 'application/json') {
    throw new DocsplitError('DOCSPLIT_UNSUPPORTED_MEDIA_TYPE',
      'POST /docsplit/api/split/text takes content-type application/json; send files to POST /docsplit/api/split/file as multipart/form-data')
  }
  // The body is read as UTF-8 (RFC 8259): a body declared in another charset would be misread.
  const charset = charsetOf(contentType)
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new DocsplitError('DOCSPLIT_UNSUPPORTED_MEDIA_TYPE',
      'JSON must be UTF-8: send the body in UTF-8 with charset=utf-8 or no charset; send a file in another encoding to POST /docsplit/api/split/file with the encoding option')
  }
}

/** The options whose value names a plugin by its schema's enum (a tokenizer: by the registry, for model prefixes too). */
const PLUGIN_NAMES = ['input_format', 'splitter'] as const

export default async function splitText (root: FastifyInstance, opts: SplitTextOptions): Promise<void> {
  const app = root.withTypeProvider<TypeBoxTypeProvider>()
  const body = textBody(opts.options)
  const optionNames = new Set(['text', ...Object.keys(opts.options)])
  // Each plugin name as the schema's enum spells it, by its lower case.
  const spellings = new Map(PLUGIN_NAMES.map((name) => {
    const names = (opts.options[name] as { enum?: unknown[] } | undefined)?.enum ?? []
    return [name, new Map(names.filter((n): n is string => typeof n === 'string').map((n) => [n.toLowerCase(), n]))]
  }))
  app.post('/docsplit/api/split/text', {
    bodyLimit: opts.maxBodyBytes,
    preParsing: async (request, _reply, payload) => {
      await requireJson(request, optionNames)
      return payload
    },
    // Format, splitter and tokenizer names match in any case, as in the engine, the file
    // endpoint and the CLI: a name is spelled as the schema's enum spells it (as registered; a
    // plugin may register `MyTok`), a model name's prefix as registered, before the schema is checked.
    preValidation: async (request) => {
      const b = request.body as Record<string, unknown> | null
      if (b === null || typeof b !== 'object') return
      for (const name of PLUGIN_NAMES) {
        const value = b[name]
        if (typeof value === 'string') b[name] = spellings.get(name)!.get(value.toLowerCase()) ?? value
      }
      if (typeof b.tokenizer === 'string') b.tokenizer = tokenizerSpelling(b.tokenizer)
    },
    schema: {
      operationId: 'splitText',
      summary: 'Split a text document',
      description: 'Splits `text` into chunks under the token budget. Every split option is a member of the body. Binary formats (xlsx) need the file endpoint. `encoding` applies to bytes: here the text is decoded already, so only `utf-8` is accepted; send a file in another encoding to the file endpoint.',
      tags: ['split'],
      body,
      response: splitResponses() as never,
    },
  }, async (request, reply) => {
    const { text, ...options } = request.body as { text: string } & Record<string, unknown>
    // JSON text is decoded already: another encoding would be silently ignored.
    if (typeof options.encoding === 'string' && encodingInfo(options.encoding).name !== 'utf-8') {
      throw new DocsplitError('DOCSPLIT_INVALID_OPTION',
        'encoding applies to uploaded bytes (POST /docsplit/api/split/file); the text endpoint takes decoded text, so its encoding can only be utf-8')
    }
    return sendSplit(root, request, reply, text, options)
  })
}
