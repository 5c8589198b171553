/**
 * Benchmark inputs, generated deterministically (seeded PRNG) from the shared corpus and local
 * sources into a temp folder outside the repo. Large files are stream-written in 1 MiB blocks, so
 * a 2 GiB log never sits in memory. Nothing generated here is ever written into the repo.
 */
import MarkdownIt from 'markdown-it'
import { prng } from './lib/prng.js'
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = resolve(fileURLToPath(new URL('.', import.meta.url)), '..')
const corpus = resolve(repo, '../shared/corpus')
const MiB = 1024 * 1024

export type InputKind = 'log' | 'markdown' | 'code-ts' | 'code-py' | 'csv'

export interface InputSpec { name: string, kind: InputKind, bytes: number, ext: string }
export interface Input extends InputSpec { path: string, sources: string }


const pick = <T>(rnd: () => number, xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T

function walk (root: string, keep: (path: string) => boolean, out: string[] = []): string[] {
  if (!existsSync(root)) return out
  for (const name of readdirSync(root).sort()) {
    const full = join(root, name)
    const st = statSync(full, { throwIfNoEntry: false })
    if (st === undefined) continue
    if (st.isDirectory()) { if (name !== '__pycache__' && name !== 'test' && name !== 'tests') walk(full, keep, out) } else if (keep(full)) out.push(full)
  }
  return out
}

/** Writes text pieces to a file through a 1 MiB buffer until `bytes` bytes are written (cut at a piece boundary). */
class SizedWriter {
  private readonly fd: number
  private buf = Buffer.allocUnsafe(2 * MiB)
  private used = 0
  written = 0
  constructor (path: string, readonly limit: number) { this.fd = openSync(path, 'w') }
  get full (): boolean { return this.written + this.used >= this.limit }
  write (piece: string): void {
    const n = Buffer.byteLength(piece)
    if (this.used + n > this.buf.length) this.flush()
    if (n > this.buf.length) { writeSync(this.fd, piece); this.written += n; return }
    this.used += this.buf.write(piece, this.used)
  }
  private flush (): void {
    if (this.used > 0) writeSync(this.fd, this.buf, 0, this.used)
    this.written += this.used
    this.used = 0
  }
  close (): number { this.flush(); closeSync(this.fd); return this.written }
}

// ---------------------------------------------------------------------------------------- logs

const EXCEPTIONS = ['java.lang.NullPointerException', 'java.io.IOException: Connection reset by peer',
  'java.lang.IllegalStateException: Container not ready', 'java.util.concurrent.TimeoutException',
  'org.apache.hadoop.ipc.RemoteException: File does not exist', 'java.net.SocketTimeoutException: Read timed out',
  'java.lang.OutOfMemoryError: Java heap space', 'org.apache.zookeeper.KeeperException$ConnectionLossException']
const PACKAGES = ['org.apache.hadoop.hdfs.server.datanode', 'org.apache.hadoop.mapreduce.v2.app', 'org.apache.spark.scheduler',
  'org.apache.zookeeper.server.quorum', 'com.myproject.module', 'io.netty.channel.nio', 'java.util.concurrent', 'sun.nio.ch']
const CLASSES = ['DataXceiver', 'MRAppMaster', 'TaskSetManager', 'QuorumCnxManager', 'MyProject', 'NioEventLoop', 'ThreadPoolExecutor', 'SocketChannelImpl', 'RpcServer', 'BlockReceiver']
const METHODS = ['run', 'call', 'process', 'handle', 'receiveBlock', 'readFully', 'doRead', 'invoke', 'submit', 'awaitTermination']

/** A multi-line Java stack trace (indented frames, `Caused by:` sections, `... N more`). */
function stackTrace (rnd: () => number): string {
  const lines: string[] = []
  const sections = 1 + Math.floor(rnd() * rnd() * 3)
  for (let s = 0; s < sections; s++) {
    lines.push((s === 0 ? 'Exception in thread "main" ' : 'Caused by: ') + pick(rnd, EXCEPTIONS))
    // Mostly short traces, sometimes very long ones (a record over budget: docsplit keeps it whole, `protected`).
    const depth = rnd() < 0.01 ? 150 + Math.floor(rnd() * 300) : 3 + Math.floor(rnd() * 25)
    for (let f = 0; f < depth; f++) {
      const cls = pick(rnd, CLASSES)
      lines.push(`\tat ${pick(rnd, PACKAGES)}.${cls}.${pick(rnd, METHODS)}(${cls}.java:${1 + Math.floor(rnd() * 900)})`)
    }
    if (s > 0) lines.push(`\t... ${1 + Math.floor(rnd() * 40)} more`)
  }
  return lines.join('\n') + '\n'
}

const LEVELS = ['INFO', 'INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'ERROR']

/**
 * An aggregated log: each line of the corpus loghub logs is re-stamped with one
 * timestamp format and tagged with its source, as a collector would write it, so a record starts
 * with a timestamp; 2% of the ERROR lines carry a Java stack trace as continuation lines.
 */
function writeLog (path: string, bytes: number, rnd: () => number): string {
  const files = walk(join(corpus, 'log/loghub'), p => p.endsWith('.log'))
  const sources = files.map(f => ({
    tag: f.split('/').pop()!.replace(/(_2k)?\.log$/, ''),
    lines: readFileSync(f, 'utf8').split(/\r?\n/).filter(l => l.trim() !== '' && !/^\s/.test(l)),
  }))
  const w = new SizedWriter(path, bytes)
  let t = Date.UTC(2026, 0, 1)
  while (!w.full) {
    const src = pick(rnd, sources)
    let i = Math.floor(rnd() * src.lines.length)
    const run = 10 + Math.floor(rnd() * 200)
    for (let k = 0; k < run && !w.full; k++, i = (i + 1) % src.lines.length) {
      t += Math.floor(rnd() * 50)
      const level = pick(rnd, LEVELS)
      w.write(`${new Date(t).toISOString()} ${level} [${src.tag}] ${src.lines[i] as string}\n`)
      if (level === 'ERROR' && rnd() < 0.15) w.write(stackTrace(rnd))
    }
  }
  w.close()
  return `${files.length} loghub logs from the corpus, re-stamped, with Java stack traces`
}

// ------------------------------------------------------------------------ documents and code

/** Concatenates whole files in a seeded order (reshuffled each pass) until the size is reached. */
function writeConcat (path: string, bytes: number, rnd: () => number, files: string[], separator: string, prepare = (text: string) => text): void {
  if (files.length === 0) throw new Error(`no source files for ${path}`)
  const w = new SizedWriter(path, bytes)
  while (!w.full) {
    const order = files.slice()
    for (let i = order.length - 1; i > 0; i--) { const j = Math.floor(rnd() * (i + 1)); [order[i], order[j]] = [order[j] as string, order[i] as string] }
    for (const f of order) {
      if (w.full) break
      w.write(prepare(readFileSync(f, 'utf8')))
      w.write(separator)
    }
  }
  w.close()
}

function utf8Files (files: string[], maxBytes: number): string[] {
  return files.filter(f => {
    const st = statSync(f)
    if (st.size === 0 || st.size > maxBytes) return false
    const b = readFileSync(f)
    return !b.includes(0) && Buffer.from(b.toString('utf8'), 'utf8').equals(b)
  })
}

const markdownIt = new MarkdownIt()

/**
 * What a markdown text leaves open at its end: undefined when a heading after it would be a
 * heading, the fence's markup when a code fence swallows it, '' for any other open block. A
 * corpus file may end inside a fence: gfm-extensions-tests.md opens one with a line of 200
 * tildes, as the spec allows. Concatenated as is, it would swallow every file after it, and the
 * "markdown" input would be one code block.
 */
export function openAtEnd (text: string): string | undefined {
  const probe = markdownIt.parse(`${text}\n\n# probe\n`, {})
  if (probe.at(-3)?.type === 'heading_open') return undefined
  const last = probe.at(-1)
  return last?.type === 'fence' ? last.markup : ''
}

/** Closes the fence a file ends inside, if any. */
function closeTrailingFence (text: string): string {
  const fence = openAtEnd(text)
  return fence === undefined || fence === '' ? text : `${text}\n${fence}\n`
}

// ----------------------------------------------------------------------------------------- csv

/** Splits CSV text into records (RFC 4180: newlines inside quotes belong to the field). */
export function csvRecords (text: string): string[] {
  const out: string[] = []
  let start = 0
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) quoted = !quoted
    else if (c === 10 && !quoted) { out.push(text.slice(start, i + 1)); start = i + 1 }
  }
  if (start < text.length) out.push(text.slice(start) + '\n')
  return out
}

