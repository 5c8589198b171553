/**
 * `npm run bench [-- OPTIONS]`: docsplit (library and CLI, approx and o200k_base, budget 512)
 * beside its peers and floors on generated inputs; a table on stdout, bench/results/latest.json
 * and bench/results/latest.svg. Options:
 *
 *   --quick            small inputs (1-2 MB; no Python), one run each, 20 s peer limit, no Chonkie TokenChunker
 *   --only=a,b         inputs by name or kind (log-64MB, log, markdown, code-ts, code-py, csv)
 *   --peers=a,b|none   peer ids to run (default: all that apply); floors run unless `no-floors` is listed
 *   --runs=N           timed runs after the warm-up (default 3; 1 where the warm-up took over 30 s)
 *   --timeout=S        a peer is stopped after S seconds (default 180; --quick 20)
 *   --cli=dist|source  the CLI and the library from dist/ (default when built) or from source through tsx
 *   --no-cli           skip the CLI runs
 *   --no-docsplit      peers and floors only (merge results later with render.ts)
 *   --tokenizers=a,b   docsplit's tokenizers (default approx,o200k_base)
 *   --big-o200k        also run docsplit with o200k_base on inputs over 1 GiB
 *   --big-peers=all    also run the tiktoken peers on inputs over 1 GiB
 *   --keep             keep the generated inputs (their folder is printed)
 *   --out=PATH         results JSON path (default bench/results/latest.json, with --quick
 *                      bench/results/quick.json: a trial run leaves the published figures; the SVG goes beside it)
 *   --load             run the service load test instead (bench/load/run.ts; --duration, --connections)
 *
 * Every timed run is a fresh process's first pass over the input. The library and peer rows
 * also get a warm figure (not with --quick): one more process splits the input WARM_PASSES times
 * untimed, then --runs times timed, as a service or a pipeline that has split before does.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generate, specs, type Input } from './inputs.js'
import { hasGnuTime, median, runChild } from './measure.js'
import type { Peer } from './peers/types.js'
import { addFloors, mb, svg, table, type Row } from './report.js'
import type { RunResult } from './child.js'
import { targets } from './targets.js'

const repo = resolve(fileURLToPath(new URL('.', import.meta.url)), '..')
const args = process.argv.slice(2)
const flag = (name: string): boolean => args.includes(`--${name}`)
const opt = (name: string): string | undefined => args.find(a => a.startsWith(`--${name}=`))?.slice(name.length + 3)
const quick = flag('quick')
const list = (s: string | undefined): Set<string> | undefined => s === undefined ? undefined : new Set(s.split(',').filter(Boolean))
const only = list(opt('only'))
const peerFilter = list(opt('peers'))
const runsWanted = Number(opt('runs') ?? (quick ? 1 : 3))
const peerTimeoutMs = Number(opt('timeout') ?? (quick ? 20 : 180)) * 1000
const DOCSPLIT_TIMEOUT_MS = 60 * 60 * 1000
const BIG = 2 ** 30
/**
 * Untimed passes before the warm figures: docsplit's markdown pass needed three (24 MB) to reach
 * its steady speed (10.9, 13.7, 14.9, 19.4, 18.5 MB/s over five passes of 8 MB).
 */
const WARM_PASSES = 3
const out = resolve(opt('out') ?? join(repo, `bench/results/${quick ? 'quick' : 'latest'}.json`))
if (flag('load')) {
  // The service load test (50 connections, 60 s of mixed requests): bench/load/run.ts.
  const args = process.argv.slice(2).filter((a) => a !== '--load')
  const run = spawnSync(process.execPath, ['--import', 'tsx', join(repo, 'bench/load/run.ts'), ...args], { stdio: 'inherit' })
  process.exit(run.status ?? 1)
}

// ------------------------------------------------------------------------------- peers install

function ensurePeers (): void {
  const dir = join(repo, 'bench/peers')
  if (existsSync(join(dir, 'node_modules'))) return
  console.error('bench: installing the peer libraries into bench/peers/node_modules (pinned by bench/peers/package-lock.json)')
  // Not `npm ci`: it rejects this lock as out of sync, because @chonkiejs/core's optional
  // tree-sitter pack names platform packages that the registry lacks, so the lock cannot list
  // them. `npm install` installs the locked versions; --no-save leaves the lock untouched.
  execFileSync('npm', ['install', '--prefix', dir, '--no-save', '--omit=optional', '--ignore-scripts', '--no-audit', '--no-fund'], { stdio: 'inherit' })
}

