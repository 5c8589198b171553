/**
 * Re-checks a split's output against the invariants, as chunks stream by: chunks tile the
 * source (each starts where the previous ended, or earlier by overlap, and then begins with the
 * previous chunk's tail), each chunk's char span is as long as its text, its byte span as long as
 * its text in the input's encoding and continuing the previous one, its line numbers those of
 * its first and last character (counted on from the previous chunk), the tiles joined equal the
 * source text, and every chunk not `protected` is within the budget by a fresh count.
 * Memory is constant: the source and the tiles are compared by running hashes.
 */
import { createHash, type Hash } from 'node:crypto'
import { StreamDecoder } from './decode.js'
import { codePoints, isLowSurrogate, lineBreaks } from './positions.js'
import type { Chunk } from './schema.js'
import type { Tokenizer } from './types.js'

export interface Violation {
  chunk: number
  rule: 'lossless' | 'budget' | 'token_count' | 'order' | 'offsets' | 'overlap' | 'protected'
  detail: string
}

/** Violations kept with their details, per kind (chunks, byte offsets); the rest are counted. */
const SHOWN = 100

export class Verifier {
  readonly violations: Violation[] = []
  private readonly source: Hash = createHash('sha256')
  private readonly tiles: Hash = createHash('sha256')
  private end = 0
  private found = 0
  private byteFound = 0
  private previous = ''
  private tokenizer: Tokenizer | undefined
  private maxTokens = 0
  /** Chunks exempt from the budget: each a single record over it. */
  protectedCount = 0
  /** The input's bytes decoded as the split decodes them (none: byte offsets are not checked). */
  private decoder: StreamDecoder | undefined
  /** Bytes that came before the split said its encoding. */
  private pending: Uint8Array[] = []
  private ended = false
  /** The split reads bytes: they are not kept or decoded. */
  private binary = false
  private byteEnd = -1
  /** Where the checked chunks end in the decoded text, in UTF-16 units. */
  private unitEnd = 0
  private lineStart = 1
  /** Byte findings: dropped at the end for a binary format, whose offsets are not of text. */
  private readonly byteViolations: Violation[] = []

  /** The tokenizer and budget of the split, known once it has started. */
  start (tokenizer: Tokenizer, maxTokens: number): void {
    this.tokenizer = tokenizer
    this.maxTokens = maxTokens
  }

  /** Input bytes, in order: held until decodeAs says how the split reads them. */
  addBytes (piece: Uint8Array): void {
    if (this.binary) return
    // A copy: the caller may refill the piece's buffer (the CLI does).
    if (this.decoder === undefined) this.pending.push(Uint8Array.prototype.slice.call(piece))
    else this.decode(() => this.decoder!.decode(piece))
  }

  /**
   * The encoding the split uses (its effective `encoding` option: given, declared or the
   * default); undefined for a format read as bytes (xlsx), whose chunks are not decoded input.
   */
  decodeAs (encoding: string | undefined, invalidBytes?: string): void {
    if (encoding === undefined) {
      this.binary = true
      this.pending = []
      return
    }
    this.decoder = new StreamDecoder(encoding, invalidBytes === 'replace')
    for (const piece of this.pending.splice(0)) this.addBytes(piece)
    if (this.ended) this.decode(() => this.decoder!.end())
  }

  /** After the last input bytes (before or after decodeAs). */
  endBytes (): void {
    this.ended = true
    if (this.decoder !== undefined) this.decode(() => this.decoder!.end())
  }

  private decode (step: () => string): void {
    try {
      this.addSource(step())
    } catch {
      // The engine reports undecodable input itself.
    }
  }

  /** Decoded source text, in order (skip for binary formats). */
  addSource (text: string): void {
    this.source.update(text)
  }

