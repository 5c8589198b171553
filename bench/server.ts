/**
 * Load test of the HTTP service: POST /docsplit/api/split/text with a 20 KB markdown document
 * at max_tokens 512, 10 connections (autocannon), beside two floors measured in the same run:
 * a bare fastify route that parses the same JSON body and answers a constant, and the library
 * splitting the same document in a loop on one core.
 *
 *   node --import tsx bench/server.ts [--seconds=10] [--connections=10] [--workers=2]
 *
 * Prints a markdown table (req/s, p50, p99) and writes nothing.
 */
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import Fastify from 'fastify'
import { listTokenizers, split } from '../index.js'
import { build } from '../server/app.js'

const arg = (name: string, fallback: number): number => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`))
  return hit === undefined ? fallback : Number(hit.slice(name.length + 3))
}
const seconds = arg('seconds', 10)
const connections = arg('connections', 10)
const workers = arg('workers', 2)

/** 20 KB of real markdown from the shared corpus, or generated sections when it is absent. */
function document (): string {
  const corpusFile = fileURLToPath(new URL('../../shared/corpus/markdown/fastify-server-reference.md', import.meta.url))
  if (existsSync(corpusFile)) {
    const text = readFileSync(corpusFile, 'utf8')
    const cut = text.indexOf('\n\n', 20_000)
    return text.slice(0, cut === -1 ? 20_000 : cut + 1)
  }
  let out = ''
  for (let i = 0; out.length < 20_000; i++) {
    out += `## Section ${i}\n\nThis paragraph explains part ${i} of the document in plain words, with enough text to fill a chunk.\n\n- item one\n- item two\n\n`
  }
  return out
}

interface Row { name: string, rps: number, p50: number | null, p99: number | null, errors: number }

async function load (url: string, body: string): Promise<Row & { non2xx: number }> {
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections,
    duration: seconds,
  })
  return { name: '', rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx }
}

async function main (): Promise<void> {
  const text = document()
  const body = JSON.stringify({ text, max_tokens: 512, input_format: 'markdown' })
  const rows: Row[] = []

  // Until the engine registers `approx` itself, use the tests' stand-in (reported below).
  const stub = listTokenizers().some((t) => t.name === 'approx') ? [] : [fileURLToPath(new URL('../test/server/fixtures/approx-stub.mjs', import.meta.url))]
  if (stub.length > 0) console.error('note: approx tokenizer not built in; using the test stand-in (numbers not representative)')
  const app = await build({ plugins: stub, maxConcurrentSplits: workers, rateLimitRequests: 1_000_000, logLevel: 'warn', splitTimeoutSeconds: 60, maxQueuedSplits: 10_000 })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const check = await fetch(`${url}/docsplit/api/split/text`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  const sample = await check.json() as { chunk_count: number }
  if (check.status !== 200) throw new Error(`service answered ${check.status}`)
  const service = await load(`${url}/docsplit/api/split/text`, body)
  rows.push({ ...service, name: `docsplit service (${workers} workers)` })
  if (service.non2xx > 0) console.error(`service: ${service.non2xx} non-2xx answers`)
  await app.close()

  const bare = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024 })
  bare.post('/parse', async (request) => ({ ok: typeof (request.body as { text?: unknown }).text === 'string' }))
  const bareUrl = await bare.listen({ host: '127.0.0.1', port: 0 })
  rows.push({ ...(await load(`${bareUrl}/parse`, body)), name: 'bare fastify route (parse JSON only)' })
  await bare.close()

  const until = performance.now() + seconds * 1000
  const times: number[] = []
  while (performance.now() < until) {
    const start = performance.now()
    await split(text, { max_tokens: 512, input_format: 'markdown' })
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  const at = (q: number): number => Math.round((times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0) * 10) / 10
  rows.push({ name: 'library, one core (split() in a loop)', rps: times.length / seconds, p50: at(0.5), p99: at(0.99), errors: 0 })

  console.log(`\n${Buffer.byteLength(text)} bytes of markdown, max_tokens 512, ${sample.chunk_count} chunks; ${connections} connections, ${seconds} s each\n`)
  console.log('| what | req/s | p50 ms | p99 ms | errors |')
  console.log('|---|---|---|---|---|')
  for (const r of rows) console.log(`| ${r.name} | ${r.rps.toFixed(1)} | ${r.p50 ?? '-'} | ${r.p99 ?? '-'} | ${r.errors} |`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
