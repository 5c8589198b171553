/**
 * Runs a parser plugin directly (no packer) and collects its events, for parser unit tests.
 * `pieces` lets a test feed the input in arbitrary pieces (slow-stream twins).
 */
import type { DocEvent } from '../../core/events.js'
import { DocsplitError, type ErrorCode } from '../../core/errors.js'
import type { ParserHandler, ParserPlugin, ResolvedOptions } from '../../core/types.js'

export async function collectEvents (
  plugin: ParserPlugin,
  input: string | Uint8Array,
  options: Partial<ResolvedOptions> = {},
  pieceSize = Infinity,
): Promise<DocEvent[]> {
  const events: DocEvent[] = []
  const resolved = { input_format: plugin.formats[0], max_tokens: 512, splitter: plugin.defaultSplitter, tokenizer: 'approx', overlap_tokens: 0, encoding: 'utf-8', ...options } as ResolvedOptions
  const handler = await plugin.create({
    options: resolved,
    emit: (e) => { events.push(e) },
    fail: (code: ErrorCode, message: string) => { throw new DocsplitError(code, message) },
  }) as ParserHandler<string | Uint8Array>
  const size = Number.isFinite(pieceSize) ? pieceSize : Math.max(1, input.length)
  for (let i = 0; i < input.length; i += size) handler.write(input.slice(i, i + size))
  handler.end()
  return events
}

/** Throws unless block and record events tile `text` exactly and enter/exit are balanced. */
export function assertTiles (events: DocEvent[], text: string): void {
  let pos = 0
  let depth = 0
  for (const e of events) {
    if (e.type === 'enter') depth++
    else if (e.type === 'exit') {
      depth--
      if (depth < 0) throw new Error('exit without enter')
    } else if (e.type === 'block' || e.type === 'record') {
      if (e.start !== pos) throw new Error(`event starts at ${e.start}, expected ${pos}`)
      if (e.end !== e.start + e.text.length) throw new Error(`event end ${e.end} != start + text length`)
      if (text.slice(e.start, e.end) !== e.text) throw new Error(`event text differs from source at ${e.start}`)
      pos = e.end
    }
  }
  if (depth !== 0) throw new Error(`${depth} containers left open`)
  if (pos !== text.length) throw new Error(`events cover ${pos} of ${text.length} characters`)
}
