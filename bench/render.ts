/**
 * Re-renders results without re-running anything, optionally merging several runs:
 * `node --import tsx bench/render.ts OUT.json [IN.json ...]` reads the inputs (default: OUT
 * itself), keeps the last row for each input × tool × tokenizer, writes OUT and its SVG, and
 * prints the table and the target checks.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { addFloors, svg, table, type Row } from './report.js'
import { targets } from './targets.js'

interface Results { started: string, mode: string, machine: { cpus: number }, inputs: Array<{ name: string }>, rows: Row[], merged?: string[], [k: string]: unknown }

/** docsplit first, then its floors, then the peers (in the order they were run). */
const RANK = ['docsplit', 'docsplit-cli', 'linescan', 'gpt-tokenizer']
const rank = (r: Row): number => RANK.includes(r.tool) ? RANK.indexOf(r.tool) : RANK.length

const [out = new URL('./results/latest.json', import.meta.url).pathname, ...ins] = process.argv.slice(2)
const files = ins.length > 0 ? ins : [out]
const all = files.map(f => JSON.parse(readFileSync(f, 'utf8')) as Results)
const base = all[0] as Results
const rows = new Map<string, Row>()
const inputs = new Map<string, { name: string }>()
for (const r of all) {
  for (const row of r.rows) rows.set(`${row.input}\0${row.tool}\0${row.tokenizer}`, row)
  for (const i of r.inputs) inputs.set(i.name, i)
}
const order = [...inputs.keys()]
const merged: Results = {
  ...base,
  inputs: [...inputs.values()],
  rows: [...rows.values()].sort((a, b) => order.indexOf(a.input) - order.indexOf(b.input) || rank(a) - rank(b)),
  // Each run once, with the runs an input file was itself merged from.
  ...(files.length > 1 ? { merged: [...new Set(all.flatMap(r => r.merged ?? [`${r.started} ${String(r.mode)} ${JSON.stringify(r.args ?? [])}`]))] } : {}),
}
addFloors(merged.rows)
merged.targets = targets(merged.rows)
writeFileSync(out, JSON.stringify(merged, null, 2) + '\n')
writeFileSync(out.replace(/\.json$/, '') + '.svg', svg(merged.rows, `docsplit bench (${merged.mode}, ${merged.started.slice(0, 10)}, ${merged.machine.cpus} cores, budget 512)`))
console.log(table(merged.rows))
console.log()
for (const c of merged.targets as Array<{ pass?: boolean, target: string, measured: string }>) console.log(`${c.pass === undefined ? '?' : c.pass ? 'PASS' : 'FAIL'}  ${c.target}: ${c.measured}`)
