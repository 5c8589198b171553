/**
 * A parser's content sniffers (`detect`, `formatOf`) that throw: the split fails naming the
 * parser, as for any exception of a plugin, rather than going on silently as if the parser
 * had said nothing (a plugin's bug then looked like its format not being detected).
 */
import t from 'tap'
import { readFileSync } from 'node:fs'
import { basename, relative } from 'node:path'
import { DocsplitError, listParsers, register, split } from '../../index.js'
import { checkParser } from '../../testing.js'
import { corpusDir, corpusFiles, corpusMissing } from '../helpers/corpus.js'
import { oneRecord } from '../helpers/plugins.js'

/** Throws on a sample that starts with "boom", else says nothing. */
const boom = oneRecord('sniff-boom-test', { detect: (sample) => { if (sample.startsWith('boom')) throw new TypeError('detect broke'); return 0 } })
/** Certain of a sample that starts with "pick me", whose formatOf throws. */
const picked = oneRecord('sniff-picked-test', {
  formats: ['sniff-picked-test', 'sniff-picked-other-test'],
  detect: (sample) => sample.startsWith('pick me') ? 1 : 0,
  formatOf: () => { throw new RangeError('formatOf broke') },
})
register(boom, picked)

async function failure (run: Promise<unknown>): Promise<DocsplitError> {
  const error = await run.then(() => undefined, (e: unknown) => e)
  if (!(error instanceof DocsplitError)) throw new Error(`expected a DocsplitError, got ${String(error)}`)
  return error
}

t.test('a detect() that throws fails the split by content, naming the parser, with the exception as cause', async (t) => {
  const e = await failure(split('boom\nmore text\n'))
  t.equal(e.code, 'DOCSPLIT_INTERNAL')
  t.equal(e.message, 'the sniff-boom-test parser\'s detect() failed unexpectedly')
  t.match(e.cause, { name: 'TypeError', message: 'detect broke' })
  t.equal((await split('plain words\n')).document.input_format, 'text', 'a sample it does not throw on is detected as before')
  t.equal((await split('boom\n', { filename: 'a.txt' })).document.input_format, 'text', 'a format chosen by extension asks no detect()')
})

t.test('a formatOf() that throws fails the split, naming the parser', async (t) => {
  const e = await failure(split('pick me\n'))
  t.equal(e.code, 'DOCSPLIT_INTERNAL')
  t.equal(e.message, 'the sniff-picked-test parser\'s formatOf() failed unexpectedly')
  t.match(e.cause, { name: 'RangeError' })
})

t.test('the kit calls detect() and formatOf() on the samples and on generated inputs', async (t) => {
  await t.rejects(checkParser(boom, [{ name: 'a boom', input: 'boom\n' }]), { message: /^parser "sniff-boom-test": a boom: detect\(\) threw TypeError: detect broke; a sniffer that cannot tell answers 0$/ })
  await t.rejects(checkParser(picked, [{ name: 'plain', input: 'text\n' }]), { message: /^parser "sniff-picked-test": empty input: formatOf\(\) threw RangeError: formatOf broke; a sniffer that cannot tell answers undefined$/ })
})

// ---- `auto` by content: logs read from stdin (no file name) against CSV, YAML and text ----

const pad = (n: number): string => String(n).padStart(2, '0')
const formatOf = async (text: string): Promise<string> => (await split(text)).document.input_format

/** A Java application log: timestamped lines, and every third entry a stack trace of 23 lines. */
const javaLog = Array.from({ length: 30 }, (_, i) => {
  const line = `2024-03-05 10:00:${pad(i)}.000 ${i % 3 === 2 ? 'ERROR' : 'INFO '} [worker-${i}] c.e.svc.Handler - request ${i} done\n`
  if (i % 3 !== 2) return line
  const frames = Array.from({ length: 20 }, (_, f) => `\tat com.example.db.Pool.acquire${f}(Pool.java:${100 + f})\n`).join('')
  return `${line}java.lang.IllegalStateException: Connection pool exhausted (active=50, idle=0)\n${frames}Caused by: java.net.SocketTimeoutException: Read timed out\n\t... 12 more\n`
}).join('')

