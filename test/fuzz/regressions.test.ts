/**
 * Replays every saved fuzz seed (test/fuzz/seeds/*.json: `{format, input: {string} | {base64},
 * options}`) through the same properties as fuzz.test.ts, in the same worker: only a
 * DocsplitError may leave the engine, and a successful split passes the invariants (with byte
 * offsets checked against the input as received, BOM and UTF-16 included).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import t from 'tap'

const seedsDir = fileURLToPath(new URL('./seeds/', import.meta.url))
const workerFile = fileURLToPath(new URL('./fuzz-worker.mjs', import.meta.url))
const dist = fileURLToPath(new URL('../../dist/index.js', import.meta.url))

interface Seed { name?: string, format: string, input: { string?: string, base64?: string }, options: Record<string, unknown> }

t.test('fuzz seeds replay clean', async (t) => {
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run npx tsc -p .`)
  const files = readdirSync(seedsDir).filter((f) => f.endsWith('.json')).sort()
  const seeds = files.map((f) => ({ name: f, ...(JSON.parse(readFileSync(seedsDir + f, 'utf8')) as Seed) }))
  t.ok(seeds.length > 0, `${seeds.length} seeds`)
  const failures = await new Promise<Array<Seed & { error: string }>>((resolve, reject) => {
    const worker = new Worker(workerFile, { workerData: { seeds } })
    const timer = setTimeout(() => { void worker.terminate(); reject(new Error('seed replay ran past 60 s (a hang?)')) }, 60_000)
    worker.on('message', (m: { kind: string, failures?: Array<Seed & { error: string }> }) => {
      if (m.kind === 'done') { clearTimeout(timer); void worker.terminate(); resolve(m.failures ?? []) }
    })
    worker.on('error', (error) => { clearTimeout(timer); reject(error) })
  })
  for (const f of failures) t.fail(`${f.name ?? f.format}: ${f.error}`)
  t.equal(failures.length, 0, 'every seed passes')
})
