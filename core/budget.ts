/**
 * Counting against the budget. Packers decide where to cut with cheap estimates and confirm
 * with one exact count of the joined chunk text (token counts are not additive under BPE).
 *
 * For a cheap tokenizer (approx) the estimate of a unit is its exact count; the tokenizer is
 * subadditive, so a sum of unit counts never under-states the joined count. For an expensive
 * tokenizer (BPE) the estimate is a cheap count (the default tokenizer when it is cheap, else
 * UTF-8 bytes) × a ratio learnt from the exact counts made so far in this document, so each
 * chunk is tokenized about once. Measured on 8.6 MB of markdown with o200k: bytes as the cheap
 * count tokenized 1.53x the text; approx as the cheap count, see the README.
 */
import type { Tokenizer } from './types.js'

/** Starting ratio before any exact count: 1 token per 2 bytes, denser than prose or code. */
const INITIAL_TOKENS_PER_BYTE = 0.5
/** Starting ratio of exact to cheap counts when the cheap count is a calibrated tokenizer. */
const INITIAL_TOKENS_PER_ESTIMATE = 1
/** Weight of the newest exact count in the learnt ratio. */
const RATIO_WEIGHT = 0.3
/** Aim a little under the budget so that few estimates have to be repaired. */
const ESTIMATE_MARGIN = 1.04

export class Meter {
  readonly tokenizer: Tokenizer
  readonly budget: number
  private readonly cheapCount: (text: string) => number
  private ratio: number
  /** Exact counts made, for diagnostics and tests. */
  exactCounts = 0

  /** `estimator`: a cheap tokenizer that tracks the real one (the default tokenizer). */
  constructor (tokenizer: Tokenizer, budget: number, estimator?: Tokenizer) {
    this.tokenizer = tokenizer
    this.budget = budget
    const calibrated = estimator?.cheap === true && estimator !== tokenizer
    this.cheapCount = calibrated ? (text) => estimator.count(text) : (text) => Buffer.byteLength(text, 'utf8')
    this.ratio = calibrated ? INITIAL_TOKENS_PER_ESTIMATE : INITIAL_TOKENS_PER_BYTE
  }

  /** A cheap estimate of the tokens in `text`, meant to be summed over consecutive units. */
  estimate (text: string): number {
    if (this.tokenizer.cheap === true) return this.tokenizer.count(text)
    return this.cheapCount(text) * this.ratio * ESTIMATE_MARGIN
  }

  /**
   * The exact count; also teaches the estimator this document's density. `known`: the count of
   * `text` made ahead on another core (an event's `tokens`), taken instead of counting again.
   * The meter learns from it as from its own count, so that its estimates, and what a packer
   * decides by them, do not depend on where counts were made.
   */
  count (text: string, known?: number): number {
    const n = known ?? this.tokenizer.count(text)
    this.exactCounts++
    if (this.tokenizer.cheap !== true && text.length >= 64) {
      const observed = n / Math.max(1, this.cheapCount(text))
      this.ratio = this.ratio * (1 - RATIO_WEIGHT) + observed * RATIO_WEIGHT
    }
    return n
  }
}

/**
 * The estimate parsers decide structure by (ParserContext.estimate): the default tokenizer's
 * count when it is cheap (approx), else UTF-8 bytes / 2; never the request's tokenizer, whose
 * count would be the cost of a second count of the document (confirmOver asks it only near
 * the budget).
 */
export function structureEstimate (defaultTokenizer: Tokenizer | undefined): (text: string) => number {
  if (defaultTokenizer?.cheap === true) return (text) => defaultTokenizer.count(text)
  return (text) => Math.ceil(Buffer.byteLength(text, 'utf8') / 2)
}

/** Estimates this many times the budget or more are over it by any tokenizer (approx over-counts Korean 2.35x at most). */
const SURELY_OVER = 3

/**
 * ParserContext.confirmOver for a split that counts with `tokenizer` (the estimate's own when
 * `estimating` is true) to `maxTokens`.
 */
export function overConfirmer (tokenizer: Tokenizer, estimating: boolean, maxTokens: number): (text: string, estimated: number) => boolean {
  if (estimating) return () => true
  return (text, estimated) => estimated >= SURELY_OVER * maxTokens || tokenizer.count(text) > maxTokens
}
