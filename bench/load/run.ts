/**
 * Load run against the built HTTP service on loopback: autocannon with 50 connections for 60 s
 * of mixed requests (text and file endpoints, every format, about 10% invalid), a /health
 * prober in its own process, and the service's RSS sampled every second.
 *
 *   node --import tsx bench/load/run.ts [--duration 60] [--connections 50] [--json]
 *   (npm run bench -- --load, once bench/run.ts forwards the flag)
 *
 * Reports: status counts, 5xx other than 503 (must be 0), dropped connections (errors,
 * timeouts, resets), health p50/p99/max and failures, RSS start/peak/end. Exits 1 when a 5xx
 * other than 503 was seen, a connection was dropped, or /health failed.
 * Needs the build (npx tsc -p .) and the web extra. Starts one service and stops it.
 */
import { spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { buildXlsx } from '../../test/helpers/xlsx-build.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const cliBin = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url))
const prober = fileURLToPath(new URL('../../test/hostile/health-prober.mjs', import.meta.url))
const TEXT = '/docsplit/api/split/text'
const FILE = '/docsplit/api/split/file'

interface Req { method: 'POST' | 'GET', path: string, headers: Record<string, string>, body?: string | Buffer, kind: string, valid: boolean }

const para = (i: number): string => `Paragraph ${i} explains one idea in a few plain sentences. It is followed by another. `.repeat(3)

/** Documents of every text format, a few KB each. */
function documents (): Array<{ format: string, name: string, text: string }> {
  const md = Array.from({ length: 30 }, (_, i) => `${i % 5 === 0 ? `## Section ${i}\n\n` : ''}${para(i)}\n`).join('\n')
  return [
    { format: 'markdown', name: 'doc.md', text: md },
    { format: 'text', name: 'doc.txt', text: Array.from({ length: 30 }, (_, i) => para(i)).join('\n\n') },
    { format: 'log', name: 'app.log', text: Array.from({ length: 200 }, (_, i) => `2024-05-01T12:00:${String(i % 60).padStart(2, '0')}Z ${i % 7 === 0 ? 'ERROR' : 'INFO'} worker-${i % 4} handled request ${i} in ${i * 3} ms\n`).join('') },
    { format: 'csv', name: 'data.csv', text: 'id,name,score,comment\n' + Array.from({ length: 200 }, (_, i) => `${i},name ${i},${i * 7 % 100},"a comment, with a comma ${i}"\n`).join('') },
    { format: 'tsv', name: 'data.tsv', text: 'id\tname\tscore\n' + Array.from({ length: 200 }, (_, i) => `${i}\tname ${i}\t${i % 100}\n`).join('') },
    { format: 'json', name: 'data.json', text: JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'], nested: { x: i } })), null, 2) },
    { format: 'jsonl', name: 'data.jsonl', text: Array.from({ length: 150 }, (_, i) => JSON.stringify({ id: i, msg: `event ${i}` })).join('\n') + '\n' },
    { format: 'xml', name: 'feed.xml', text: '<?xml version="1.0"?>\n<feed>\n' + Array.from({ length: 80 }, (_, i) => `  <entry id="${i}"><title>Entry ${i}</title><body>${para(i)}</body></entry>\n`).join('') + '</feed>\n' },
    { format: 'yaml', name: 'conf.yaml', text: Array.from({ length: 60 }, (_, i) => `service_${i}:\n  image: app:${i}\n  replicas: ${i % 5}\n  env:\n    - NAME=value${i}\n`).join('') },
    { format: 'python', name: 'mod.py', text: Array.from({ length: 25 }, (_, i) => `class C${i}:\n    def method(self, x):\n        """Doc ${i}."""\n        return x * ${i}\n\n\ndef f${i}(a, b):\n    return a + b + ${i}\n\n`).join('') },
    { format: 'typescript', name: 'mod.ts', text: Array.from({ length: 25 }, (_, i) => `export function f${i} (a: number): number {\n  return a * ${i}\n}\n\nexport class K${i} {\n  value = ${i}\n}\n\n`).join('') },
  ]
}

function multipart (file: Buffer | string, filename: string, fields: Record<string, string> = {}): { body: Buffer, type: string } {
  const boundary = '----docsplitload' + Math.random().toString(16).slice(2)
  const parts: Buffer[] = []
  for (const [k, v] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`))
  parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`), Buffer.from(file), Buffer.from(`\r\n--${boundary}--\r\n`))
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` }
}

/** The request mix: every format on both endpoints, then invalid ones to about 10%. */
function mix (): Req[] {
  const valid: Req[] = []
  const json = { 'content-type': 'application/json' }
  for (const d of documents()) {
    for (const max of [64, 512]) {
      valid.push({ method: 'POST', path: TEXT, headers: json, body: JSON.stringify({ text: d.text, input_format: d.format, max_tokens: max }), kind: `text ${d.format}`, valid: true })
      const m = multipart(d.text, d.name, { max_tokens: String(max) })
      valid.push({ method: 'POST', path: FILE, headers: { 'content-type': m.type }, body: m.body, kind: `file ${d.format}`, valid: true })
    }
  }
  const xlsx = buildXlsx([{ name: 'Data', rows: [['id', 'name', 'score'], ...Array.from({ length: 200 }, (_, i) => [i, `name ${i}`, i % 100])] }, { name: 'Other', rows: [['k', 'v'], ['a', 1]] }])
  for (const max of [64, 512]) {
    const m = multipart(xlsx, 'book.xlsx', { max_tokens: String(max) })
    valid.push({ method: 'POST', path: FILE, headers: { 'content-type': m.type }, body: m.body, kind: 'file xlsx', valid: true })
  }
  const bad = (kind: string, r: Omit<Req, 'kind' | 'valid'>): Req => ({ ...r, kind: `invalid ${kind}`, valid: false })
  const badUtf8 = multipart(Buffer.concat([Buffer.from('abc'), Buffer.from([0xff, 0xc3, 0x28])]), 'bad.txt')
  const badCsv = multipart('"open,quote\n1,2\n', 'bad.csv')
  const invalid: Req[] = [
    bad('budget', { method: 'POST', path: TEXT, headers: json, body: JSON.stringify({ text: 'x', max_tokens: 3 }) }),
    bad('unknown option', { method: 'POST', path: TEXT, headers: json, body: JSON.stringify({ text: 'x', maxTokens: 64 }) }),
    bad('broken JSON', { method: 'POST', path: TEXT, headers: json, body: '{"text": "unterminated' }),
    bad('media type', { method: 'POST', path: TEXT, headers: { 'content-type': 'text/plain' }, body: 'hello' }),
    bad('invalid UTF-8', { method: 'POST', path: FILE, headers: { 'content-type': badUtf8.type }, body: badUtf8.body }),
    bad('CSV parse error', { method: 'POST', path: FILE, headers: { 'content-type': badCsv.type }, body: badCsv.body }),
  ]
  // About 10% invalid, spread through the list (autocannon cycles through it per connection).
  const out: Req[] = []
  let k = 0
  for (let i = 0; i < valid.length; i++) {
    out.push(valid[i]!)
    if (i % 9 === 8) out.push(invalid[k++ % invalid.length]!)
  }
  while (out.filter((r) => !r.valid).length < Math.round(out.length / 10)) out.push(invalid[k++ % invalid.length]!)
  return out
}

function rssMb (pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m === null ? Number.NaN : Number(m[1]) / 1024
  } catch {
    return Number.NaN
  }
}

export interface LoadReport {
  duration_s: number
  connections: number
  requests: number
  throughput_rps: number
  statuses: Record<string, number>
  server_errors_other_than_503: number
  dropped: { errors: number, timeouts: number, resets: number }
  latency_ms: { p50: number, p99: number, max: number }
  health: { probes: number, failures: number, p50_ms: number, p99_ms: number, max_ms: number }
  rss_mb: { start: number, peak: number, end: number }
  mix: { requests: number, invalid: number }
}

export async function runLoad (opts: { duration: number, connections: number }): Promise<LoadReport> {
  if (!existsSync(cliBin)) throw new Error('dist/ is missing: run npx tsc -p . first')
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PORT: '0', DOCSPLIT_WEB_RATE_LIMIT_REQUESTS: '1000000', DOCSPLIT_WEB_LOG_LEVEL: 'warn' }
  delete env.NODE_OPTIONS
  // Logs at warn: the "listening" line is info, so learn the port from a first probe instead.
  env.DOCSPLIT_WEB_LOG_LEVEL = 'info'
  const service = spawn(process.execPath, [cliBin, 'serve'], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] })
  let log = ''
  service.stdout.on('data', (d: Buffer) => { log += d.toString('utf8'); if (log.length > 1 << 20) log = log.slice(-4096) })
  const exited = new Promise<number | string | null>((resolve) => service.once('exit', (code, signal) => { resolve(code ?? signal) }))
  try {
    const until = Date.now() + 60_000
    let url: string | undefined
    while (url === undefined) {
      url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(log)?.[1]
      if (url === undefined && (Date.now() > until || service.exitCode !== null)) throw new Error('the service did not start')
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const requests = mix()
    // Warm up once per kind.
    for (const r of requests.slice(0, 30)) await (await fetch(url + r.path, { method: r.method, headers: r.headers, body: r.body })).arrayBuffer()
    const rss: number[] = [rssMb(service.pid!)]
    const sampler = setInterval(() => { rss.push(rssMb(service.pid!)) }, 1000)
    const health = spawn(process.execPath, [prober, url, '100'], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } })
    let healthOut = ''
    health.stdout.on('data', (d: Buffer) => { healthOut += d.toString('utf8') })
    const healthDone = new Promise((resolve) => health.once('exit', resolve))
    const result = await autocannon({
      url,
      connections: opts.connections,
      duration: opts.duration,
      timeout: 60,
      requests: requests.map((r) => ({ method: r.method, path: r.path, headers: r.headers, body: r.body as string })),
    })
    health.stdin.end()
    await healthDone
    clearInterval(sampler)
    await new Promise((resolve) => setTimeout(resolve, 2000))
    rss.push(rssMb(service.pid!))
    const h = JSON.parse(healthOut.trim()) as { probes: number, failures: string[], maxMs: number, p99Ms: number, p50Ms: number }
    const statuses: Record<string, number> = {}
    for (const [code, v] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = (v as { count: number }).count
    const fivexx = Object.entries(statuses).filter(([code]) => code.startsWith('5') && code !== '503').reduce((n, [, c]) => n + c, 0)
    const sampled = rss.filter((x) => Number.isFinite(x))
    return {
      duration_s: opts.duration,
      connections: opts.connections,
      requests: result.requests.total,
      throughput_rps: Math.round(result.requests.average * 10) / 10,
      statuses,
      server_errors_other_than_503: fivexx,
      dropped: { errors: result.errors, timeouts: result.timeouts, resets: (result as unknown as { resets?: number }).resets ?? 0 },
      latency_ms: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
      health: { probes: h.probes, failures: h.failures.length, p50_ms: Math.round(h.p50Ms * 10) / 10, p99_ms: Math.round(h.p99Ms * 10) / 10, max_ms: Math.round(h.maxMs) },
      rss_mb: { start: Math.round(sampled[0] ?? 0), peak: Math.round(Math.max(...sampled)), end: Math.round(sampled[sampled.length - 1] ?? 0) },
      mix: { requests: requests.length, invalid: requests.filter((r) => !r.valid).length },
    }
  } finally {
    if (service.exitCode === null) service.kill('SIGTERM')
    const timer = setTimeout(() => { service.kill('SIGKILL') }, 60_000)
    await exited
    clearTimeout(timer)
  }
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]
if (isMain) {
  const { values } = parseArgs({ options: { duration: { type: 'string', default: '60' }, connections: { type: 'string', default: '50' }, json: { type: 'boolean', default: false }, load: { type: 'boolean', default: false } } })
  const report = await runLoad({ duration: Number(values.duration), connections: Number(values.connections) })
  if (values.json === true) {
    process.stdout.write(JSON.stringify(report, null, 2) + '\n')
  } else {
    const rows: Array<[string, string]> = [
      ['run', `${report.connections} connections, ${report.duration_s} s, ${report.mix.requests} distinct requests (${report.mix.invalid} invalid)`],
      ['requests', `${report.requests} (${report.throughput_rps} req/s)`],
      ['statuses', Object.entries(report.statuses).map(([k, v]) => `${k}: ${v}`).join(', ')],
      ['5xx other than 503', String(report.server_errors_other_than_503)],
      ['dropped connections', `errors ${report.dropped.errors}, timeouts ${report.dropped.timeouts}, resets ${report.dropped.resets}`],
      ['split latency', `p50 ${report.latency_ms.p50} ms, p99 ${report.latency_ms.p99} ms, max ${report.latency_ms.max} ms`],
      ['/health', `${report.health.probes} probes, ${report.health.failures} failures, p50 ${report.health.p50_ms} ms, p99 ${report.health.p99_ms} ms, max ${report.health.max_ms} ms`],
      ['service RSS', `start ${report.rss_mb.start} MB, peak ${report.rss_mb.peak} MB, end ${report.rss_mb.end} MB`],
    ]
    process.stdout.write('| measure | value |\n|---|---|\n' + rows.map(([k, v]) => `| ${k} | ${v} |`).join('\n') + '\n')
  }
  const ok = report.server_errors_other_than_503 === 0 && report.dropped.errors + report.dropped.timeouts + report.dropped.resets === 0 && report.health.failures === 0
  process.exitCode = ok ? 0 : 1
}