function writeCsv (path: string, bytes: number, rnd: () => number): string {
  const src = join(corpus, 'csv/country-codes.csv')
  const [header, ...rows] = csvRecords(readFileSync(src, 'utf8').replace(/\r\n/g, '\n'))
  const w = new SizedWriter(path, bytes)
  w.write(header as string)
  while (!w.full) w.write(pick(rnd, rows))
  w.close()
  return `header + random rows of csv/country-codes.csv (${rows.length} rows, ${(header as string).split(',').length} columns)`
}

// --------------------------------------------------------------------------------------- specs

export function specs (quick: boolean, only?: Set<string>): InputSpec[] {
  const all: InputSpec[] = quick
    ? [
        { name: 'log-2MB', kind: 'log', bytes: 2 * MiB, ext: 'log' },
        { name: 'markdown-1MB', kind: 'markdown', bytes: 1 * MiB, ext: 'md' },
        { name: 'code-ts-1MB', kind: 'code-ts', bytes: 1 * MiB, ext: 'ts' },
        { name: 'csv-2MB', kind: 'csv', bytes: 2 * MiB, ext: 'csv' },
      ]
    : [
        { name: 'log-64MB', kind: 'log', bytes: 64 * MiB, ext: 'log' },
        { name: 'log-256MB', kind: 'log', bytes: 256 * MiB, ext: 'log' },
        { name: 'log-2GB', kind: 'log', bytes: 2048 * MiB, ext: 'log' },
        { name: 'markdown-8MB', kind: 'markdown', bytes: 8 * MiB, ext: 'md' },
        { name: 'code-ts-10MB', kind: 'code-ts', bytes: 10 * MiB, ext: 'ts' },
        { name: 'code-py-10MB', kind: 'code-py', bytes: 10 * MiB, ext: 'py' },
        { name: 'csv-64MB', kind: 'csv', bytes: 64 * MiB, ext: 'csv' },
      ]
  return only === undefined ? all : all.filter(s => only.has(s.name) || only.has(s.kind))
}