// ------------------------------------------------------------------------------------ jobs

const NODE_FLAGS = ['--max-old-space-size=8192']
const cliMode = opt('cli') ?? (existsSync(join(repo, 'dist/cli/index.js')) ? 'dist' : 'source')
/**
 * The measured process: bench/child.ts built into one file beside the peers' node_modules (bare
 * imports stay imports, resolved from there), run by plain node; tsx alone would add some 35 MB
 * to every peak RSS. From source, docsplit itself needs tsx.
 */
const builtChild = join(repo, 'bench/peers/.child')
async function childEntry (): Promise<string[]> {
  if (cliMode !== 'dist') return ['--import', 'tsx', join(repo, 'bench/child.ts')]
  const { build } = await import('esbuild')
  // Split at the dynamic imports: each peer's module (and the package it imports) loads only in
  // the runs of that peer. In one file, every peer's package loaded in every run, and a run of
  // docsplit carried some 19 MB of LangChain and Chonkie in its peak RSS.
  await build({ entryPoints: [join(repo, 'bench/child.ts')], outdir: builtChild, outExtension: { '.js': '.mjs' }, bundle: true, splitting: true, packages: 'external', format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' })
  return [join(builtChild, 'child.mjs')]
}
/** The node flags on the CLI's shebang line: `npx docsplit` runs with them, so the bench does too. */
const cliNodeFlags = (readFileSync(join(repo, 'cli/index.ts'), 'utf8').match(/^#!.*?\bnode\b(.*)$/m)?.[1] ?? '').trim().split(/\s+/).filter(Boolean)
const cliEntry = cliMode === 'dist' ? [join(repo, 'dist/cli/index.js')] : ['--import', 'tsx', join(repo, 'cli/index.ts')]

async function loadPeers (): Promise<Peer[]> {
  const all: Peer[] = []
  for (const mod of ['./peers/floors.js', './peers/langchain.js', './peers/chonkie.js']) all.push(...(await import(mod) as { peers: Peer[] }).peers)
  return all
}

interface Job { tool: string, label: string, tokenizer: string, cli?: boolean }

/**
 * On inputs over 1 GiB, by default: docsplit with approx only (o200k_base at a few MB/s would take
 * most of an hour per run; --big-o200k adds it), and only the peers that budget in characters
 * (the tiktoken ones would only hit the time limit again; --big-peers=all runs them).
 */
function jobsFor (input: Input, peers: Peer[]): Job[] {
  const jobs: Job[] = []
  const big = input.bytes > BIG
  const tokenizers = list(opt('tokenizers')) ?? new Set(['approx', 'o200k_base'])
  if (big && !flag('big-o200k')) tokenizers.delete('o200k_base')
  for (const t of flag('no-docsplit') ? [] : tokenizers) {
    jobs.push({ tool: 'docsplit', label: 'docsplit', tokenizer: t })
    if (!flag('no-cli')) jobs.push({ tool: 'docsplit-cli', label: 'docsplit CLI', tokenizer: t, cli: true })
  }
  for (const p of peers) {
    if (p.kinds !== undefined && !p.kinds.includes(input.kind)) continue
    if (big && p.budget !== 'chars' && opt('big-peers') !== 'all') continue
    if (peerFilter !== undefined && !peerFilter.has(p.id) && !(p.scan !== undefined && !peerFilter.has('no-floors'))) continue
    // --quick leaves out Chonkie's TokenChunker: its offsets loop is quadratic (Array.from, then
    // slice+join per chunk), so it only ever hits the time limit; the full run reports it.
    if (quick && peerFilter === undefined && p.id.startsWith('chonkie-token')) continue
    jobs.push({ tool: p.id, label: p.label, tokenizer: p.budget })
  }
  return jobs
}

/** With `warm`: that many untimed passes in the process, then `runsWanted` timed ones (child.ts). */
const timeoutFor = (job: Job): number => job.tool.startsWith('docsplit') ? DOCSPLIT_TIMEOUT_MS : peerTimeoutMs

async function once (job: Job, input: Input, verify: boolean, warm = 0) {
  const timeoutMs = timeoutFor(job)
  if (job.cli === true) {
    const cli = hasGnuTime ? cliEntry : [join(repo, 'bench/rss-wrapper.ts'), ...cliEntry.filter(a => a !== '--import' && a !== 'tsx')]
    const pre = [...cliNodeFlags, ...(hasGnuTime ? [] : ['--import', 'tsx'])]
    return await runChild<RunResult>(process.execPath, [...pre, ...cli, 'split', input.path, '--jsonl', '--max-tokens', '512', '--tokenizer', job.tokenizer],
      { timeoutMs, cwd: repo, discardStdout: true })
  }
  const argv = [...NODE_FLAGS, ...child, job.tool, input.path, input.kind, job.tokenizer]
  if (verify) argv.push('--verify')
  if (warm > 0) argv.push(`--warm=${warm}`, `--repeat=${runsWanted}`)
  // The library as users load it: the build, when there is one (as for the CLI).
  if (job.tool === 'docsplit') argv.push(`--lib=${join(repo, cliMode === 'dist' ? 'dist/index.js' : 'index.ts')}`)
  return await runChild<RunResult>(process.execPath, argv, { timeoutMs, cwd: repo })
}

const errorLine = (stderr: string): string =>
  (stderr.split('\n').find(l => /(\w*Error|DOCSPLIT_\w+)(: | \[)/.test(l) && !/^\s*(throw|at) /.test(l)) ?? stderr.split('\n').filter(Boolean).pop() ?? 'no output').trim().slice(0, 200)

/** A warm-up run that also verifies (recounts a sample after its clock stops), then timed runs. */
async function measure (job: Job, input: Input): Promise<Row> {
  const row: Row = { input: input.name, kind: input.kind, bytes: input.bytes, tool: job.tool, label: job.label, tokenizer: job.tokenizer, status: 'ok', runs: 0, warm: true, load1: loadavg()[0] }
  const big = input.bytes > BIG
  const first = await once(job, input, job.cli !== true)
  if (!first.ok) {
    row.status = first.timedOut ? 'timeout' : 'failed'
    if (first.timedOut) {
      row.stoppedAfterMs = first.wallMs
      row.doneBytes = first.progress?.bytes ?? 0
      // An upper bound: at best it would have finished right at the time limit.
      row.mbps = input.bytes / 1e6 / (first.wallMs / 1000)
      // Its pace over the part it finished (windows for peers, 16-64 MiB steps for floors).
      if (first.progress !== undefined && first.progress.bytes > 0 && first.progress.ms > 0) row.partialMbps = first.progress.bytes / 1e6 / (first.progress.ms / 1000)
    } else row.error = errorLine(first.stderr)
    return row
  }
  const r = first.result
  if (r !== undefined) {
    row.chunks = r.chunks
    if (r.ownTokens !== undefined) row.fill = r.ownTokens / r.chunks / 512
    row.protectedChunks = r.protectedChunks
    row.ownOver = r.ownOver
    if (r.sample !== undefined) {
      row.sampleEvery = r.sample.every; row.sampleChunks = r.sample.chunks
      row.over = r.sample.over; row.overProtected = r.sample.overProtected
      row.fillO200k = r.sample.tokens / r.sample.chunks / 512
      row.maxO200k = r.sample.max
    }
  }
  const seconds = (c: typeof first): number => (job.cli === true ? c.wallMs : c.result?.ms ?? c.wallMs) / 1000
  const timed: Array<typeof first> = []
  if (big && first.result?.sample !== undefined && seconds(first) > 30) {
    // Inputs over 1 GiB whose verifying run took over 30 s: one timed run after it. The
    // verifying run holds its sample (about 16 MB of chunk text) while it splits, so its peak
    // RSS is not comparable with the timed runs of smaller inputs.
    const c = await once(job, input, false)
    if (!c.ok) { row.status = c.timedOut ? 'timeout' : 'failed'; row.error = errorLine(c.stderr) } else timed.push(c)
  } else if ((runsWanted <= 1 && quick) || seconds(first) > 30) {
    // Runs that already took over 30 s are measured once (the verifying run, whose clock stops
    // before the recount): the report marks them `1 cold`.
    timed.push(first); row.warm = false
  } else {
    for (let i = 0; i < runsWanted; i++) {
      const c = await once(job, input, false)
      if (!c.ok) { row.status = c.timedOut ? 'timeout' : 'failed'; row.error = errorLine(c.stderr); break }
      timed.push(c)
    }
  }
  row.runs = timed.length
  if (timed.length > 0) {
    row.medianMs = median(timed.map(seconds)) * 1000
    row.mbps = input.bytes / 1e6 / (row.medianMs / 1000)
    const cpu = timed.map(c => job.cli === true ? c.cpuSeconds : c.result?.cpuMs !== undefined ? c.result.cpuMs / 1000 : undefined).filter((x): x is number => x !== undefined)
    if (cpu.length === timed.length) row.cpuMbps = input.bytes / 1e6 / median(cpu)
    // The median of the runs' peaks: one run's peak moves by 10-20% with when V8 collects and
    // what the allocator keeps (a 2 GB log: 121-151 MB in three runs of the library).
    const rss = timed.map(c => c.peakRss).filter((x): x is number => x !== undefined)
    if (rss.length > 0) {
      row.peakRss = median(rss)
      if (rss.length > 1) row.peakRssRange = [Math.min(...rss), Math.max(...rss)]
    }
  }
  // The same work in a process that has done it before (a service, a pipeline): the library's
  // and the peers' JIT-compiled code is then what runs. Not for the CLI (a process per file), nor
  // where one run took over 30 s (the warm-up would take minutes), nor where all the passes
  // together might not finish within the time limit.
  const passCount = WARM_PASSES + runsWanted
  if (row.status === 'ok' && job.cli !== true && !big && !quick && seconds(first) <= 30 && seconds(first) * passCount * 1.5 < timeoutFor(job) / 1000) {
    const w = await once(job, input, false, WARM_PASSES)
    const warmTimed = w.ok ? w.result?.passes : undefined
    if (warmTimed !== undefined && warmTimed.length > 0) {
      row.warmMbps = input.bytes / 1e6 / (median(warmTimed.map(p => p.ms)) / 1000)
      row.warmCpuMbps = input.bytes / 1e6 / (median(warmTimed.map(p => p.cpuMs)) / 1000)
    } else {
      row.warmError = w.timedOut ? `stopped after ${Math.round(w.wallMs / 1000)} s` : errorLine(w.stderr)
      console.error(`    warm passes: ${row.warmError}`)
    }
  }
  return row
}

// ------------------------------------------------------------------------------------- main

ensurePeers()
const peers = await loadPeers()
const child = await childEntry()
const dir = mkdtempSync(join(tmpdir(), 'docsplit-bench-'))
const rows: Row[] = []
const inputs: Array<Omit<Input, 'path'>> = []
const started = new Date()
const loadavgAtStart = loadavg()
console.error(`bench: ${quick ? 'quick' : 'full'} run; inputs in ${dir}; CLI from ${cliMode}; peak RSS from ${hasGnuTime ? '/usr/bin/time -v (CLI) and the child (library, peers)' : 'process.resourceUsage'}; load average ${loadavg().map(l => l.toFixed(1)).join(' ')}`)
try {
  for (const spec of specs(quick, only)) {
    const t = performance.now()
    const input = generate(dir, spec)
    if (input === undefined) { console.error(`bench: ${spec.name}: no sources here, skipped`); continue }
    const { path: _path, ...info } = input
    inputs.push(info)
    console.error(`bench: ${input.name}: ${mb(input.bytes)} generated in ${((performance.now() - t) / 1000).toFixed(1)} s (${input.sources})`)
    for (const job of jobsFor(input, peers)) {
      const row = await measure(job, input)
      rows.push(row)
      console.error(`  ${job.label} [${job.tokenizer}]: ${row.status}${row.mbps !== undefined ? ` ${row.mbps.toFixed(2)} MB/s` : ''}${row.error !== undefined ? ` ${row.error}` : ''}`)
    }
    if (!flag('keep')) rmSync(input.path, { force: true })
  }
} finally {
  rmSync(builtChild, { recursive: true, force: true })
  if (!flag('keep')) rmSync(dir, { recursive: true, force: true })
  else console.error(`bench: inputs kept in ${dir}`)
}

addFloors(rows)
const checks = targets(rows)
const machine = { cpus: cpus().length, cpu: cpus()[0]?.model, memGiB: Math.round(totalmem() / 2 ** 30), node: process.version, loadavgAtStart, loadavgAtEnd: loadavg(), gnuTime: hasGnuTime }
const results = { started: started.toISOString(), finished: new Date().toISOString(), mode: quick ? 'quick' : 'full', cli: cliMode, args, machine, inputs, rows, targets: checks }
mkdirSync(dirname(out), { recursive: true })
writeFileSync(out, JSON.stringify(results, null, 2) + '\n')
writeFileSync(out.replace(/\.json$/, '') + '.svg', svg(rows, `docsplit bench (${quick ? 'quick' : 'full'}, ${started.toISOString().slice(0, 10)}, ${machine.cpus} cores, budget 512)`))
console.log(table(rows))
console.log()
for (const c of checks) console.log(`${c.pass === undefined ? '?' : c.pass ? 'PASS' : 'FAIL'}  ${c.target}: ${c.measured}`)
console.log(`\nresults: ${out}`)
