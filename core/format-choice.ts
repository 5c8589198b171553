/**
 * Which parser reads an input: the format named, or for `auto` the file extension, then the
 * best content score; and the encoding a document declares.
 */
import { encodingInfo, byteOrderMark } from './decode.js'
import { DocsplitError, isDocsplitError } from './errors.js'
import { pluginFailure } from './plugin-calls.js'
import { formatNames, listParsers, parserForFilename, parserForFormat } from './registry.js'
import type { ParserPlugin, ResolvedOptions } from './types.js'

/** Bytes or characters of input `auto` reads first to choose a format by content. */
export const FORMAT_SAMPLE = 1 << 16

/** Bytes a parser sees to find an encoding the document declares (an XML declaration). */
export const DECLARED_HEAD = 1024

/** Whether `auto` takes the format from the file name (its extension), not from the content. */
export function formatNamedByFile (filename: unknown): boolean {
  return typeof filename === 'string' && parserForFilename(filename) !== undefined
}

/**
 * `auto`: by file extension, then by content (the best `detect` score; `byContent`), else
 * plain text.
 */
export function chooseParser (options: ResolvedOptions, sample: () => string): { parser: ParserPlugin, format: string, byContent?: true } {
  const requested = options.input_format.toLowerCase()
  if (requested !== 'auto') return { parser: parserForFormat(requested), format: requested }
  if (typeof options.filename === 'string') {
    const parser = parserForFilename(options.filename)
    if (parser !== undefined) {
      const lower = options.filename.toLowerCase()
      const ext = parser.extensions.filter((e) => lower.endsWith(e.toLowerCase())).sort((a, b) => b.length - a.length)[0] ?? ''
      const format = parser.extensionFormats?.[ext] ?? parser.formats[0]!
      return { parser, format }
    }
  }
  const text = sample()
  let best: ParserPlugin | undefined
  let bestScore = 0.5
  for (const parser of listParsers()) {
    const score = detectScore(parser, text)
    if (score > bestScore) { best = parser; bestScore = score }
  }
  if (best !== undefined) return { parser: best, format: formatByContent(best, text), byContent: true }
  if (formatNames().includes('text')) return { parser: parserForFormat('text'), format: 'text' }
  throw new DocsplitError('DOCSPLIT_UNSUPPORTED_FORMAT', 'input_format "auto" could not tell the format; pass input_format')
}

/**
 * The encoding a document declares (a BOM still wins, in the decoder), checked like the option:
 * one docsplit cannot decode is DOCSPLIT_UNSUPPORTED_ENCODING naming the declaration. A UTF-16
 * label is ignored: a declaration the parser could read from the bytes is not in UTF-16 (its
 * bytes would hold zeros), and files so mislabelled are common (XML 1.0 appendix F; libxml2
 * ignores the label too).
 */
export function checkedDeclaredEncoding (parser: ParserPlugin, head: Uint8Array): string | undefined {
  if (byteOrderMark(head) !== undefined) return undefined
  let label: string | undefined
  try {
    label = parser.declaredEncoding?.(head)
  } catch (error) {
    throw pluginFailure(error, `${parser.name} parser`)
  }
  if (typeof label !== 'string' || label === '') return undefined
  let name: string
  try {
    name = encodingInfo(label).name
  } catch (error) {
    if (!isDocsplitError(error)) throw error
    throw new DocsplitError('DOCSPLIT_UNSUPPORTED_ENCODING', `the document declares encoding "${label.slice(0, 64)}": ${error.message}; give the encoding option to read it otherwise`)
  }
  return name === 'utf-16le' || name === 'utf-16be' ? undefined : label
}

/** A parser's content score; a detect() that throws is the parser's failure, named (as any exception of a plugin). */
function detectScore (parser: ParserPlugin, text: string): number {
  let score: unknown
  try {
    score = parser.detect?.(text) ?? 0
  } catch (error) {
    throw pluginFailure(error, `${parser.name} parser's detect()`)
  }
  // A score is 0 to 1: one out of range must not outrank every other format.
  return typeof score === 'number' && score > 0 ? Math.min(score, 1) : 0
}

/** Which of its formats a parser that content detection chose says the sample is (see formatOf). */
function formatByContent (parser: ParserPlugin, text: string): string {
  let named: unknown
  try {
    named = parser.formatOf?.(text)
  } catch (error) {
    throw pluginFailure(error, `${parser.name} parser's formatOf()`)
  }
  const format = typeof named === 'string' ? named.toLowerCase() : undefined
  if (format !== undefined && parser.formats.some((f) => f.toLowerCase() === format)) return format
  return parser.formats[0]!
}

/**
 * Bytes that are not text in the format chosen (by name or extension): the format, if any,
 * whose parser reads bytes and whose content score says they are its own (a workbook saved
 * as `.txt`), for the error to name. A detect() that throws counts as no.
 */
export function binaryFormatOf (head: Uint8Array): string | undefined {
  const text = Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('latin1')
  for (const parser of listParsers()) {
    if (parser.reads !== 'bytes') continue
    let score = 0
    try {
      score = detectScore(parser, text)
    } catch {}
    if (score >= 0.5) return formatByContent(parser, text)
  }
  return undefined
}

/** A binary format (xlsx) given as text, found before the split starts or in a string stream. */
export function needsFile (format: string): DocsplitError {
  return new DocsplitError('DOCSPLIT_FORMAT_NEEDS_FILE', `input_format "${format}" is binary: send it as a file (POST /docsplit/api/split/file, or docsplit split FILE)`)
}
