/**
 * Helpers for the hostile-input, fault and privacy suites: run the built CLI, start the built
 * service (`node dist/cli/index.js serve`) as a child on 127.0.0.1 port 0, probe /health in
 * parallel, read the child's RSS, and check a split response against the invariants.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { errorTable, split as _split } from '../../index.js'
import { invariantProblems } from '../../core/testing.js'
import { tokenizerByName } from '../../core/registry.js'
import type { SplitResponse } from '../../core/schema.js'
import { UTF16_HEAD, utf16WithoutBom } from '../../core/decode.js'

void _split
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
export const cliBin = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url))
export const TEXT = '/docsplit/api/split/text'
export const FILE = '/docsplit/api/split/file'

/** env(1), to start children without the test runner's NODE_OPTIONS. */
export const ENV = ['/usr/bin/env', '/bin/env'].find((p) => existsSync(p)) ?? 'env'

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

export interface RunResult { code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, timedOut: boolean }

/** Runs a command with a hard bound: past `ms` it is killed and `timedOut` is set. */
export function run (command: string, args: string[], opts: { input?: Buffer | string, ms?: number, env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(ENV, ['-u', 'NODE_OPTIONS', command, ...args], { cwd: repoRoot, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] })
    const out: Buffer[] = []
    const err: Buffer[] = []
    let timedOut = false
    child.stdout.on('data', (d: Buffer) => out.push(d))
    child.stderr.on('data', (d: Buffer) => err.push(d))
    child.stdin.on('error', () => {})
    child.stdin.end(opts.input ?? '')
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL') }, opts.ms ?? 120_000)
    child.once('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), timedOut })
    })
  })
}

/** The built CLI. */
export function cli (args: string[], opts: { input?: Buffer | string, ms?: number, env?: NodeJS.ProcessEnv } = {}): Promise<RunResult> {
  return run(process.execPath, [cliBin, ...args], opts)
}

let approx: Awaited<ReturnType<ReturnType<typeof tokenizerByName>['load']>> | undefined

/** Invariant problems of a response against its source (undefined source: budget and counts only). */
export async function problemsOf (response: SplitResponse, source: string | undefined): Promise<string[]> {
  approx ??= await tokenizerByName('approx').load()
  return invariantProblems(response, source ?? '', { tokenizer: approx, lossless: source !== undefined })
}

/**
 * The text a UTF-8 input decodes to (BOM removed), or undefined when docsplit does not read it as
 * UTF-8 (invalid UTF-8, or UTF-16 without a BOM, which it tells from the first bytes): the
 * invariants then check budgets and counts only, as byte offsets are not UTF-8 ones.
 */
export function decoded (input: string | Buffer): string | undefined {
  if (typeof input === 'string') return input
  if (utf16WithoutBom(input.subarray(0, UTF16_HEAD)) !== undefined) return undefined
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(input).replace(/^\uFEFF/, '')
  } catch {
    return undefined
  }
}

export function statusOf (code: string): number {
  return (errorTable as Record<string, { status: number, exit: number }>)[code]!.status
}

export function exitOf (code: string): number {
  return (errorTable as Record<string, { status: number, exit: number }>)[code]!.exit
}

export interface Service {
  url: string
  port: number
  process: ChildProcess
  pid: number
  /** Everything the service wrote (log lines). */
  stdout: () => string
  stderr: () => string
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string | null>
  /** SIGTERM, and wait for the exit (SIGKILL after `ms`). */
  stop: (ms?: number) => Promise<number | string | null>
}

/**
 * Starts the built service as a child process with the given environment (PORT=0 on loopback)
 * and waits for its "Server listening" line.
 */
