/**
 * The DESIGN.md invariants, checked on a split response against its source text. Returns a
 * list of problems (empty when all hold) so property tests can report the first failure.
 */
import type { SplitResponse } from '../../core/schema.js'
import type { Tokenizer } from '../../core/types.js'

export interface InvariantOptions {
  /** Exact recount of every chunk (defaults to trusting nothing: required). */
  tokenizer: Tokenizer
  /** Check records-whole: no chunk boundary inside a record (offsets of record starts/ends). */
  recordBoundaries?: Set<number>
  /** Text formats only: chunks are slices of the source. */
  lossless?: boolean
}

/** Code point index → UTF-16 index, for slicing like Python. */
function codePointOffsets (text: string): number[] {
  const out: number[] = []
  for (let i = 0; i < text.length; i++) {
    out.push(i)
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) i++
    }
  }
  out.push(text.length)
  return out
}

export function invariantProblems (response: SplitResponse, source: string, options: InvariantOptions): string[] {
  const problems: string[] = []
  const add = (p: string): void => { if (problems.length < 10) problems.push(p) }
  const cps = codePointOffsets(source)
  const max = response.metadata.max_tokens
  const overlap = response.metadata.overlap_tokens
  let end = 0
  let newlinesBefore = 0
  let u16 = 0
  response.chunks.forEach((c, i) => {
    if (c.index !== i) add(`chunk ${i}: index ${c.index}`)
    if (options.lossless !== false) {
      const from = cps[c.char_start]
      const to = cps[c.char_end]
      if (from === undefined || to === undefined || source.slice(from, to) !== c.text) add(`chunk ${i}: text differs from source[${c.char_start}:${c.char_end}]`)
      if (overlap === 0 && c.char_start !== end) add(`chunk ${i}: starts at ${c.char_start}, previous ended at ${end}`)
      if (from !== undefined) {
        // Lines and bytes, counted from scratch (the engine counts incrementally).
        while (u16 < from) { if (source.charCodeAt(u16) === 10) newlinesBefore++; u16++ }
        if (c.line_start !== newlinesBefore + 1) add(`chunk ${i}: line_start ${c.line_start}, expected ${newlinesBefore + 1}`)
        const bytesBefore = Buffer.byteLength(source.slice(0, from), 'utf8')
        if (c.byte_start !== bytesBefore) add(`chunk ${i}: byte_start ${c.byte_start}, expected ${bytesBefore}`)
        if (c.byte_end - c.byte_start !== Buffer.byteLength(c.text, 'utf8')) add(`chunk ${i}: byte span differs from the text's UTF-8 length`)
      }
    }
    end = c.char_end
    const count = options.tokenizer.count(c.text)
    if (count !== c.token_count) add(`chunk ${i}: token_count ${c.token_count}, recount ${count}`)
    if (!c.protected && count > max) add(`chunk ${i}: ${count} tokens over budget ${max}`)
    if (c.protected && c.record_count !== 1) add(`chunk ${i}: protected but holds ${String(c.record_count)} records`)
    if (c.text.length === 0) add(`chunk ${i}: empty`)
  })
  if (options.lossless !== false && end !== cps.length - 1) add(`chunks end at ${end} of ${cps.length - 1} code points`)
  if (response.chunk_count !== response.chunks.length) add('chunk_count differs from the number of chunks')
  if (options.recordBoundaries !== undefined) {
    for (const c of response.chunks) {
      const from = cps[c.char_start]!
      const to = cps[c.char_end]!
      if (!options.recordBoundaries.has(from) || !options.recordBoundaries.has(to)) add(`chunk ${c.index}: boundary inside a record`)
    }
  }
  return problems
}
