/**
 * Counting on other cores: the counts made by worker threads are the tokenizer's own, a worker
 * that cannot load its module answers nothing (the main thread counts), and a large split gives
 * the same bytes with and without the workers.
 */
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { CountPool } from '../../../plugins/tokenizers/tiktoken/pool.js'
import { countThreads } from '../../../plugins/tokenizers/tiktoken/index.js'
import { importEncoding, tokenizerFrom, type EncodingModule } from '../../../plugins/tokenizers/tiktoken/load.js'

// The last: one piece of 200 KB, which the workers merge in O(n log n) as the main thread does
// (bpe-core.ts, from dist/: a worker cannot load TypeScript; gpt-tokenizer alone takes 20 s).
const texts = ['2024-01-01 12:00:00 INFO started\n', '\tat org.example.Main(Main.java:12)\n', '', '日本語のログ\n', 'x'.repeat(3000), 'abcdefghij'.repeat(20_000)]
const fixes = new URL('../../../dist/plugins/tokenizers/tiktoken/bpe-core.js', import.meta.url)
const urls = (encoding: string) => () => ({ encoding, fixes: fixes.href })

t.test('workers count exactly what the main thread counts', async (t) => {
  if (!existsSync(fixes)) return t.skip('dist/ is missing: npm test builds it first')
  const mod = await importEncoding('o200k_base') as EncodingModule
  const pool = new CountPool(urls(import.meta.resolve('gpt-tokenizer/encoding/o200k_base')), 2)
  const tok = tokenizerFrom('o200k_base', mod, pool)
  const counts = await tok.countMany!(texts)
  t.same(Array.from(counts!), texts.map((s) => tok.count(s)))
  const batches = await Promise.all([texts, [...texts].reverse(), texts.slice(1)].map((b) => tok.countMany!(b)))
  t.same(batches.map((c) => Array.from(c!)), [texts, [...texts].reverse(), texts.slice(1)].map((b) => b.map((s) => tok.count(s))), 'batches in flight on both workers')
  const tally = tok.tally!()
  let n = 0
  for (let i = 0; i < texts.length; i++) n = tally.add(texts[i]!, counts![i])
  t.equal(n, tok.count(texts.join('')), 'a tally given the counts made ahead is exact')
})

t.test('a worker that cannot load its module answers nothing', async (t) => {
  const mod = await importEncoding('o200k_base') as EncodingModule
  const pool = new CountPool(urls('file:///nonexistent/gpt-tokenizer.js'), 1)
  const tok = tokenizerFrom('o200k_base', mod, pool)
  t.equal(await tok.countMany!(texts), undefined)
  t.equal(await tok.countMany!(texts), undefined, 'and is not started again')
})

t.test('large splits (records, and blocks) are byte for byte the same with and without counting threads', async (t) => {
  const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..')
  const bin = join(root, 'dist/cli/index.js')
  if (!existsSync(bin)) return t.skip('dist/ is missing: npm test builds it first')
  const dir = mkdtempSync(join(tmpdir(), 'docsplit-pool-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  // 10 MB of log records (past the 8 MB after which records are counted ahead), with stack traces.
  const lines: string[] = []
  for (let i = 0, size = 0; size < 10 << 20; i++) {
    const line = i % 97 === 0
      ? `2024-01-01 12:00:${String(i % 60).padStart(2, '0')} ERROR request ${i} failed\njava.lang.IllegalStateException: bad ${i}\n\tat org.example.Service.run(Service.java:${i % 400})\n\tat java.lang.Thread.run(Thread.java:750)\n`
      : `2024-01-01 12:00:${String(i % 60).padStart(2, '0')} INFO worker-${i % 7} handled /api/items/${i} in ${(i * 7) % 1000} ms\n`
    lines.push(line)
    size += line.length
  }
  const log = join(dir, 'big.log')
  writeFileSync(log, lines.join(''))
  const cjk = (seed: number, n: number): string => {
    let s = ''
    for (let k = 0; k < n; k++) s += String.fromCharCode(0x4e00 + (seed * 7919 + k * 104729) % 2000)
    return s
  }
  // 6 MB of markdown: sections, lists, code, tables, long paragraphs (the sibling splitter
  // tallies whole blocks and cuts the long ones), fences of tabs.
  const md: string[] = []
  for (let i = 0, size = 0; size < 6 << 20; i++) {
    const part = `## Section ${i}\n\nSome prose about item ${i}, with a [link](https://example.com/${i}) and \`code\`. ` +
      'It goes on for a while so that blocks vary in size. '.repeat(i % 9) + '\n\n' +
      (i % 5 === 0 ? '```js\nconst x = ' + i + '\nconsole.log(x)\n```\n\n' : '') +
      (i % 7 === 0 ? '| a | b |\n|---|---|\n| ' + i + ' | ' + (i * 3) + ' |\n\n' : '') +
      (i % 3 === 0 ? '- one\n- two\n  - nested ' + i + '\n\n' : '') +
      // Blocks over budget (cut by the splitter), and a fence that fits but whose runs of tabs
      // the cheap estimate puts far over it (counted exactly either way).
      (i % 50 === 0 ? `A long paragraph ${i} ` + 'that keeps going. '.repeat(400) + '\n\n' : '') +
      (i % 60 === 0 ? '```c\n' + ('\t'.repeat(60) + 'xj();\n').repeat(55) + '```\n\n' : '') +
      // Where estimates decide (letters without spaces, that a tally cannot settle): they must
      // not take the counts made ahead, or the chunks would depend on the number of cores.
      (i % 97 === 0 ? cjk(i, 300 + (i * 37) % 700) + '\n\n' : '')
    md.push(part)
    size += part.length
  }
  const doc = join(dir, 'big.md')
  writeFileSync(doc, md.join(''))
  // 5 MB of short CSV rows: past 32 records a chunk, estimates decide (then one exact count).
  const rows = ['id,name,score\n']
  for (let i = 0, size = 0; size < 5 << 20; i++) {
    const row = `${i},name${(i * 7) % 1000},${(i * 13) % 97}\n`
    rows.push(row)
    size += row.length
  }
  const csv = join(dir, 'big.csv')
  writeFileSync(csv, rows.join(''))
  const run = (file: string, threads: string): string => {
    const r = spawnSync(process.execPath, [bin, 'split', file, '--jsonl', '--tokenizer', 'o200k_base'], { env: { ...process.env, DOCSPLIT_COUNT_THREADS: threads }, encoding: 'utf8', maxBuffer: 1 << 28 })
    t.equal(r.status, 0, r.stderr)
    return r.stdout
  }
  for (const file of [log, doc, csv]) {
    const single = run(file, '0')
    const parallel = run(file, '2')
    t.ok(single.length > 5 << 20, 'the whole input came out')
    t.ok(single === parallel, `identical output: ${file.slice(-6)}`)
  }
})

t.test('DOCSPLIT_COUNT_THREADS: an integer from 0 to 8, else a clear error', async (t) => {
  t.equal(countThreads('0'), 0)
  t.equal(countThreads(' 3 '), 3)
  t.ok(countThreads(undefined) >= 0 && countThreads(undefined) <= 2, 'the default: one per core beyond two, at most two')
  for (const bad of ['abc', '-1', '9', '200', '1.5']) t.throws(() => countThreads(bad), { code: 'DOCSPLIT_INVALID_OPTION', message: `DOCSPLIT_COUNT_THREADS must be an integer from 0 to 8 (got "${bad}")` }, bad)
})