  check (chunk: Chunk): void {
    const add = (rule: Violation['rule'], detail: string): void => {
      this.found++
      if (this.violations.length < SHOWN) this.violations.push({ chunk: chunk.index, rule, detail })
    }
    if (chunk.char_start > this.end || chunk.char_end < this.end) add('order', `chunk covers ${chunk.char_start}..${chunk.char_end}; the previous one ended at ${this.end}`)
    const points = codePoints(chunk.text)
    if (chunk.char_end - chunk.char_start !== points) add('offsets', `char_start..char_end spans ${chunk.char_end - chunk.char_start} code points, the text has ${points}`)
    // The part not repeated from the previous chunk, in code points.
    const repeated = this.end - chunk.char_start
    let fresh = chunk.text
    let head = ''
    if (repeated > 0) {
      const chars = Array.from(chunk.text)
      head = chars.slice(0, repeated).join('')
      if (!this.previous.endsWith(head)) add('overlap', `the first ${repeated} code points are not the end of the previous chunk`)
      fresh = chars.slice(repeated).join('')
    }
    this.checkBytes(chunk, head)
    this.checkLines(chunk, head, add)
    this.tiles.update(fresh)
    this.end = Math.max(this.end, chunk.char_end)
    this.previous = chunk.text
    if (this.tokenizer === undefined) throw new Error('Verifier.start must be called before check')
    const count = this.tokenizer.count(chunk.text)
    if (count !== chunk.token_count) add('token_count', `token_count ${chunk.token_count}, recounted ${count}`)
    if (!chunk.protected && count > this.maxTokens) add('budget', `${count} tokens over the budget of ${this.maxTokens}`)
    if (chunk.protected && chunk.record_count !== 1) add('protected', `holds ${chunk.record_count ?? 'no'} records (protected is for a single record over budget)`)
    if (chunk.protected) this.protectedCount++
  }

  private checkBytes (chunk: Chunk, head: string): void {
    if (this.decoder === undefined) return
    const byteLength = this.decoder.byteLength
    if (this.byteEnd < 0) this.byteEnd = this.decoder.bomBytes
    // Where the chunk starts in the decoded text (UTF-16 units): a U+FFFD counts the bytes it replaced.
    const at = this.unitEnd - head.length
    this.decoder.forget(at)
    const add = (detail: string): void => {
      this.byteFound++
      if (this.byteViolations.length < SHOWN) this.byteViolations.push({ chunk: chunk.index, rule: 'offsets', detail })
    }
    const length = byteLength(chunk.text, at)
    if (chunk.byte_end - chunk.byte_start !== length) add(`byte_start..byte_end spans ${chunk.byte_end - chunk.byte_start} bytes, the text has ${length}`)
    const expected = this.byteEnd - byteLength(head, at)
    if (chunk.byte_start !== expected) add(`byte_start is ${chunk.byte_start}; after the previous chunk it is ${expected}`)
    this.byteEnd = chunk.byte_end
    this.unitEnd = Math.max(this.unitEnd, at + chunk.text.length)
  }

  /** line_start: the previous chunk's, plus the breaks before this one starts; line_end: plus the breaks before the last character. */
  private checkLines (chunk: Chunk, head: string, add: (rule: Violation['rule'], detail: string) => void): void {
    const text = chunk.text
    let start = 1
    if (chunk.index > 0) {
      const before = this.previous.slice(0, this.previous.length - head.length)
      start = this.lineStart + lineBreaks(before, text.length > 0 ? text.charCodeAt(0) : -1)
    }
    const last = text.length - (text.length >= 2 && isLowSurrogate(text.charCodeAt(text.length - 1)) ? 2 : 1)
    const end = start + lineBreaks(text.slice(0, Math.max(0, last)), last >= 0 ? text.charCodeAt(last) : -1)
    if (chunk.line_start !== start) add('offsets', `line_start is ${chunk.line_start}; counted on from the previous chunk it is ${start}`)
    if (chunk.line_end !== end) add('offsets', `line_end is ${chunk.line_end}; the last character is on line ${end}`)
    this.lineStart = start
  }

  /** Call once the last chunk and source text are in. `lossless` false for binary formats. */
  finish (lossless = true): Violation[] {
    if (lossless) {
      this.violations.push(...this.byteViolations)
      this.found += this.byteFound
    }
    if (lossless && this.source.digest('hex') !== this.tiles.digest('hex')) {
      this.found++
      this.violations.push({ chunk: -1, rule: 'lossless', detail: 'the chunks joined differ from the source text' })
    }
    return this.violations
  }

  /** Violations found in all, after finish(): only the first SHOWN of each kind are kept. */
  get violationCount (): number {
    return this.found
  }
}