t.test('a Java log with stack traces is a log, its entries whole, though trace lines outnumber entries', async (t) => {
  const out = await split(javaLog, { max_tokens: 2000 })
  t.equal(out.document.input_format, 'log')
  t.equal(out.chunks.reduce((n, c) => n + (c.record_count ?? 0), 0), 30, 'one record per timestamped line')
})

t.test('an nginx access log is a log, not a CSV whose first line is every chunk\'s context', async (t) => {
  const access = Array.from({ length: 30 }, (_, i) =>
    `10.1.${i}.${i} - - [05/Mar/2024:10:00:${pad(i)} +0000] "GET /api/items/${i}?q=a%20b HTTP/1.1" 200 ${1000 + i} "-" "Mozilla/5.0 (X11; Linux x86_64) curl/8.4.0"\n`).join('')
  const out = await split(access, { max_tokens: 100 })
  t.equal(out.document.input_format, 'log')
  t.ok(out.chunks.every((c) => c.context == null), 'no chunk carries a context')
})

t.test('an nginx error log (commas, quoted request mid-line) is a log, not CSV', async (t) => {
  const errors = Array.from({ length: 20 }, (_, i) =>
    `2024/03/05 10:00:${pad(i)} [error] 31#31: *${i} upstream timed out (110: Connection timed out), client: 10.0.0.${i}, server: _, request: "GET / HTTP/1.1", upstream: "http://10.0.0.9:8080/", host: "example.com"\n`).join('')
  t.equal(await formatOf(errors), 'log')
})

t.test('a BGL-style log (`- 1117838570 ...`, `APPREAD ...: msg`) is a log, not a YAML sequence that fails to parse', async (t) => {
  const bgl = Array.from({ length: 60 }, (_, i) => {
    const flag = i === 55 ? 'APPREAD' : '-'
    const message = i === 55 ? 'ciod: failed to read message prefix on control stream' : 'instruction cache parity error corrected'
    return `${flag} ${1117838570 + i} 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.${pad(i % 60)}.675872 R02-M1-N0-C:J12-U11 RAS KERNEL INFO ${message}\n`
  }).join('')
  const out = await split(bgl, { max_tokens: 2000 })
  t.equal(out.document.input_format, 'log')
  t.equal(out.chunks.reduce((n, c) => n + (c.record_count ?? 0), 0), 60)
})

t.test('a parse error of a format chosen by content says so, and how to choose another', async (t) => {
  // kubectl logs of a service that logs JSON, then panics in plain lines (past the sample detection reads).
  const lines = Array.from({ length: 1500 }, (_, i) => `{"ts":"2026-11-27T10:00:${String(i % 60).padStart(2, '0')}.000Z","level":"info","msg":"request ${i}"}`)
  const text = [...lines, 'panic: runtime error: index out of range [5] with length 3', '', 'goroutine 1 [running]:'].join('\n') + '\n'
  const hint = '(input_format "auto" read the content as jsonl; pass input_format to read it as another format)'
  const byContent = await failure(split(text, {}))
  t.equal(byContent.code, 'DOCSPLIT_PARSE_ERROR')
  t.ok(byContent.message.startsWith('invalid JSON at line 1501, column 1: ') && byContent.message.endsWith(hint), byContent.message)
  for (const options of [{ filename: 'pod.jsonl' }, { input_format: 'jsonl' }]) {
    const chosen = await failure(split(text, options))
    t.equal(chosen.code, 'DOCSPLIT_PARSE_ERROR')
    t.notOk(chosen.message.includes('input_format'), `chosen by ${Object.keys(options)[0]}: no hint`)
  }
  const asLog = await split(text, { input_format: 'log' })
  t.equal(asLog.chunks.map((c) => c.text).join(''), text, 'as the hint says, it reads as a log')
  t.match(asLog.chunks.at(-1)!.text, /panic: runtime error[^]*goroutine 1/, 'the panic with it')
})

