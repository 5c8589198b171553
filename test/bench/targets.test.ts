/** The bench's target checks read the measured rows the way the issues state the targets. */
import t from 'tap'
import type { Row } from '../../bench/report.js'
import { targets } from '../../bench/targets.js'

const MiB = 2 ** 20
const row = (input: string, tool: string, tokenizer: string, mbps: number, extra: Partial<Row> = {}): Row => ({
  input, kind: input.split('-')[0]!, bytes: 8 * MiB, tool, label: tool, tokenizer, status: 'ok', runs: 3, warm: true, mbps, ...extra,
})
const find = (checks: ReturnType<typeof targets>, part: string): boolean | undefined => checks.find((c) => c.target.includes(part))?.pass

t.test('markdown: o200k against the tokenizer in wall time, the CLI speed and both peak RSS', async (t) => {
  const rows = [
    row('markdown-8MB', 'docsplit', 'o200k_base', 6.0, { cpuMbps: 3.2 }),
    row('markdown-8MB', 'gpt-tokenizer', 'o200k', 8.0, { cpuMbps: 7.5 }),
    row('markdown-8MB', 'docsplit', 'approx', 17, { peakRss: 170 * MiB }),
    row('markdown-8MB', 'docsplit-cli', 'approx', 12, { peakRss: 110 * MiB }),
  ]
  const checks = targets(rows)
  t.equal(find(checks, "0.7x the tokenizer's count"), true, '6.0 / 8.0 = 0.75x in wall time passes, though 0.43x in CPU time')
  t.equal(find(checks, 'docsplit-cli approx ≥ 15 MB/s'), false)
  t.equal(find(checks, 'docsplit approx peak RSS'), false, '170 MB is over 3 x 8 + 100')
  t.equal(find(checks, 'docsplit-cli approx peak RSS'), true)
  rows[0]!.mbps = 5.5
  t.equal(find(targets(rows), "0.7x the tokenizer's count"), false, '0.69x fails')
})

t.test('logs: two-core o200k against the tokenizer, and the CLI at 150 MB/s', async (t) => {
  const rows = [
    row('log-64MB', 'docsplit', 'o200k_base', 30),
    row('log-64MB', 'gpt-tokenizer', 'o200k', 18),
    row('log-64MB', 'docsplit-cli', 'approx', 151),
  ]
  const checks = targets(rows)
  t.equal(find(checks, "1.6x the tokenizer's single-core count"), true, '30 / 18 = 1.67x')
  t.equal(find(checks, 'docsplit-cli approx ≥ 150 MB/s'), true)
  rows[0]!.status = 'failed'
  t.equal(find(targets(rows), "1.6x the tokenizer's single-core count"), false, 'a failed run fails its target')
})

t.test('warm figures: checked beside the first-pass ones, only where both sides have them', async (t) => {
  const rows = [
    row('markdown-8MB', 'docsplit', 'approx', 14.8, { warmMbps: 24, warmCpuMbps: 18.6 }),
    row('markdown-8MB', 'docsplit', 'o200k_base', 9.8, { cpuMbps: 6.6, warmMbps: 17, warmCpuMbps: 15.4 }),
    row('markdown-8MB', 'langchain-recursive-tiktoken', 'o200k', 0.95, { cpuMbps: 0.93, warmMbps: 1.05, warmCpuMbps: 1.04 }),
    row('markdown-8MB', 'chonkie-recursive-tiktoken', 'o200k', 3.2, { cpuMbps: 3.1 }),
  ]
  const checks = targets(rows)
  const exact = (target: string): boolean | undefined => checks.find((c) => c.target === target)?.pass
  t.equal(exact('markdown-8MB: docsplit approx ≥ 15 MB/s'), false, '14.8 MB/s on a first pass')
  t.equal(find(checks, 'docsplit approx ≥ 15 MB/s, warm'), true, '24 MB/s warm')
  t.equal(find(checks, 'langchain-recursive-tiktoken, warm'), true, '15.4 / 1.04 = 14.8x warm')
  t.equal(exact('markdown-8MB: docsplit o200k_base ≥ 10x langchain-recursive-tiktoken'), false, '6.6 / 0.93 = 7.1x on a first pass')
  t.equal(checks.some((c) => c.target.includes('chonkie-recursive-tiktoken, warm')), false, 'no warm ratio without the peer\'s warm figure')
})
