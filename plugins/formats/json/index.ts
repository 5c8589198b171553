/**
 * The `json` and `jsonl` parser plugins: array elements or object members as records, and one
 * record per line (see handler.ts for how records are found, opened and tiled).
 */
import { definePlugin } from '../../../core/registry.js'
import type { ParserPlugin } from '../../../core/types.js'
import { JsonScanner, type ScanSink } from './scanner.js'

/**
 * Content sniffing: scans the sample (which may end anywhere) as JSON or JSON lines; returns how
 * many values start in it, or 0 when it is not valid so far.
 */
function scans (sample: string, lines: boolean): number {
  let values = 0
  const fail = (): never => { throw new Error('not JSON') }
  const sink: ScanSink = {
    watch: 0,
    valueStart: (depth) => { if (depth === 0) values++ },
    keyStart: () => {},
    keyEnd: () => {},
    containerEnd: () => {},
    error: fail,
  }
  try {
    new JsonScanner(sink, lines).scan(sample, 0, sample.length, 0)
  } catch {
    return 0
  }
  return values
}

const json: ParserPlugin = definePlugin({
  kind: 'parser',
  name: 'json',
  docsplit: '^1',
  description: 'JSON: array elements or object members as records, streamed (a container member, or an object element, over budget is opened).',
  formats: ['json'],
  extensions: ['.json'],
  reads: 'text',
  defaultSplitter: 'record',
  detect (sample: string): number {
    const t = sample.trimStart()
    if (!t.startsWith('{') && !t.startsWith('[')) return 0
    return scans(sample, false) >= 1 ? 0.9 : 0
  },
  // The handler loads with the first JSON document.
  create: async (ctx) => (await import('./handler.js')).createJsonHandler(ctx),
})

const jsonl: ParserPlugin = definePlugin({
  kind: 'parser',
  name: 'jsonl',
  docsplit: '^1',
  description: 'JSON Lines / NDJSON: one record per line, each line validated as JSON.',
  formats: ['jsonl', 'ndjson'],
  formatAliases: { ndjson: 'jsonl' },
  extensions: ['.jsonl', '.ndjson'],
  reads: 'text',
  defaultSplitter: 'record',
  detect (sample: string): number {
    return scans(sample, true) >= 2 ? 0.9 : 0
  },
  create: async (ctx) => (await import('./handler.js')).createJsonlHandler(ctx),
})

export { json, jsonl }
export default [json, jsonl]
