/**
 * The input of a split as pieces: a string, bytes or an iterable of either, handed on a piece
 * at a time; and what the pipeline does with the input itself (sample it, release it).
 */
import { byteOrderMark } from './decode.js'
import { DocsplitError, isDocsplitError } from './errors.js'
import { FORMAT_SAMPLE } from './format-choice.js'
import { typeInWords } from './plugin-values.js'

export type InputPiece = Uint8Array | string

/** An iterable yields strings or bytes, not both: text already decoded, or bytes to decode. */
export type SplitInput = string | Uint8Array | ArrayBuffer | Iterable<string> | Iterable<Uint8Array> | AsyncIterable<string> | AsyncIterable<Uint8Array>

/** What split takes, for the messages that refuse something else. */
const INPUT_KINDS = 'a string, bytes (Uint8Array, Buffer, ArrayBuffer), or a stream or (async) iterable of strings or of bytes'

/** Pieces handed to parsers: large enough to be fast, small enough to yield chunks often. */
const PIECE = 1 << 20

/** The input in pieces of at most PIECE: one kind (text or bytes) throughout. */
export async function * inputPieces (input: SplitInput): AsyncGenerator<InputPiece> {
  let kind: 'string' | 'bytes' | undefined
  if (typeof input === 'string') {
    for (let i = 0; i < input.length; i += PIECE) yield input.slice(i, i + PIECE)
    return
  }
  if (input instanceof ArrayBuffer) input = bytesOf(input)
  if (input instanceof Uint8Array) {
    for (let i = 0; i < input.length; i += PIECE) yield input.subarray(i, i + PIECE)
    return
  }
  // Another typed array is iterable too, but of numbers, not pieces: refused as the input it is.
  if (ArrayBuffer.isView(input)) {
    const type = Object.prototype.toString.call(input).slice(8, -1)
    throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', `input must be ${INPUT_KINDS}; a ${type} is not bytes: pass new Uint8Array(view.buffer, view.byteOffset, view.byteLength) for the bytes it holds`)
  }
  if (input !== null && typeof input === 'object' && (Symbol.asyncIterator in input || Symbol.iterator in input)) {
    for await (const piece of input as AsyncIterable<InputPiece>) {
      if (typeof piece !== 'string' && !(piece instanceof Uint8Array)) {
        throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', `an input stream or iterable must yield strings or bytes (Uint8Array, Buffer), not ${typeInWords(piece)}`)
      }
      // Text would overtake bytes the decoder still holds: one kind per stream.
      const k = typeof piece === 'string' ? 'string' : 'bytes'
      if (kind !== undefined && k !== kind) throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'an input stream must yield only strings or only bytes, not both')
      kind = k
      yield piece
    }
    return
  }
  const blob = typeof Blob === 'function' && (input as unknown) instanceof Blob ? ': for a Blob, pass await blob.arrayBuffer()' : ''
  throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', `input must be ${INPUT_KINDS}, not ${typeInWords(input)}${blob}`)
}

/** The bytes of an ArrayBuffer; a detached one (transferred to a worker, say) is the caller's error. */
export function bytesOf (buffer: ArrayBuffer): Uint8Array {
  try {
    return new Uint8Array(buffer)
  } catch {
    throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'the input ArrayBuffer is detached (it was transferred or freed): pass one that still holds its bytes')
  }
}

/** The next input piece; a failing input stream is the input's fault, named by its error code. */
export async function nextPiece (source: AsyncIterator<InputPiece>): Promise<IteratorResult<InputPiece>> {
  try {
    return await source.next()
  } catch (error) {
    if (isDocsplitError(error)) throw error
    const code = (error as { code?: unknown } | null)?.code
    const name = typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : error instanceof Error ? error.name : 'error'
    throw new DocsplitError('DOCSPLIT_READ_FAILED', `reading the input failed (${name})`, { cause: error })
  }
}

/**
 * A stream the split failed on is destroyed, so that its file closes: a bad option or an
 * unknown tokenizer fails before the stream is read at all, and its file stayed open.
 */
export function release (input: SplitInput): void {
  const stream = input as { destroy?: unknown, destroyed?: unknown } | null
  if (stream !== null && typeof stream === 'object' && typeof stream.destroy === 'function' && stream.destroyed !== true) (stream.destroy as () => void).call(stream)
}

/** The text of the first FORMAT_SAMPLE bytes or characters held, decoded as the input would be, for `auto`. */
export function sampleText (pieces: InputPiece[], encoding: string): string {
  if (pieces.length === 0) return ''
  if (typeof pieces[0] === 'string') return (pieces as string[]).join('').slice(0, FORMAT_SAMPLE)
  const bytes = Buffer.concat(pieces as Uint8Array[]).subarray(0, FORMAT_SAMPLE)
  const bom = byteOrderMark(bytes)
  const label = bom !== undefined && bom.label !== 'utf-8' ? bom.label : encoding
  try {
    // Streaming, then flushed: Node 20 decodes windows-1252 given in one call as Latin-1.
    const decoder = new TextDecoder(label)
    return decoder.decode(bytes, { stream: true }) + decoder.decode()
  } catch {
    return new TextDecoder().decode(bytes)
  }
}
