/**
 * Markdown parser throughput and peak memory, on the corpus markdown concatenated to ~8 MB.
 *
 *   node --import tsx bench/markdown-parsers.ts [--mb 8] [--runs 3] [--micromark-mb 1]
 *
 * Each contender runs in its own child process so its peak RSS (`resourceUsage().maxRSS`) is
 * its own. Contenders:
 *   markdown-it-block   markdown-it's block parser alone (what the markdown plugin builds on)
 *   docsplit-markdown   the markdown plugin: buffer, block parse, events (counted, not kept)
 *   micromark-events    micromark + GFM: preprocess, parse, postprocess (events, no HTML)
 *   micromark-html      micromark + GFM to HTML (the usual use)
 *   docsplit-split      the whole split: split(text, { input_format: 'markdown', max_tokens: 512 })
 * micromark runs once on a smaller input (--micromark-mb, default 1 MB): at ~0.1-2 MB/s and
 * ~100-300x its input in memory it would take minutes and gigabytes on the full size.
 * Times are wall clock (best of --runs) and CPU time of that run; on a shared machine the CPU
 * time is the steadier figure.
 * micromark is not a dependency of docsplit: install it outside the repo to compare
 * (`mkdir /tmp/mdbench && cd /tmp/mdbench && npm init -y && npm i micromark micromark-extension-gfm`)
 * and point MICROMARK_DIR at that folder (default /tmp/mdbench). Without it those rows are skipped.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import MarkdownIt from 'markdown-it'
import markdown from '../plugins/formats/markdown/index.js'
import { openAtEnd } from './inputs.js'
import type { DocEvent } from '../core/events.js'
import type { ParserHandler } from '../core/types.js'
import { corpusFiles } from '../test/helpers/corpus.js'

const args = process.argv.slice(2)
const arg = (name: string, fallback: string): string => {
  const i = args.indexOf(name)
  return i === -1 ? fallback : args[i + 1] ?? fallback
}
const targetMB = Number(arg('--mb', '8'))
const runs = Number(arg('--runs', '3'))
const micromarkMB = Number(arg('--micromark-mb', '1'))
const micromarkDir = process.env.MICROMARK_DIR ?? '/tmp/mdbench'

/** Corpus files that close every block they open (see `openAtEnd` in inputs.ts). */
function selfContained (files: string[]): string[] {
  return files.filter((f) => openAtEnd(readFileSync(f, 'utf8')) === undefined)
}

function buildInput (mbWanted: number): string {
  const all = corpusFiles('markdown', ['.md', '.markdown'])
  if (all.length === 0) throw new Error('no corpus markdown found (../shared/corpus/markdown)')
  const files = selfContained(all)
  const parts: string[] = []
  let size = 0
  while (size < mbWanted * 1e6) {
    for (const f of files) {
      const t = readFileSync(f, 'utf8')
      parts.push(t, '\n\n')
      size += Buffer.byteLength(t) + 2
    }
  }
  return parts.join('')
}

type Runner = (text: string) => number | Promise<number>

async function runner (name: string): Promise<Runner | undefined> {
  if (name === 'markdown-it-block') {
    const md = new MarkdownIt('default', { html: true })
    return (text) => {
      const tokens: ReturnType<typeof md.parse> = []
      md.block.parse(text, md, {}, tokens)
      return tokens.length
    }
  }
  if (name === 'docsplit-split') {
    try {
      const lib = await import('../index.js') as { split: (text: string, options: Record<string, unknown>) => Promise<{ chunks: unknown[] }> }
      await lib.split('# probe\n\ntext\n', { input_format: 'markdown', max_tokens: 512 })
      return async (text) => (await lib.split(text, { input_format: 'markdown', max_tokens: 512 })).chunks.length
    } catch (err) {
      process.stderr.write(`docsplit-split unavailable: ${(err as Error).message}\n`)
      return undefined
    }
  }
  if (name === 'docsplit-markdown') {
    return async (text) => {
      let n = 0
      const handler = await markdown.create({
        options: {} as never,
        emit: (_e: DocEvent) => { n++ },
        fail: (code, message) => { throw new Error(`${code}: ${message}`) },
      }) as ParserHandler<string>
      for (let i = 0; i < text.length; i += 65536) handler.write(text.slice(i, i + 65536))
      handler.end()
      return n
    }
  }
  const entry = join(micromarkDir, 'node_modules/micromark/index.js')
  const gfmEntry = join(micromarkDir, 'node_modules/micromark-extension-gfm/index.js')
  if (!existsSync(entry) || !existsSync(gfmEntry)) return undefined
  const mm = await import(pathToFileURL(entry).href) as {
    micromark: (value: string, options?: unknown) => string
    parse: (options?: unknown) => { document: () => { write: (chunks: unknown[]) => unknown[] } }
    preprocess: () => (value: string, encoding: undefined, end: boolean) => unknown[]
    postprocess: (events: unknown[]) => unknown[]
  }
  const gfmModule = await import(pathToFileURL(gfmEntry).href) as { gfm: () => unknown, gfmHtml: () => unknown }
  if (name === 'micromark-events') {
    return (text) => mm.postprocess(mm.parse({ extensions: [gfmModule.gfm()] }).document().write(mm.preprocess()(text, undefined, true))).length
  }
  if (name === 'micromark-html') {
    return (text) => mm.micromark(text, { allowDangerousHtml: true, extensions: [gfmModule.gfm()], htmlExtensions: [gfmModule.gfmHtml()] }).length
  }
  throw new Error(`unknown contender ${name}`)
}

