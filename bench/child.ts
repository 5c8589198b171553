/**
 * One measured run, in its own process: `node bench/peers/.child/child.mjs TOOL FILE KIND [TOKENIZER]
 * [--verify | --warm=N --repeat=M] [--lib=PATH]`, this file built by run.ts (so that tsx's 35 MB are not in any peak
 * RSS), or `node --import tsx bench/child.ts ...` when docsplit runs from source.
 *
 * - `docsplit`: the library (`--lib`: the build, or the source under tsx), `splitStream` over a
 *   file read stream; chunks are counted, not kept.
 * - a peer id (bench/peers/*.ts): the file is read and decoded in line-aligned windows of at most
 *   WINDOW bytes (a V8 string holds at most 512 MiB, so no whole-string API can take 2 GiB at once),
 *   each window is split, its chunks counted and dropped.
 * - a floor (`linescan`, `gpt-tokenizer`): reads the file itself.
 *
 * Timing covers reading, decoding and splitting. Set-up is before the clock for every tool: a
 * peer's create() (its modules, a tokenizer's tables), a floor's prepare(), and for docsplit a
 * split of the file's first line, which loads the parser and tokenizer it will use. With `--verify`, a
 * deterministic sample of the chunks (every k-th, about SAMPLE_BYTES of text in all) is recounted
 * with the exact o200k_base tokenizer after the clock stops; peak RSS is read before that recount.
 * With `--warm=N --repeat=M` (not with --verify): N untimed passes over the file after the set-up,
 * then M timed ones, each in `passes` (run.ts's warm figures).
 */
import { createReadStream, statSync } from 'node:fs'
import { open } from 'node:fs/promises'
import type { InputKind } from './inputs.js'
import type { Peer } from './peers/types.js'

const WINDOW = 64 * 1024 * 1024
const SAMPLE_BYTES = 16 * 1024 * 1024
const BUDGET = 512

export interface RunResult {
  bytes: number
  ms: number
  /** CPU time (user + system, all threads) over the same span: steadier than wall time on a shared machine. */
  cpuMs: number
  chunks: number
  /** docsplit only: the sum of its own token_count, chunks marked protected, and own count over budget. */
  ownTokens?: number
  protectedChunks?: number
  ownOver?: number
  /** Floors: lines or tokens found. */
  count?: number
  maxRss: number
  sample?: Sample
  /** With --warm: each timed pass after the untimed ones (ms and cpuMs are the last pass's). */
  passes?: Array<{ ms: number, cpuMs: number }>
}

export interface Sample { every: number, chunks: number, over: number, overProtected: number, tokens: number, max: number }

const [tool, file, kind, tokenizer = 'approx'] = process.argv.slice(2).filter(a => !a.startsWith('--')) as [string, string, InputKind, string?]
const verify = process.argv.includes('--verify')
/** The value of `--name=VALUE`, if given. */
const flagValue = (name: string): string | undefined => process.argv.find(a => a.startsWith(`--${name}=`))?.slice(name.length + 3)
const warmPasses = Number(flagValue('warm') ?? 0)
const repeat = Number(flagValue('repeat') ?? 0)
// Every pass would add its chunks to the one sample.
if (verify && warmPasses > 0) throw new Error('--verify and --warm do not go together: verify on a run of its own')
const size = statSync(file).size
const every = Math.max(1, Math.ceil(size / SAMPLE_BYTES))
// Sampled chunks are kept as copied bytes: a chunk's text is a V8 sliced string that would keep
// its whole parent string (a decoded read) alive and inflate the peak RSS being measured.
const sampled: Array<{ bytes: Buffer, protected: boolean }> = []
const emit = (o: unknown): void => { process.stdout.write(JSON.stringify(o) + '\n') }
const t0 = performance.now()
const progress = (bytes: number): void => emit({ progress: bytes, ms: Math.round(performance.now() - start) })
let start = t0
let cpu0 = process.cpuUsage()
const startClock = (): void => { start = performance.now(); cpu0 = process.cpuUsage() }

/**
 * The file as `createReadStream(path)` reads it (64 KiB pieces); with `report`, progress every
 * WINDOW bytes read (docsplit consumes as it reads). Not in larger reads: with 1 MiB pieces the
 * library's peak RSS grew from 113 MB on the 256 MB log to 135-148 MB on 2 GB, none of it
 * docsplit's: glibc raises its mmap threshold when the first such buffer is freed, so the later
 * ones come from its heap, which a longer run leaves more fragmented (with the threshold held
 * by MALLOC_MMAP_THRESHOLD_=131072: 113 and 116 MB; with 64 KiB reads: 99-101 and 102-104 MB).
 */
async function * counted (path: string, report: boolean): AsyncGenerator<Buffer> {
  let bytes = 0
  let next = WINDOW
  for await (const b of createReadStream(path) as AsyncIterable<Buffer>) {
    bytes += b.length
    if (report && bytes >= next) { progress(bytes); next += WINDOW }
    yield b
  }
}

/** One pass over the file: the tool's work, timed by the caller. */
type Pass = (report: boolean) => Promise<Omit<RunResult, 'bytes' | 'ms' | 'cpuMs' | 'maxRss'>>