t.test('CSV, YAML, markdown, JSON lines and prose with timestamps keep their format', async (t) => {
  const csvRows = 'time,level,message\n' + Array.from({ length: 20 }, (_, i) => `2024-01-01 10:00:${pad(i)},INFO,"event ${i}"`).join('\n') + '\n'
  t.equal(await formatOf(csvRows), 'csv', 'a CSV whose first column is a date-time')
  t.equal(await formatOf('a, b, c\n1, "x", 2\n3, "y", 4\n5, "z", 6\n'), 'csv', 'fields quoted after a space')
  t.equal(await formatOf('id\tname\tamount\n1\tfoo\t3\n2\tbar\t4\n3\tbaz\t5\n'), 'tsv', 'tab-separated without a name is tsv, not csv')
  const yamlDoc = Array.from({ length: 10 }, (_, i) => `- time: 2024-01-01 10:00:${pad(i)}\n  level: info\n  message: event ${i}\n`).join('')
  t.equal(await formatOf(yamlDoc), 'yaml', 'a YAML sequence of mappings holding timestamps')
  const jsonl = Array.from({ length: 10 }, (_, i) => `{"time":"2024-01-01T10:00:${pad(i)}Z","level":"info","msg":"event ${i}"}\n`).join('')
  t.equal(await formatOf(jsonl), 'jsonl', 'JSON lines with timestamps')
  t.equal(await formatOf('# Release notes\n\n## 1.2.0\n\nReleased 2024-01-01 10:00:00 UTC, with `fix` and **more**.\n\n- one\n- two\n'), 'markdown')
  t.equal(await formatOf('The meeting was moved.\nIt starts at 10:00:00 sharp,\nand ends when it ends.\nBring notes.\n'), 'text', 'prose with one time of day')
  // A pipe table is markdown, though its rows split evenly at `|`; pipe-delimited data stays CSV.
  t.equal(await formatOf('| Option | Default | Meaning |\n|---|---|---|\n| a | 1 | x |\n| b | 2 | y |\n'), 'markdown', 'a GFM table alone')
  t.equal(await formatOf('Option | Default\n--- | ---\na | 1\n'), 'markdown', 'a GFM table without outer pipes (`--- | ---` is no YAML block scalar)')
  t.equal(await formatOf('| Name |\n| --- |\n| Anna |\n| Bob |\n'), 'markdown', 'a GFM table of one column')
  t.equal(await formatOf('| Name\n| ---\n| Anna\n| Bob\n'), 'markdown', 'a GFM table of one column, pipes on the left only')
  t.equal(await formatOf('| Option | Meaning |\n|---|---|\n| `a \\| b` | either |\n| c | d |\n'), 'markdown', 'an escaped pipe in a cell')
  t.equal(await formatOf('| Option | Meaning \\| note |\n|---|---|\n| a | b |\n| c | d |\n'), 'markdown', 'an escaped pipe in the header')
  t.equal(await formatOf('a|b|c\n1|2|3\n4|5|6\n'), 'csv', 'pipe-delimited rows')
  t.equal(await formatOf('key: |\n  - |\n    text\n'), 'yaml', 'a block scalar after a line with a pipe is no table')
})

t.test('a heading over a list is markdown, not a YAML comment over a sequence; a bare list stays YAML', async (t) => {
  const changelog = '# Changelog\n\n' + Array.from({ length: 30 }, (_, i) => `- fix issue #${i}: the parser drops a line when it ends the file\n`).join('')
  t.equal(await formatOf(changelog), 'markdown', 'a changelog')
  t.equal(await formatOf('# Shopping\n\n- milk\n- eggs\n'), 'markdown', 'a short list under a heading')
  // Read as YAML, `[ ] write docs` is a flow sequence with text after it: a parse error.
  t.equal(await formatOf('# TODO\n- [ ] write docs\n- [x] ship\n'), 'markdown', 'a GFM task list')
  t.equal(await formatOf('## Notes\n\n* a\n* b\n'), 'markdown', 'a second-level heading over a list')
  t.same((await split(changelog)).chunks[0]!.path, ['Changelog'], 'its heading is the path')
  t.equal(await formatOf('- foo\n- bar\n- 42\n'), 'yaml', 'a bare sequence of scalars')
  t.equal(await formatOf('# inventory\n- name: web\n  ip: 10.0.0.1\n- name: db\n  ip: 10.0.0.2\n'), 'yaml', 'a commented sequence of mappings')
  t.equal(await formatOf('# Default values.\n# A YAML file.\n\nreplicaCount: 1\nimage:\n  repository: nginx\n'), 'yaml', 'comments over a mapping')
})