interface Result { name: string, mb: number, runs: number, bestMs: number, cpuMs: number, mbPerS: number, cpuMBPerS: number, baseRssMB: number, peakRssMB: number, peakOverInput: number, out: number }

async function child (name: string): Promise<void> {
  const text = buildInput(name.startsWith('micromark') ? micromarkMB : targetMB)
  const mb = Buffer.byteLength(text) / 1e6
  const run = await runner(name)
  if (run === undefined) {
    process.stdout.write(JSON.stringify({ name, skipped: name === 'docsplit-split' ? 'the pipeline cannot split markdown yet' : `micromark not found under ${micromarkDir}` }) + '\n')
    return
  }
  globalThis.gc?.()
  const baseRss = process.memoryUsage().rss
  // micromark is slow: one timed run is enough for it.
  const n = name.startsWith('micromark') ? 1 : runs
  let best = Infinity
  let bestCpu = Infinity
  let out = 0
  let peak = 0
  for (let i = 0; i < n; i++) {
    const c0 = process.cpuUsage()
    const t0 = performance.now()
    out = await run(text)
    const ms = performance.now() - t0
    const c1 = process.cpuUsage(c0)
    if (ms < best) best = ms
    bestCpu = Math.min(bestCpu, (c1.user + c1.system) / 1000)
    // Peak RSS of the first (cold) run: later runs add the garbage of earlier ones.
    if (i === 0) peak = process.resourceUsage().maxRSS * 1024
  }
  const result: Result = {
    name,
    mb: round(mb),
    runs: n,
    bestMs: Math.round(best),
    cpuMs: Math.round(bestCpu),
    mbPerS: round(mb / (best / 1000)),
    cpuMBPerS: round(mb / (bestCpu / 1000)),
    baseRssMB: round(baseRss / 1e6),
    peakRssMB: round(peak / 1e6),
    peakOverInput: round((peak - baseRss) / Buffer.byteLength(text)),
    out,
  }
  process.stdout.write(JSON.stringify(result) + '\n')
}

function round (x: number): number {
  return Math.round(x * 100) / 100
}

async function main (): Promise<void> {
  const childIndex = args.indexOf('--child')
  if (childIndex !== -1) {
    await child(args[childIndex + 1] as string)
    return
  }
  const self = fileURLToPath(import.meta.url)
  const names = ['markdown-it-block', 'docsplit-markdown', 'docsplit-split', 'micromark-events', 'micromark-html']
  const all = corpusFiles('markdown', ['.md', '.markdown'])
  const used = selfContained(all)
  const left = all.filter((f) => !used.includes(f)).map((f) => f.split('/').pop())
  console.log(`markdown parsers on ${used.length} corpus markdown files concatenated to ~${targetMB} MB (node ${process.version})` +
    (left.length > 0 ? `; left out (end inside an open block): ${left.join(', ')}` : ''))
  for (const name of names) {
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', self, '--child', name, '--mb', String(targetMB), '--runs', String(runs), '--micromark-mb', String(micromarkMB)], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    })
    const line = r.stdout.trim().split('\n').pop() ?? ''
    if (r.status !== 0 || line === '') {
      console.log(`${name}: failed (${r.stderr.trim().split('\n').slice(-3).join(' | ')})`)
      continue
    }
    const res = JSON.parse(line) as Result & { skipped?: string }
    if (res.skipped !== undefined) {
      console.log(`${name.padEnd(18)} skipped: ${res.skipped}`)
      continue
    }
    console.log(`${name.padEnd(18)} ${String(res.mbPerS).padStart(7)} MB/s wall (${res.cpuMBPerS} MB/s CPU)  best ${res.bestMs} ms of ${res.runs}  ` +
      `peak RSS ${res.peakRssMB} MB (base ${res.baseRssMB} MB, +${res.peakOverInput}x input of ${res.mb} MB)`)
  }
}

await main()