const pythonRoot = (): string | undefined =>
  ['/usr/lib'].flatMap(d => existsSync(d) ? readdirSync(d).filter(n => /^python3\.\d+$/.test(n)).sort().map(n => join(d, n)) : []).pop()

/** Generates one input into `dir` (seeded by its name, so the same spec gives the same bytes). */
export function generate (dir: string, spec: InputSpec, seed = 42): Input | undefined {
  mkdirSync(dir, { recursive: true })
  const path = join(dir, `${spec.name}.${spec.ext}`)
  let h = seed
  for (const c of spec.name) h = Math.imul(h ^ c.charCodeAt(0), 16777619)
  const rnd = prng(h)
  let sources: string
  switch (spec.kind) {
    case 'log': sources = writeLog(path, spec.bytes, rnd); break
    case 'csv': sources = writeCsv(path, spec.bytes, rnd); break
    case 'markdown': {
      const files = walk(join(corpus, 'markdown'), p => p.endsWith('.md'))
      writeConcat(path, spec.bytes, rnd, files, '\n\n', closeTrailingFence)
      sources = `${files.length} corpus markdown files, concatenated in seeded order`
      break
    }
    case 'code-ts': {
      const files = utf8Files(walk(join(repo, 'node_modules'), p => p.endsWith('.ts')), 256 * 1024)
      writeConcat(path, spec.bytes, rnd, files, '\n')
      sources = `${files.length} .ts/.d.ts files from node_modules, concatenated in seeded order`
      break
    }
    case 'code-py': {
      const root = pythonRoot()
      if (root === undefined) return undefined
      const files = utf8Files(walk(root, p => p.endsWith('.py')), 256 * 1024)
      writeConcat(path, spec.bytes, rnd, files, '\n')
      sources = `${files.length} .py files from ${root}, concatenated in seeded order`
      break
    }
  }
  return { ...spec, bytes: statSync(path).size, path, sources }
}