t.test('transcripts, glossaries and dated notes are text: not a log or YAML whose records go far over the budget', async (t) => {
  const long = 'I would ask the witness to look again at the schedule of payments, which the parties agreed in writing. '.repeat(30)
  const speakers = `THE COURT: Good morning. Please be seated.\n\nMR. SMITH: Thank you, Your Honor. ${long}\n\nTHE WITNESS: Yes, I see it.\n`
  const stamped = `[00:00:12] SPEAKER 1: Good morning. Please be seated.\n\n[00:00:20] SPEAKER 2: Thank you. ${long}\n\n[00:03:01] SPEAKER 1: Go on.\n`
  const glossary = Array.from({ length: 6 }, (_, i) => `"Term ${i}": means the agreement between the parties as amended from time to time, and every schedule to it.\n\n`).join('')
  const notes = Array.from({ length: 6 }, (_, i) => `2026-03-0${i + 1} 10:00 Hearing notes. The parties met and agreed to adjourn until the next session.\n\n`).join('')
  const drama = 'DER PRINZ: Klagen, nichts als Klagen! Bittschriften, nichts als Bittschriften! – Das glaub\' ich; wenn wir allen helfen könnten: dann wären wir zu beneiden.\n\nDER KAMMERDIENER: Ein Brief. Er kam eben an.\n'
  for (const [name, text] of Object.entries({ speakers, stamped, glossary, notes, drama })) {
    const r = await split(text, { max_tokens: 128 })
    t.equal(r.document.input_format, 'text', name)
    t.ok(r.chunks.every((c) => c.token_count <= 128), `${name}: within the budget`)
  }
  // Records with a blank line between them are still records: a log whose lines have a level
  // or a program's pid, a CSV of three fields, an i18n file whose keys are words.
  const spaced = Array.from({ length: 10 }, (_, i) => `2024-01-01 10:00:${pad(i)} INFO worker-${i} started job ${i}. Next one queued.\n\n`).join('')
  t.equal(await formatOf(spaced), 'log')
  const syslog = Array.from({ length: 12 }, (_, i) => `Jun 14 15:16:${pad(i)} host systemd[1]: Started Session ${i} of user root.\n\n`).join('')
  t.equal(await formatOf(syslog), 'log')
  t.equal(await formatOf('id,name,city\n\n1,Ann,Oslo\n\n2,Bob,Rome\n\n3,Cy,Lima\n\n4,Di,Kyiv\n'), 'csv')
  t.equal(await formatOf('welcome: Welcome back! Please sign in to continue.\nlogout_confirm: Are you sure? You will be signed out.\nsave_error: Could not save your changes. Please try again later.\ntitle: Dashboard\n'), 'yaml')
})

t.test('corpus: loghub logs from stdin are logs; no file of another format is taken for a log', { skip: corpusMissing }, async (t) => {
  for (const file of corpusFiles('log/loghub', ['.log'])) {
    t.equal((await split(readFileSync(file), { max_tokens: 4000 })).document.input_format, 'log', basename(file))
  }
  // The best detect() score over 0.5, as `auto` picks, on the sample core hands it.
  const parsers = listParsers()
  const best = (sample: string): string | undefined => {
    let name: string | undefined
    let top = 0.5
    for (const p of parsers) {
      const score = p.detect?.(sample) ?? 0
      if (score > top) { name = p.name; top = score }
    }
    return name
  }
  const others = ['csv', 'json', 'markdown', 'xml', 'yaml'].flatMap((folder) => corpusFiles(folder))
  const taken = others.filter((file) => best(new TextDecoder().decode(readFileSync(file).subarray(0, 1 << 16))) === 'log')
  t.same(taken.map((file) => relative(corpusDir, file)), [], `none of ${others.length} files`)
})