async function docsplitPass (): Promise<Pass> {
  const lib = flagValue('lib')
  if (lib === undefined) throw new Error('--lib=PATH is required: the docsplit entry to measure')
  const { split, splitStream } = await import(lib) as typeof import('../index.js')
  // Set-up before the clock, as for the peers (their create()): the parser's and tokenizer's
  // modules and tables load on a split of the file's first line. A line the parser refuses
  // alone (a CSV row cut inside quotes) has still loaded them.
  await split(await firstLine(file), { filename: file, max_tokens: BUDGET, tokenizer }).catch(() => {})
  return async (report) => {
    let chunks = 0; let ownTokens = 0; let protectedChunks = 0; let ownOver = 0
    for await (const c of splitStream(counted(file, report), { filename: file, max_tokens: BUDGET, tokenizer })) {
      if (verify && chunks % every === 0) sampled.push({ bytes: Buffer.from(c.text), protected: c.protected })
      chunks++
      ownTokens += c.token_count
      if (c.protected) protectedChunks++
      else if (c.token_count > BUDGET) ownOver++
    }
    return { chunks, ownTokens, protectedChunks, ownOver }
  }
}

/** The file's first line (at most 1 KiB of it): a sample of the same format for the set-up. */
async function firstLine (path: string): Promise<string> {
  const handle = await open(path)
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(1024), 0, 1024, 0)
    const head = buffer.subarray(0, bytesRead)
    const nl = head.indexOf(10)
    // Cut at a line end, or before a character split by the 1 KiB read.
    return nl !== -1 ? head.subarray(0, nl + 1).toString('utf8') : new TextDecoder().decode(head, { stream: true })
  } finally {
    await handle.close()
  }
}

/** Line-aligned windows of the decoded file, each at most WINDOW bytes (unless one line is longer). */
async function * windows (path: string): AsyncGenerator<string> {
  const dec = new TextDecoder('utf-8')
  let parts: Buffer[] = []
  let held = 0
  // No read progress here: a window is read ahead of its split; peerPass reports split bytes.
  for await (const b of counted(path, false)) {
    parts.push(b); held += b.length
    if (held < WINDOW) continue
    const all = Buffer.concat(parts)
    const cut = all.lastIndexOf(10) + 1
    if (cut === 0) continue
    yield dec.decode(all.subarray(0, cut))
    parts = [all.subarray(cut)]; held = all.length - cut
  }
  if (held > 0) yield dec.decode(Buffer.concat(parts))
}

async function peerPass (peer: Peer): Promise<Pass> {
  if (peer.scan !== undefined) {
    await peer.prepare?.()
    const scan = peer.scan
    return async (report) => ({ chunks: 0, count: await scan(file, report ? progress : () => {}) })
  }
  const splitText = await (peer.create as NonNullable<Peer['create']>)(kind)
  return async (report) => {
    let chunks = 0
    let done = 0
    for await (const text of windows(file)) {
      const out = await splitText(text)
      for (const t of out) {
        if (verify && chunks % every === 0) sampled.push({ bytes: Buffer.from(t), protected: false })
        chunks++
      }
      done += Buffer.byteLength(text)
      if (report) progress(done)
    }
    return { chunks }
  }
}

/** Literal imports, so that the bench's build of this file (see run.ts) takes the peers in. */
const PEER_MODULES = [
  async () => await import('./peers/floors.js'),
  async () => await import('./peers/langchain.js'),
  async () => await import('./peers/chonkie.js'),
]

async function findPeer (id: string): Promise<Peer> {
  for (const load of PEER_MODULES) {
    const { peers } = await load()
    const p = peers.find(x => x.id === id)
    if (p !== undefined) return p
  }
  throw new Error(`unknown tool ${id}`)
}

const pass = tool === 'docsplit' ? await docsplitPass() : await peerPass(await findPeer(tool))
// With --warm=N: N untimed passes first (the JIT compiles the hot code, the heap grows), then
// --repeat passes timed, as in a process that has split before (a service, a pipeline).
for (let i = 0; i < warmPasses; i++) await pass(false)
const passes: Array<{ ms: number, cpuMs: number }> = []
let body: Awaited<ReturnType<Pass>> | undefined
for (let i = 0; i < Math.max(1, repeat); i++) {
  startClock()
  body = await pass(warmPasses === 0)
  const cpu = process.cpuUsage(cpu0)
  passes.push({ ms: performance.now() - start, cpuMs: (cpu.user + cpu.system) / 1000 })
}
const { ms, cpuMs } = passes[passes.length - 1]!
const maxRss = process.resourceUsage().maxRSS * 1024
const result: RunResult = { bytes: size, ms, cpuMs, maxRss, ...body!, ...(warmPasses > 0 ? { passes } : {}) }
// The timed result goes out first: the parent's time limit covers the work, not the recount.
emit({ result })
if (verify && sampled.length > 0) {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base')
  const opts = { disallowedSpecial: new Set<string>() }
  const s: Sample = { every, chunks: 0, over: 0, overProtected: 0, tokens: 0, max: 0 }
  for (const c of sampled) {
    const n = countTokens(c.bytes.toString('utf8'), opts)
    s.chunks++; s.tokens += n; s.max = Math.max(s.max, n)
    if (n > BUDGET) { if (c.protected) s.overProtected++; else s.over++ }
  }
  emit({ sample: s })
}