export async function startService (env: NodeJS.ProcessEnv = {}, opts: { wrap?: string[], ms?: number } = {}): Promise<Service> {
  const base: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PORT: '0', DOCSPLIT_WEB_LOG_LEVEL: 'info' }
  for (const k of Object.keys(base)) if (k.startsWith('DOCSPLIT_WEB_') && !(k in env) && k !== 'DOCSPLIT_WEB_LOG_LEVEL') delete base[k]
  // The test runner's own loaders (tap injects them through NODE_OPTIONS) stay out of the service.
  delete base.NODE_OPTIONS
  // tap re-injects its loaders through NODE_OPTIONS into every child it sees spawned: start the
  // service through env(1) so it runs as in production, with none of the test runner's hooks.
  const service = [ENV, '-u', 'NODE_OPTIONS', process.execPath, cliBin, 'serve']
  const command = opts.wrap !== undefined ? opts.wrap[0]! : service[0]!
  const args = opts.wrap !== undefined ? [...opts.wrap.slice(1), ...service] : service.slice(1)
  const child = spawn(command, args, { cwd: repoRoot, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString('utf8') })
  child.stderr.on('data', (d: Buffer) => { err += d.toString('utf8') })
  const exited = new Promise<number | string | null>((resolve) => { child.once('exit', (code, signal) => { resolve(code ?? signal) }) })
  const until = Date.now() + (opts.ms ?? 60_000)
  let url: string | undefined
  while (url === undefined) {
    const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out)
    if (m !== null) url = m[1]
    else if (child.exitCode !== null || child.signalCode !== null) throw new Error(`service exited before listening: ${err.slice(-2000)}`)
    else if (Date.now() > until) { child.kill('SIGKILL'); throw new Error(`service did not start: ${err.slice(-2000)}`) }
    else await sleep(50)
  }
  const port = Number(new URL(url).port)
  // Under a wrapper (strace), the signal goes to the service process itself, the wrapper's child.
  const target = (): number => {
    if (opts.wrap === undefined) return child.pid!
    try {
      const first = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0]
      return first !== undefined && first !== '' ? Number(first) : child.pid!
    } catch {
      return child.pid!
    }
  }
  const stop = async (ms = 60_000): Promise<number | string | null> => {
    if (child.exitCode !== null || child.signalCode !== null) return exited
    try { process.kill(target(), 'SIGTERM') } catch { child.kill('SIGTERM') }
    const timer = setTimeout(() => { child.kill('SIGKILL') }, ms)
    const code = await exited
    clearTimeout(timer)
    return code
  }
  return { url, port, process: child, pid: child.pid!, stdout: () => out, stderr: () => err, exited, stop }
}

/** Resident set size of a process, in MB (Linux /proc). */
export function rssMb (pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const m = /VmRSS:\s+(\d+) kB/.exec(status)
  return m === null ? Number.NaN : Number(m[1]) / 1024
}

export interface HealthReport { probes: number, failures: string[], maxMs: number, p99Ms: number, p50Ms: number }

/**
 * Probes GET /health every `everyMs` from a separate process (so the test's own work never
 * delays a probe); `stop` ends it and returns the counts and latencies.
 */
export function healthProber (url: string, everyMs = 250): { stop: () => Promise<HealthReport> } {
  const script = fileURLToPath(new URL('./health-prober.mjs', import.meta.url))
  const child = spawn(process.execPath, [script, url, String(everyMs)], { stdio: ['pipe', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString('utf8') })
  const exited = new Promise<void>((resolve) => { child.once('exit', () => { resolve() }) })
  return {
    stop: async () => {
      child.stdin.end()
      const timer = setTimeout(() => { child.kill('SIGKILL') }, 10_000)
      await exited
      clearTimeout(timer)
      return JSON.parse(out.trim() || '{"probes":0,"failures":["prober died"],"maxMs":0,"p99Ms":0,"p50Ms":0}') as HealthReport
    },
  }
}

export interface RawResult { status: number | undefined, head: string, all: string, closedBy: 'server' | 'client' | 'error', ms: number }

/**
 * Writes `parts` to a raw TCP connection, waiting `gapMs` between them, and reads until the
 * server closes (or `maxMs` passes: then the client closes). Returns the status line's code.
 */
export function rawRequest (port: number, parts: Array<string | Buffer>, gapMs: number, maxMs: number): Promise<RawResult> {
  return new Promise((resolve) => {
    const t0 = performance.now()
    const socket = connect(port, '127.0.0.1')
    let data = ''
    let done = false
    let timer: NodeJS.Timeout | undefined
    const finish = (closedBy: RawResult['closedBy']): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      clearTimeout(bound)
      socket.destroy()
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data)
      resolve({ status: m === null ? undefined : Number(m[1]), head: data.slice(0, 300), all: data, closedBy, ms: performance.now() - t0 })
    }
    const bound = setTimeout(() => { finish('client') }, maxMs)
    socket.on('data', (d: Buffer) => { data += d.toString('latin1') })
    socket.on('close', () => { finish('server') })
    socket.on('error', () => { finish('error') })
    let i = 0
    const next = (): void => {
      if (done || i >= parts.length) return
      socket.write(parts[i++]!, () => { timer = setTimeout(next, gapMs) })
    }
    socket.once('connect', next)
  })
}
