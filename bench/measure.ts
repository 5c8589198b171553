/**
 * Runs one measurement in a child process: a wall-clock timeout that kills the whole process
 * group, and the child's peak RSS from `/usr/bin/time -v` (GNU time) when present, else from the
 * child's own `process.resourceUsage().maxRSS` reported in its result line.
 *
 * Children print JSON lines on stdout: `{"progress": bytes, "ms": n}` while they work (so a run
 * stopped at the timeout still says how far it got), one `{"result": ...}` line when the timed
 * work is done (the time limit stops there), then optionally `{"sample": ...}` (verification).
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'

const GNU_TIME = '/usr/bin/time'
export const hasGnuTime = existsSync(GNU_TIME)

export interface ChildResult<R> {
  ok: boolean
  timedOut: boolean
  exitCode: number | null
  signal: string | null
  wallMs: number
  /** Peak resident set size in bytes, or undefined when unknown. */
  peakRss?: number
  /** User + system CPU seconds of the whole child, from GNU time. */
  cpuSeconds?: number
  result?: R
  /** Last progress line: bytes done after `ms` milliseconds of work. */
  progress?: { bytes: number, ms: number }
  stderr: string
}

export interface RunOptions {
  timeoutMs: number
  cwd?: string
  env?: NodeJS.ProcessEnv
  /** Redirect the child's stdout to /dev/null (CLI runs) instead of parsing it. */
  discardStdout?: boolean
  /** Once the result line is in, the time the child has left for its verification (default 10 min). */
  afterResultMs?: number
}

export async function runChild<R> (command: string, args: string[], opts: RunOptions): Promise<ChildResult<R>> {
  const [cmd, argv] = hasGnuTime ? [GNU_TIME, ['-v', command, ...args]] : [command, args]
  const t0 = performance.now()
  const child = spawn(cmd, argv, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    detached: true, // its own process group, so a timeout kills node and /usr/bin/time together
    stdio: ['ignore', opts.discardStdout === true ? 'ignore' : 'pipe', 'pipe'],
  })
  let timedOut = false
  const kill = (): void => {
    timedOut = result === undefined
    try { process.kill(-(child.pid as number), 'SIGKILL') } catch { /* already gone */ }
  }
  let timer = setTimeout(kill, opts.timeoutMs)
  let stderr = ''
  let result: R | undefined
  let progress: ChildResult<R>['progress']
  let maxRss: number | undefined
  let pending = ''
  child.stdout?.setEncoding('utf8').on('data', (s: string) => {
    pending += s
    let nl
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl)
      pending = pending.slice(nl + 1)
      if (!line.startsWith('{')) continue
      try {
        const msg = JSON.parse(line) as { result?: R & { maxRss?: number }, sample?: unknown, progress?: number, ms?: number }
        if (msg.result !== undefined) {
          result = msg.result; maxRss = msg.result.maxRss
          clearTimeout(timer)
          timer = setTimeout(kill, opts.afterResultMs ?? 10 * 60 * 1000)
        }
        if (msg.sample !== undefined && result !== undefined) (result as { sample?: unknown }).sample = msg.sample
        if (msg.progress !== undefined) progress = { bytes: msg.progress, ms: msg.ms ?? 0 }
      } catch { /* not ours */ }
    }
  })
  child.stderr?.setEncoding('utf8').on('data', (s: string) => { stderr = (stderr + s).slice(-64 * 1024) })
  const [exitCode, signal] = await new Promise<[number | null, string | null]>(resolve => child.on('close', (c, s) => resolve([c, s])))
  clearTimeout(timer)
  const wallMs = performance.now() - t0
  // The child's own figure (read before any verification work) wins; else GNU time's, else the wrapper's.
  let peakRss = maxRss
  const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr) ?? /docsplit-bench maxRSS kB: (\d+)/.exec(stderr)
  if (peakRss === undefined && m !== null) peakRss = Number(m[1]) * 1024
  const user = /User time \(seconds\): ([\d.]+)/.exec(stderr); const sys = /System time \(seconds\): ([\d.]+)/.exec(stderr)
  const cpuSeconds = user !== null && sys !== null ? Number(user[1]) + Number(sys[1]) : undefined
  // GNU time reports a killed child as "Command terminated by signal 9" and exits non-zero.
  const oom = /heap out of memory|Allocation failed/.test(stderr)
  return {
    // A child killed during its verification (after the result line) still has a valid result.
    ok: !timedOut && !oom && (opts.discardStdout === true ? exitCode === 0 : result !== undefined),
    timedOut,
    exitCode,
    signal,
    wallMs,
    peakRss,
    cpuSeconds,
    result,
    progress,
    stderr: stderr.replace(/\tCommand being timed:[\s\S]*$/, '').trim(),
  }
}

export const median = (xs: number[]): number => {
  const s = xs.slice().sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid] as number : ((s[mid - 1] as number) + (s[mid] as number)) / 2
}
