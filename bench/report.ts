/**
 * Turns measured rows into the stdout table, `bench/results/latest.json` and a hand-written SVG
 * bar chart (`bench/results/latest.svg`, MB/s per tool per input, log scale).
 */
import type { Budget } from './peers/types.js'

export type Status = 'ok' | 'timeout' | 'failed' | 'skipped'

export interface Row {
  input: string
  kind: string
  bytes: number
  /** `docsplit`, `docsplit-cli`, or a peer id. */
  tool: string
  label: string
  /** docsplit's tokenizer, or what a peer's chunk size counts. */
  tokenizer: string
  status: Status
  /**
   * Timed runs behind the figures, each a process of its own, after a verifying run unless `warm`
   * is false (then the verifying run is the one measured: `1 cold` in the table).
   */
  runs: number
  warm: boolean
  /** Median MB/s (MB = 10^6 bytes) over the timed runs; for a stopped run, an upper bound. */
  mbps?: number
  /** MB per CPU-second (user + system): steadier than wall time when the machine is shared. */
  cpuMbps?: number
  /**
   * The same, median of the timed passes of one process after untimed ones (run.ts, WARM_PASSES):
   * the speed of a process that has split before (a service, a pipeline), where the others are
   * each a fresh process's first pass.
   */
  warmMbps?: number
  /** The warm passes' MB per CPU-second. */
  warmCpuMbps?: number
  /** Why the warm passes gave no figure (they failed, or ran out of time). */
  warmError?: string
  medianMs?: number
  /** For a stopped run: it ran this long (a lower bound on its time) and had done `doneBytes`. */
  stoppedAfterMs?: number
  doneBytes?: number
  /** For a stopped run: MB/s over the part it finished, when it reported progress. */
  partialMbps?: number
  /** The median of the timed runs' peak RSS, and their lowest and highest when there were several. */
  peakRss?: number
  peakRssRange?: [number, number]
  chunks?: number
  /** docsplit: mean own token_count / 512. */
  fill?: number
  /** Mean o200k tokens / 512 over the recounted sample (every `sampleEvery`-th chunk). */
  fillO200k?: number
  sampleEvery?: number
  sampleChunks?: number
  /** Chunks over 512 o200k tokens in the sample, not counting docsplit's `protected` records. */
  over?: number
  /** The largest o200k count in the sample (protected records included). */
  maxO200k?: number
  overProtected?: number
  protectedChunks?: number
  /** docsplit: chunks whose own token_count is over budget and that are not protected. */
  ownOver?: number
  /** MB/s as a fraction of this input's floor (`floor` names it). */
  ofFloor?: number
  floor?: string
  error?: string
  /** 1-minute load average when the row's first run started (the machine is shared). */
  load1?: number
}

export const floorFor = (b: Budget | string): string => (b === 'chars' || b === 'approx') ? 'linescan' : 'gpt-tokenizer'

/**
 * Sets each row's speed as a fraction of its input's floor: per CPU-second when both have that
 * figure (the machine may be shared, and the two ran at different times), else wall-clock.
 */
export function addFloors (rows: Row[]): void {
  for (const r of rows) {
    delete r.ofFloor; delete r.floor
    if (r.mbps === undefined || r.tool === 'linescan' || r.tool === 'gpt-tokenizer') continue
    const floorTool = floorFor(r.tokenizer)
    const f = rows.find(x => x.input === r.input && x.tool === floorTool)
    if (r.cpuMbps !== undefined && f?.cpuMbps !== undefined) { r.ofFloor = r.cpuMbps / f.cpuMbps; r.floor = floorTool; continue }
    const fm = f?.status === 'ok' ? f.mbps : f?.partialMbps
    if (fm !== undefined) { r.ofFloor = r.mbps / fm; r.floor = floorTool }
  }
}

const MB = 1e6
const fmt = (n: number | undefined, d = 1): string => n === undefined || !Number.isFinite(n) ? '' : n >= 100 ? n.toFixed(0) : n.toFixed(d)
const pct = (n: number | undefined): string => n === undefined ? '' : `${(n * 100).toFixed(n < 0.1 ? 1 : 0)}%`

export function speed (r: Row): string {
  if (r.status === 'timeout') return `< ${fmt(r.mbps, 2)} (stopped > ${fmt((r.stoppedAfterMs ?? 0) / 1000, 0)} s${r.partialMbps !== undefined ? `; ${fmt(r.partialMbps, 2)} on ${fmt((r.doneBytes ?? 0) / MB, 0)} MB` : ''})`
  if (r.status === 'failed') return `failed${r.error !== undefined ? `: ${r.error.slice(0, 40)}` : ''}`
  if (r.status === 'skipped') return 'skipped'
  return fmt(r.mbps, 2)
}

function violations (r: Row): string {
  if (r.over === undefined) return ''
  const sampled = r.sampleEvery !== undefined && r.sampleEvery > 1 ? ` (1/${r.sampleEvery} sampled)` : ''
  return `${r.over} / ${r.sampleChunks ?? 0}${sampled}`
}

