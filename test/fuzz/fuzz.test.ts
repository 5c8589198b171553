/**
 * Fuzzing every registered parser (listParsers()) with fast-check: arbitrary strings (binary
 * code points, graphemes, and strings built from each format's own syntax pieces) and
 * arbitrary bytes (raw, with BOMs, zip magic), at several budgets and through both splitters.
 * Properties: only a DocsplitError ever leaves the engine; no case runs past its bound; on
 * success the invariants hold (invariantProblems).
 *
 * Each parser runs in its own worker thread against the built engine (dist/). The worker says
 * when each case starts and ends; a case past the bound gets its worker terminated and its input
 * reported. A failing input is printed as a seed: save it under test/fuzz/seeds/ (or run with
 * DOCSPLIT_FUZZ_SAVE=1) and regressions.test.ts replays it forever.
 * DOCSPLIT_FUZZ_RUNS raises the runs per format and kind (default 25); DOCSPLIT_FUZZ_SEED fixes it.
 */
import { createHash } from 'node:crypto'
import { existsSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import t from 'tap'
import { listParsers } from '../../index.js'

const workerFile = fileURLToPath(new URL('./fuzz-worker.mjs', import.meta.url))
const seedsDir = fileURLToPath(new URL('./seeds/', import.meta.url))
const dist = fileURLToPath(new URL('../../dist/index.js', import.meta.url))
const CASE_BOUND_MS = 10_000
const runs = Number(process.env.DOCSPLIT_FUZZ_RUNS ?? 25)
const seed = process.env.DOCSPLIT_FUZZ_SEED !== undefined ? Number(process.env.DOCSPLIT_FUZZ_SEED) : Date.now() ^ (Math.random() * 0x7fffffff)

/** The formats to fuzz for a parser: every canonical format (aliases collapse onto one). */
function formatsOf (name: string, formats: readonly string[]): string[] {
  if (name === 'code') return ['python', 'javascript', 'typescript', 'tsx', 'bash', 'c', 'cpp', 'csharp', 'go', 'java', 'kotlin', 'lua', 'php', 'ruby', 'rust', 'swift', 'zig'].filter((f) => formats.includes(f))
  if (name === 'csv') return formats.filter((f) => f === 'csv' || f === 'tsv')
  return formats.slice(0, 1)
}

interface Failure { kind: string, format: string, input: { string?: string, base64?: string }, options: Record<string, unknown>, error: string }

function fuzz (formats: string[], reads: string, numRuns: number): Promise<Failure[]> {
  return new Promise((resolve) => {
    const worker = new Worker(workerFile, { workerData: { formats, reads, numRuns, seed } })
    let timer: NodeJS.Timeout | undefined
    let current: { format: string, input: Failure['input'], options: Record<string, unknown> } | undefined
    let settled = false
    const settle = (failures: Failure[]): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(failures)
    }
    worker.on('message', (m: { kind: string, format?: string, input?: Failure['input'], options?: Record<string, unknown>, failures?: Failure[] }) => {
      if (m.kind === 'begin') {
        current = { format: m.format!, input: m.input!, options: m.options! }
        clearTimeout(timer)
        timer = setTimeout(() => {
          const hung = current!
          void worker.terminate()
          settle([{ kind: 'hang', format: hung.format, input: hung.input, options: hung.options, error: `a case ran past ${CASE_BOUND_MS} ms` }])
        }, CASE_BOUND_MS)
      } else if (m.kind === 'end') {
        clearTimeout(timer)
      } else if (m.kind === 'done') {
        void worker.terminate()
        settle(m.failures ?? [])
      }
    })
    worker.on('error', (error) => { settle([{ kind: 'crash', format: current?.format ?? formats[0]!, input: current?.input ?? {}, options: current?.options ?? {}, error: `worker crashed: ${error.message}` }]) })
    worker.on('exit', () => { settle([{ kind: 'crash', format: current?.format ?? formats[0]!, input: current?.input ?? {}, options: current?.options ?? {}, error: 'worker exited before finishing' }]) })
  })
}

t.before(() => {
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run npx tsc -p . (npm test builds it first)`)
})

t.comment(`fast-check seed ${seed}, ${runs} runs per format and input kind`)
const parsers = listParsers()
t.ok(parsers.length >= 10, `${parsers.length} parsers registered`)
for (const parser of parsers) {
  const formats = formatsOf(parser.name, parser.formats)
  // Code formats share one parser (and one worker): fewer runs each.
  const n = parser.name === 'code' ? Math.max(5, Math.round(runs / 4)) : runs
  t.test(`fuzz ${parser.name} (${formats.join(', ')})`, async (t) => {
    const failures = await fuzz(formats, parser.reads, n)
    for (const f of failures) {
      const fixture = { format: f.format, input: f.input, options: f.options, found: f.error, kind: f.kind }
      const text = JSON.stringify(fixture)
      if (process.env.DOCSPLIT_FUZZ_SAVE === '1') {
        const name = `${f.format}-${createHash('sha256').update(text).digest('hex').slice(0, 10)}.json`
        writeFileSync(seedsDir + name, JSON.stringify(fixture, null, 2) + '\n')
      }
      t.fail(`${f.kind} on ${f.format}: ${f.error}\nseed fixture: ${text.slice(0, 2000)}`)
    }
    t.pass(`${parser.name}: ${failures.length === 0 ? 'no failure' : `${failures.length} failure(s)`}`)
  })
}
