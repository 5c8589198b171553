/**
 * Re-checks a split's output against the invariants, as chunks stream by: chunks tile the
 * source (each starts where the previous ended, or earlier by overlap, and then begins with the
 * previous chunk's tail), each chunk's char span is as long as its text, the tiles joined equal
 * the source text, and every chunk not `protected` is within the budget by a fresh count.
 * Memory is constant: the source and the tiles are compared by running hashes.
 */
import { createHash, type Hash } from 'node:crypto'
import { codePoints } from './positions.js'
import type { Chunk } from './schema.js'
import type { Tokenizer } from './types.js'

export interface Violation {
  chunk: number
  rule: 'lossless' | 'budget' | 'token_count' | 'order' | 'offsets' | 'overlap'
  detail: string
}

export class Verifier {
  readonly violations: Violation[] = []
  private readonly source: Hash = createHash('sha256')
  private readonly tiles: Hash = createHash('sha256')
  private end = 0
  private previous = ''
  private tokenizer: Tokenizer | undefined
  private maxTokens = 0

  /** The tokenizer and budget of the split, known once it has started. */
  start (tokenizer: Tokenizer, maxTokens: number): void {
    this.tokenizer = tokenizer
    this.maxTokens = maxTokens
  }

  /** Decoded source text, in order (skip for binary formats). */
  addSource (text: string): void {
    this.source.update(text)
  }

  check (chunk: Chunk): void {
    const add = (rule: Violation['rule'], detail: string): void => {
      if (this.violations.length < 100) this.violations.push({ chunk: chunk.index, rule, detail })
    }
    if (chunk.char_start > this.end || chunk.char_end < this.end) add('order', `chunk covers ${chunk.char_start}..${chunk.char_end}; the previous one ended at ${this.end}`)
    const points = codePoints(chunk.text)
    if (chunk.char_end - chunk.char_start !== points) add('offsets', `char_start..char_end spans ${chunk.char_end - chunk.char_start} code points, the text has ${points}`)
    // The part not repeated from the previous chunk, in code points.
    const repeated = this.end - chunk.char_start
    let fresh = chunk.text
    if (repeated > 0) {
      const chars = Array.from(chunk.text)
      const head = chars.slice(0, repeated).join('')
      if (!this.previous.endsWith(head)) add('overlap', `the first ${repeated} code points are not the end of the previous chunk`)
      fresh = chars.slice(repeated).join('')
    }
    this.tiles.update(fresh)
    this.end = Math.max(this.end, chunk.char_end)
    this.previous = chunk.text
    if (this.tokenizer === undefined) throw new Error('Verifier.start must be called before check')
    const count = this.tokenizer.count(chunk.text)
    if (count !== chunk.token_count) add('token_count', `token_count ${chunk.token_count}, recounted ${count}`)
    if (!chunk.protected && count > this.maxTokens) add('budget', `${count} tokens over the budget of ${this.maxTokens}`)
  }

  /** Call once the last chunk and source text are in. `lossless` false for binary formats. */
  finish (lossless = true): Violation[] {
    if (lossless && this.source.digest('hex') !== this.tiles.digest('hex')) {
      this.violations.push({ chunk: -1, rule: 'lossless', detail: 'the chunks joined differ from the source text' })
    }
    return this.violations
  }
}
