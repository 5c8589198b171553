/**
 * Overlap: a chunk repeats the tail of the previous chunk. Packers pack to
 * `max_tokens - overlap_tokens`; this step prepends the longest tail that (a) starts at an
 * allowed point (a record start, or else a word start not inside a stretch the packer says to
 * avoid, such as a heading), (b) has at most `overlap_tokens`
 * tokens, and (c) keeps the joined chunk within `max_tokens` by exact count.
 */
import type { Meter } from './budget.js'
import type { Segmenters } from './segment.js'
import type { ChunkDraft } from './types.js'

export interface Overlapped {
  start: number
  text: string
  tokenCount: number
}

/** How far back to look for word starts: tokens are rarely longer than this many characters. */
const CHARS_PER_TOKEN_BOUND = 16

/**
 * The starts (ascending) not strictly inside any of the stretches (ascending, as a packer lists
 * its units): one walk over both, not every start against every stretch.
 */
function outside (starts: number[], avoid: Array<[number, number]>): number[] {
  const out: number[] = []
  let k = 0
  for (const s of starts) {
    while (k < avoid.length && avoid[k]![1] <= s) k++
    if (k === avoid.length || !(s > avoid[k]![0] && s < avoid[k]![1])) out.push(s)
  }
  return out
}

export function withOverlap (
  previous: ChunkDraft, draft: ChunkDraft, overlapTokens: number, maxTokens: number, meter: Meter, segmenters: Segmenters,
): Overlapped | undefined {
  let starts: number[]
  if (previous.overlapStarts !== undefined) {
    starts = previous.overlapStarts.filter((s) => s >= 0 && s < previous.text.length)
  } else {
    const from = Math.max(0, previous.text.length - overlapTokens * CHARS_PER_TOKEN_BOUND)
    starts = segmenters.cuts(previous.text.slice(from), 'word').map((p) => p + from)
    if (from > 0) starts = starts.filter((s) => s > from)
  }
  const avoid = previous.overlapAvoid
  if (avoid !== undefined && avoid.length > 0) starts = outside(starts, avoid)
  // Longest tail first: the smallest start whose tail fits the overlap.
  let lo = 0
  let hi = starts.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (meter.count(previous.text.slice(starts[mid])) <= overlapTokens) hi = mid
    else lo = mid + 1
  }
  for (let i = lo; i < starts.length; i++) {
    const tail = previous.text.slice(starts[i])
    const text = tail + draft.text
    const tokenCount = meter.count(text)
    if (tokenCount <= maxTokens) return { start: draft.start - tail.length, text, tokenCount }
  }
  return undefined
}