export function table (rows: Row[]): string {
  const head = ['input', 'tool', 'tokens', 'MB/s', 'MB/cpu-s', 'warm MB/s (cpu-s)', 'of floor', 'peak RSS MB', 'chunks', 'fill', 'fill o200k', 'over 512 o200k', 'protected', 'runs']
  const body = rows.map(r => [
    r.input, r.label, r.tokenizer, speed(r), fmt(r.cpuMbps, 2), r.warmMbps !== undefined ? `${fmt(r.warmMbps, 2)} (${fmt(r.warmCpuMbps, 2)})` : '', r.ofFloor !== undefined ? `${pct(r.ofFloor)} ${r.floor ?? ''}` : '',
    r.peakRss !== undefined ? fmt(r.peakRss / 2 ** 20, 0) : '', r.chunks?.toString() ?? '', pct(r.fill), pct(r.fillO200k),
    violations(r), r.protectedChunks?.toString() ?? '', r.status === 'ok' ? `${r.runs}${r.warm ? '' : ' cold'}` : '',
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map(b => (b[i] as string).length)))
  const line = (cells: string[]): string => '| ' + cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ') + ' |'
  return [line(head), '|' + widths.map(w => '-'.repeat(w + 2)).join('|') + '|', ...body.map(line)].join('\n')
}

// -------------------------------------------------------------------------------------- svg

const COLORS: Record<string, string> = {
  docsplit: '#1f77b4', 'docsplit-cli': '#6baed6', linescan: '#bbbbbb', 'gpt-tokenizer': '#888888',
}
const PEER_COLORS = ['#d62728', '#ff9896', '#2ca02c', '#98df8a', '#9467bd', '#c5b0d5', '#8c564b', '#e377c2']
const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** Horizontal bars, one group per input, log-scale MB/s; stopped runs are hatched (an upper bound). */
export function svg (rows: Row[], title: string): string {
  const shown = rows.filter(r => r.mbps !== undefined && r.mbps > 0 && r.tool !== 'docsplit-cli')
  const series = [...new Set(shown.map(r => `${r.label} · ${r.tokenizer}`))]
  const color = new Map<string, string>()
  let p = 0
  for (const s of series) {
    const tool = shown.find(r => `${r.label} · ${r.tokenizer}` === s)?.tool ?? ''
    const base = COLORS[tool]
    color.set(s, base !== undefined ? (tool === 'docsplit' && s.endsWith('approx') ? '#08519c' : base) : PEER_COLORS[p++ % PEER_COLORS.length] as string)
  }
  const inputs = [...new Set(shown.map(r => r.input))]
  const barH = 9; const gap = 10; const left = 120; const plotW = 520; const top = 56
  const min = 0.01; const max = Math.max(1000, ...shown.map(r => r.mbps as number))
  const x = (v: number): number => left + plotW * (Math.log10(Math.max(v, min)) - Math.log10(min)) / (Math.log10(max) - Math.log10(min))
  const parts: string[] = []
  let y = top
  for (const input of inputs) {
    const group = shown.filter(r => r.input === input)
    parts.push(`<text x="${left - 8}" y="${y + (group.length * barH) / 2 + 4}" text-anchor="end" font-weight="bold">${esc(input)}</text>`)
    for (const r of group) {
      const s = `${r.label} · ${r.tokenizer}`
      const w = Math.max(1, x(r.mbps as number) - left)
      const stopped = r.status === 'timeout'
      parts.push(`<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barH - 1}" fill="${color.get(s) ?? '#000'}"${stopped ? ' fill-opacity="0.35"' : ''}><title>${esc(`${s}: ${speed(r)} MB/s`)}</title></rect>`)
      if (stopped) parts.push(`<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${barH - 1}" fill="url(#hatch)"/>`)
      parts.push(`<text x="${(left + w + 3).toFixed(1)}" y="${y + barH - 2}" font-size="8">${esc(r.status === 'timeout' ? `< ${fmt(r.mbps, 2)}` : fmt(r.mbps, 2))}</text>`)
      y += barH
    }
    y += gap
  }
  const axis: string[] = []
  for (let v = min; v <= max * 1.0001; v *= 10) {
    axis.push(`<line x1="${x(v).toFixed(1)}" y1="${top - 4}" x2="${x(v).toFixed(1)}" y2="${y}" stroke="#ddd"/>`)
    axis.push(`<text x="${x(v).toFixed(1)}" y="${top - 8}" text-anchor="middle" font-size="9">${v >= 1 ? v.toFixed(0) : v}</text>`)
  }
  const legendX = left + plotW + 60
  const legend = series.map((s, i) => `<rect x="${legendX}" y="${top + i * 14}" width="10" height="10" fill="${color.get(s)}"/><text x="${legendX + 14}" y="${top + i * 14 + 9}" font-size="9">${esc(s)}</text>`)
  const height = Math.max(y, top + series.length * 14) + 20
  const width = legendX + 260
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="10">
<defs><pattern id="hatch" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="4" stroke="#fff" stroke-width="1.5"/></pattern></defs>
<rect width="100%" height="100%" fill="#fff"/>
<text x="${left}" y="18" font-weight="bold" font-size="12">${esc(title)}</text>
<text x="${left}" y="32" font-size="9">MB/s, log scale (higher is better); hatched: stopped at the time limit, bar is an upper bound</text>
${axis.join('\n')}
${parts.join('\n')}
${legend.join('\n')}
</svg>
`
}

export const mb = (bytes: number): string => `${(bytes / MB).toFixed(0)} MB`
