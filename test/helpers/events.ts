/**
 * Parser unit-test helpers, on top of the conformance kit's own driver and tiling check (so the
 * tests and outside plugin authors exercise parsers the same way).
 */
import type { DocEvent } from '../../core/events.js'
import { eventProblem, parserEvents } from '../../core/testing.js'
import type { ParserPlugin, ResolvedOptions } from '../../core/types.js'

/** A parser's events for `input`, fed whole or in pieces of `pieceSize` (slow-stream twins). */
export async function collectEvents (plugin: ParserPlugin, input: string | Uint8Array, options: Partial<ResolvedOptions> = {}, pieceSize?: number): Promise<DocEvent[]> {
  return await parserEvents(plugin, input, options, pieceSize)
}

/** Throws unless block and record events tile `text` exactly and enter/exit are balanced. */
export function assertTiles (events: DocEvent[], text: string): void {
  const problem = eventProblem(events, text)
  if (problem !== undefined) throw new Error(problem)
}

/**
 * Where a chunk may begin or end under the record splitter: at the edges of records, and
 * anywhere in the text between them that a parser gives as blocks (brackets, end tags: a
 * block over the budget alone, such as a long key that opens a member, is cut at lines).
 */
export function recordBoundaries (events: DocEvent[]): Set<number> {
  return new Set(events.flatMap((e) =>
    e.type === 'record' ? [e.start, e.end] : e.type === 'block' ? Array.from({ length: e.end - e.start + 1 }, (_, i) => e.start + i) : []))
}
