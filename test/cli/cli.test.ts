/**
 * The built `docsplit` command, run as a user runs it (npm test builds dist/ first).
 */
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..')
const bin = join(root, 'dist/cli/index.js')
const dir = mkdtempSync(join(tmpdir(), 'docsplit-cli-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))

function docsplit (args: string[], input?: string | Buffer): { code: number | null, stdout: string, stderr: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { input, encoding: 'utf8', maxBuffer: 1 << 28 })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const file = (name: string, content: string | Buffer): string => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

t.before(() => {
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run npm run build (npm test does it first)`)
})

const prose = Array.from({ length: 80 }, (_, i) => `Paragraph ${i} says something worth reading.\nIt has two lines.\n`).join('\n')

t.test('should print the docsplit.chunk.v1 response for a file', async (t) => {
  const r = docsplit(['split', file('doc.txt', prose), '--max-tokens', '64'])
  t.equal(r.code, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  t.equal(out.schema_version, 'docsplit.chunk.v1')
  t.equal(out.document.input_format, 'text', 'auto by extension')
  t.equal(out.metadata.max_tokens, 64)
  t.equal(out.chunks.map((c: { text: string }) => c.text).join(''), prose)
  t.equal(out.chunk_count, out.chunks.length)
})

t.test('should stream one chunk per line with --jsonl, from stdin too', async (t) => {
  const r = docsplit(['split', '-', '--jsonl', '--input-format', 'text', '--max-tokens', '32'], prose)
  t.equal(r.code, 0, r.stderr)
  const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l))
  t.ok(lines.length > 10)
  t.same(lines.map((c) => c.index), lines.map((_, i) => i))
  t.equal(lines.map((c) => c.text).join(''), prose)
})

t.test('should verify its own output and say so', async (t) => {
  const r = docsplit(['split', file('v.txt', prose), '--verify', '--jsonl', '--max-tokens', '16', '--overlap-tokens', '4'])
  t.equal(r.code, 0, r.stderr)
  t.match(r.stderr, /verified \d+ chunks:/)
  t.match(docsplit(['split', file('one.txt', 'x'), '--verify', '--jsonl']).stderr, /^docsplit: verified 1 chunk: /, 'one chunk, in the singular')
  // The source is decoded as the split decodes it: here in the encoding the XML declares.
  const feed = Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?>\n<feed>' + '<entry>caf\u00e9 cr\u00e8me</entry>\n'.repeat(40) + '</feed>\n', 'latin1')
  const declared = docsplit(['split', file('feed.xml', feed), '--verify', '--jsonl', '--max-tokens', '16'])
  t.equal(declared.code, 0, declared.stderr)
  t.match(declared.stderr, /verified \d+ chunks?: lossless, offsets \(characters, bytes, lines\)/)
  // A workbook is read as bytes: no encoding, no decoded source; the budget and order still are checked.
  const { buildXlsx } = await import('../helpers/xlsx-build.js')
  const rows = Array.from({ length: 200 }, (_, i) => [`item ${i}`, i * 3, `note about item ${i} and its supplier`])
  const book = docsplit(['split', file('v.xlsx', buildXlsx([{ name: 'Stock', rows }])), '--verify', '--jsonl', '--max-tokens', '64'])
  t.equal(book.code, 0, book.stderr)
  t.match(book.stderr, /verified \d+ chunks?: in order, character and line offsets and overlaps exact \(xlsx is read as bytes: its chunks are not the file's bytes\), every chunk within 64 tokens by recount/)
})

t.test('should exit 2 on usage errors, 3 on input errors', async (t) => {
  t.equal(docsplit(['split']).code, 2)
  t.equal(docsplit(['split', 'a', 'b']).code, 2, 'several files need --ndjson')
  t.equal(docsplit(['split', file('x.txt', 'x'), '--no-such-flag']).code, 2)
  const budget = docsplit(['split', file('y.txt', 'x'), '--max-tokens', '3'])
  t.equal(budget.code, 2)
  t.match(budget.stderr, /DOCSPLIT_INVALID_BUDGET: max_tokens must be an integer from 8 to 1000000/)
  t.equal(docsplit(['split', file('z.txt', 'x'), '--tokenizer', 'nope']).code, 2)
  t.equal(docsplit(['frobnicate']).code, 2)
  const missing = docsplit(['split', join(dir, 'missing.txt')])
  t.equal(missing.code, 3, 'the library\'s code for a file that cannot be read')
  t.match(missing.stderr, /DOCSPLIT_READ_FAILED: reading the input failed \(ENOENT\): no such file ".*missing\.txt"/)
  const bad = docsplit(['split', file('bad.txt', Buffer.from([0x61, 0xff, 0x62])), '--input-format', 'text'])
  t.equal(bad.code, 3)
  t.match(bad.stderr, /DOCSPLIT_INVALID_UTF8: the input is not valid UTF-8 at byte 1/)
  const replaced = docsplit(['split', join(dir, 'bad.txt'), '--input-format', 'text', '--invalid-bytes', 'replace', '--verify'])
  t.equal(replaced.code, 0, '--invalid-bytes replace goes on, and --verify checks its byte offsets')
  t.equal(JSON.parse(replaced.stdout).chunks[0].text, 'a\uFFFDb')
  t.match(replaced.stderr, /note: 1 invalid UTF-8 sequence read as U\+FFFD \(the first at byte 1\)/)
  t.notMatch(bad.stderr, new RegExp(dir), 'no file paths beyond what the user typed')
  // A directory on standard input is refused as `cat` does, not read as an empty document.
  const fromDir = spawnSync(process.execPath, [bin, 'split', '-'], { stdio: [openSync(dir, 'r'), 'pipe', 'pipe'], encoding: 'utf8' })
  t.equal(fromDir.status, 3)
  t.match(fromDir.stderr, /DOCSPLIT_READ_FAILED: reading the input failed \(EISDIR\): standard input is a directory/)
  // A name that is not UTF-8 cannot reach Node intact: the message says so, and what to do.
  const latin1 = Buffer.concat([Buffer.from(dir + '/caf'), Buffer.from([0xe9]), Buffer.from('.md')])
  writeFileSync(latin1, '# T\n')
  const undecodable = spawnSync(process.execPath, [bin, 'split', latin1 as unknown as string], { encoding: 'utf8' })
  t.equal(undecodable.status, 3)
  t.match(undecodable.stderr, /no such file ".*caf\ufffd\.md" \(its name is not valid UTF-8, which Node cannot pass on: give the file on standard input, with --filename\)/)
  const named = docsplit(['split', dir])
  t.equal(named.code, 3, 'a directory named: the same read failure')
  t.match(named.stderr, /DOCSPLIT_READ_FAILED: reading the input failed \(EISDIR\): ".*" is a directory/)
})

t.test('an invalid DOCSPLIT_COUNT_THREADS fails every split up front, whatever the tokenizer', async (t) => {
  const run = (args: string[], input?: string): ReturnType<typeof spawnSync> =>
    spawnSync(process.execPath, [bin, ...args], { input, encoding: 'utf8', env: { ...process.env, DOCSPLIT_COUNT_THREADS: '99' } })
  const doc = file('threads.md', prose)
  for (const [args, input] of [[['split', doc]], [['split', doc, '--jsonl']], [['split', '-', '--jsonl'], prose], [['split', doc, '--tokenizer', 'o200k_base']]] as Array<[string[], string?]>) {
    const r = run(args, input)
    t.equal(r.status, 2, `${args.join(' ')}: exit 2`)
    t.equal(r.stderr, 'docsplit: DOCSPLIT_INVALID_OPTION: DOCSPLIT_COUNT_THREADS must be an integer from 0 to 8 (got "99")\n', `${args.join(' ')}: the message`)
    t.equal(r.stdout, '', `${args.join(' ')}: nothing split`)
  }
  t.equal(run(['formats']).status, 0, 'a command that splits nothing does not read it')
})

t.test('should list formats, splitters and tokenizers with defaults', async (t) => {
  const r = docsplit(['formats', '--json'])
  t.equal(r.code, 0, r.stderr)
  const info = JSON.parse(r.stdout)
  t.ok(info.formats.some((f: { formats: string[] }) => f.formats.includes('text')))
  t.same(info.splitters.map((s: { name: string }) => s.name).slice(0, 2), ['sibling', 'record'])
  t.ok(info.tokenizers.find((x: { name: string, default: boolean }) => x.name === 'approx' && x.default))
  const human = docsplit(['formats'])
  t.equal(human.code, 0)
  t.match(human.stdout, /Tokenizers \(tokenizer\):/)
  // Options, a splitter's too: what a plugin declared, as an author checks it.
  t.same(info.splitters.find((s: { name: string }) => s.name === 'sibling').options, ['separate_sections'])
  t.same(info.formats.find((f: { name: string }) => f.name === 'csv').options, ['delimiter', 'header', 'header_row'])
  t.match(human.stdout, /sibling {2}Packs[^\n]*\n {6}options: separate_sections\n/)
  // Model prefixes: a dated or fine-tuned model name selects its encoding (gpt-tokenizer is a dev dependency).
  t.ok(info.tokenizers.find((x: { name: string, model_prefixes: string[] }) => x.name === 'o200k_base' && x.model_prefixes.includes('gpt-4o-')))
  t.match(human.stdout.replace(/\n {6}/g, ' '), /and any model name that starts with: gpt-4o-, /)
  const dated = docsplit(['split', '-', '--tokenizer', 'gpt-4o-2024-08-06', '--input-format', 'text'], 'Some words to count.')
  t.equal(dated.code, 0, dated.stderr)
  t.match(JSON.parse(dated.stdout).metadata, { tokenizer: 'o200k_base', options: { tokenizer: 'gpt-4o-2024-08-06' } })
})

t.test('should describe every format and tokenizer, in JSON and as text', async (t) => {
  const { listParsers, listTokenizers } = await import('../../index.js')
  const info = JSON.parse(docsplit(['formats', '--json']).stdout) as Record<'formats' | 'tokenizers', Array<{ name: string, description: string }>>
  const human = docsplit(['formats']).stdout
  // As printed: indented under its entry, wrapped at word boundaries; then the options, a line of their own.
  const text = human.replace(/\n {6}options: [^\n]*/g, '').replace(/\n {6}/g, ' ')
  t.match(human, /\n {6}options: delimiter, header, header_row\n/, 'options under the description')
  for (const [kind, plugins] of [['formats', listParsers()], ['tokenizers', listTokenizers()]] as const) {
    t.ok(plugins.length > 0)
    for (const p of plugins) {
      t.ok(p.description, `${p.name} has a description`)
      t.equal(info[kind].find((x) => x.name === p.name)?.description, p.description, `${kind}: ${p.name} in --json`)
      t.ok(text.includes(` ${p.description!}\n`), `${kind}: ${p.name} in the text`)
    }
  }
  t.match(human, /\n  csv, tsv  \[\.csv \.tsv\]  splitter: record  available\n {6}CSV and TSV: one record per row/)
  t.ok(human.split('\n').filter((l) => l.startsWith('      ')).every((l) => l.length <= 100), 'descriptions wrapped under 100 columns')
})

t.test('--ndjson: the service\'s lines, a header with the format and metadata, the chunks, a trailer; an error line after an input error', async (t) => {
  const { split } = await import('../../index.js')
  const text = 'a,b\n' + Array.from({ length: 40 }, (_, i) => `${i},value ${i}`).join('\n') + '\n'
  const path = file('nd.csv', text)
  const r = docsplit(['split', path, '--ndjson', '--max-tokens', '32'])
  t.equal(r.code, 0, r.stderr)
  const lines = r.stdout.trimEnd().split('\n')
  const whole = await split(Buffer.from(text), { max_tokens: 32, filename: 'nd.csv' })
  t.same(JSON.parse(lines[0]!), { schema_version: whole.schema_version, input_format: whole.document.input_format, metadata: whole.metadata, source: path }, 'the service\'s header, and the file as given')
  t.equal(lines.slice(1, -1).join('\n'), docsplit(['split', path, '--jsonl', '--max-tokens', '32']).stdout.trimEnd(), 'the chunks as --jsonl prints them')
  t.same(JSON.parse(lines.at(-1)!), { document: whole.document, reference_definitions: whole.reference_definitions, chunk_count: whole.chunk_count })
  // More lines than the log parser samples to choose its pattern, so records go out before the bad byte.
  const entries = Array.from({ length: 80 }, (_, i) => `2024-01-01 entry ${i}\n`).join('')
  const bad = docsplit(['split', file('nd-bad.log', Buffer.concat([Buffer.from(entries + '2024-01-01 th'), Buffer.from([0xff])])), '--ndjson'])
  t.equal(bad.code, 3)
  const badLines = bad.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
  t.match(badLines[0], { input_format: 'log' })
  t.equal(badLines.slice(1, -1).map((c) => c.text).join(''), entries.slice(0, entries.lastIndexOf('2024-')), 'every entry before the bad byte but the one being read')
  t.match(badLines.at(-1), { error: { code: 'DOCSPLIT_INVALID_UTF8', status: 422 } })
  t.equal(docsplit(['split', path, '--ndjson', '--jsonl']).code, 2, 'one output form at a time')
})

t.test('chunks over the budget kept whole are told once on stderr, with a hint when most of a log\'s are', async (t) => {
  const entries = Array.from({ length: 30 }, (_, i) => `2024-01-01 10:00:${String(i).padStart(2, '0')} entry ${i} ${'word '.repeat(i === 7 ? 200 : 5)}\n`).join('')
  const path = file('big-entry.log', entries)
  const one = docsplit(['split', path, '--jsonl', '--max-tokens', '64'])
  t.equal(one.code, 0)
  t.match(one.stderr, /^docsplit: note: 1 of \d+ chunks are a single record over 64 tokens, kept whole \(protected\)\n$/)
  const never = docsplit(['split', path, '--jsonl', '--max-tokens', '64', '--log-start', '^NEVER'])
  t.match(never.stderr, /entries may run together: see the log_start option\n$/)
  t.equal(docsplit(['split', path, '--jsonl', '--max-tokens', '512']).stderr, '', 'none over: nothing said')
  t.notMatch(docsplit(['split', path, '--jsonl', '--max-tokens', '64', '--verify']).stderr, /note:/, '--verify says it in its own line')
})

t.test('an option of another format than the input\'s is left out and told on stderr', async (t) => {
  const path = file('app-log.txt', '2024-01-01 10:00:00 ERROR failed\njava.lang.IllegalStateException: x\n\tat a.B.c(B.java:1)\n')
  const text = docsplit(['split', path, '--log-start', '^\\d{4}-'])
  t.equal(text.code, 0)
  t.equal(text.stderr, 'docsplit: note: --log-start left out: it is an option of another format or splitter than text with sibling (see docsplit formats; --input-format and --splitter choose)\n')
  t.equal(docsplit(['split', path, '--log-start', '^\\d{4}-', '--input-format', 'log']).stderr, '', 'taken by the log format: nothing said')
  t.match(docsplit(['split', path, '--no-header']).stderr, /^docsplit: note: --no-header left out: /, 'a boolean named as it was given')
  t.match(docsplit(['split', path, '--record-element', 'false']).stderr, /^docsplit: note: --record-element left out: /, 'a string "false" is no --no- flag')
  // A negative number after its flag is the flag's value, refused by the option's own check.
  const negative = docsplit(['split', path, '--max-tokens', '-1'])
  t.equal(negative.code, 2)
  t.equal(negative.stderr, 'docsplit: DOCSPLIT_INVALID_BUDGET: max_tokens must be an integer from 8 to 1000000 (got -1)\n')
  t.equal(docsplit(['split', path, '--max-tokens', '-.5']).stderr, 'docsplit: DOCSPLIT_INVALID_BUDGET: max_tokens must be an integer from 8 to 1000000 (got "-.5")\n', 'a fraction too')
  // So for any option that takes a value; a boolean's flag refuses it by name.
  t.equal(docsplit(['split', path, '--input-format', 'csv', '--header-row', '-2']).stderr, 'docsplit: DOCSPLIT_INVALID_OPTION: header_row must be an integer from 1 to 1048576 (got -2)\n')
  t.match(docsplit(['split', path, '--input-format', 'csv', '--delimiter', '-1']).stderr, /^docsplit: DOCSPLIT_INVALID_OPTION: delimiter must be one of .*\(got "-1"\)\n$/)
  t.equal(docsplit(['split', path, '--input-format', 'csv', '--header', '-1']).stderr, 'docsplit: DOCSPLIT_INVALID_OPTION: --header takes true or false (or give --no-header), not "-1"; see docsplit --help\n')
})

t.test('should print help and version', async (t) => {
  const help = docsplit(['--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /--max-tokens VALUE/)
  t.match(help.stdout, /Exit codes: 0 ok, 2 usage error, 3 input error, 4 missing optional dependency/)
  const version = docsplit(['--version'])
  t.match(version.stdout, /^\d+\.\d+\.\d+\n$/)
  // Each command's own help: serve takes its settings from the environment, not from flags.
  const serve = docsplit(['serve', '--help'])
  t.equal(serve.code, 0)
  t.match(serve.stdout, /\n  PORT \(default 8000\)\n      Port to listen on/)
  t.match(serve.stdout, /\n  DOCSPLIT_PLUGINS\n      Comma-separated plugin modules/)
  t.notMatch(serve.stdout, /--max-tokens/, 'not the split options')
  t.match(docsplit(['formats', '--help']).stdout, /^Usage:\n  docsplit formats \[--json\]/)
  // Without a command the help explains a usage error: on stderr, so a script's output stays empty.
  const bare = docsplit([])
  t.equal(bare.code, 2)
  t.equal(bare.stdout, '')
  t.match(bare.stderr, /^docsplit \d+\.\d+\.\d+: split documents/)
})

t.test('a command that prints a little into a full disk exits 1', { skip: existsSync('/dev/full') ? false : 'no /dev/full here' }, async (t) => {
  for (const args of [['--version'], ['--help'], ['formats'], ['formats', '--json']]) {
    const r = spawnSync(process.execPath, [bin, ...args], { stdio: ['ignore', openSync('/dev/full', 'w'), 'pipe'], encoding: 'utf8' })
    t.equal(r.status, 1, args.join(' '))
    t.equal(r.stderr, 'docsplit: DOCSPLIT_INTERNAL: cannot write the output (ENOSPC)\n')
  }
})

t.test('a message that cannot be written to stderr leaves the exit code as it was', { skip: existsSync('/dev/full') ? false : 'no /dev/full here' }, async (t) => {
  // A record over the budget: the run ends with a note on stderr.
  const log = file('trace.log', `2024-01-01 ERROR boom\n${'\tat com.acme.Foo.bar(Foo.java:1)\n'.repeat(200)}2024-01-01 INFO ok\n`)
  for (const [args, code] of [[['split', join(dir, 'missing.log')], 3], [['split', '--max-tokens', '3', log], 2], [['split', log, '--jsonl', '--max-tokens', '64'], 0]] as const) {
    const r = spawnSync(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', openSync('/dev/full', 'w')], encoding: 'utf8' })
    t.equal(r.status, code, `${args.join(' ')}: ${code}`)
  }
})

t.test('dist/ imports the bundled typebox, semver, markdown-it and yaml, not their many module files', async (t) => {
  const { readdirSync, readFileSync } = await import('node:fs')
  const files = (readdirSync(join(root, 'dist'), { recursive: true }) as string[]).filter((f) => f.endsWith('.js') && !f.startsWith('vendor'))
  const bare = files.filter((f) => /(\bfrom\s*|\bimport\s*\(\s*)['"](typebox|semver|markdown-it|yaml)(\/[^'"]*)?['"]/.test(readFileSync(join(root, 'dist', f), 'utf8')))
  t.same(bare, [], 'no bare import of a bundled package left')
  for (const bundle of ['typebox', 'markdown-it', 'yaml']) {
    t.ok(files.some((f) => readFileSync(join(root, 'dist', f), 'utf8').includes(`/vendor/${bundle}.js`)), `dist/ loads the ${bundle} bundle`)
  }
  const r = spawnSync(process.execPath, [bin, '--version'], { encoding: 'utf8' })
  t.equal(r.status, 0, 'the command starts with the bundles')
  // Markdown with front matter goes through both parser bundles.
  const md = spawnSync(process.execPath, [bin, 'split', '-', '--input-format', 'markdown'], { input: '---\ntitle: Bundled\ntags: [a, b]\n---\n\n# Head\n\nText.\n', encoding: 'utf8' })
  t.equal(md.status, 0, md.stderr)
  const out = JSON.parse(md.stdout) as { document: { title: string, front_matter: unknown }, chunks: Array<{ kinds: string[] }> }
  t.same(out.document.front_matter, { title: 'Bundled', tags: ['a', 'b'] }, 'yaml from its bundle')
  t.same(out.chunks[0]?.kinds, ['front_matter', 'heading', 'paragraph'], 'markdown-it from its bundle')
})

/** A log of about `mb` MB: a few batches of `--jsonl` output. */
const bigLog = (mb: number): string => {
  const lines: string[] = []
  for (let i = 0, size = 0; size < mb * 1e6; i++) {
    const line = `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z INFO worker-${i % 7} handled "request" ${i} in ${i % 97} ms ✓\n`
    lines.push(line)
    size += line.length
  }
  return lines.join('')
}

t.test('should read a file bigger than its read buffer whole, verified, for a whole-document and a streaming format', async (t) => {
  // The command reads a file into one buffer again and again: whatever keeps bytes past a read
  // (the whole-document gathering, the verifier before the first chunk) must hold a copy.
  const doc = Array.from({ length: 4000 }, (_, i) => `## Part ${i}\n\n${prose.slice(0, 300)} caf\u00e9 ${i}\n`).join('\n')
  const log = bigLog(1.5)
  for (const [name, text] of [['big.md', doc], ['big.log', log]] as const) {
    t.ok(Buffer.byteLength(text) > 1 << 20, `${name}: several reads`)
    const r = docsplit(['split', file(name, text), '--verify', '--max-tokens', '64'])
    t.equal(r.code, 0, r.stderr)
    t.match(r.stderr, /verified \d+ chunks?/)
    t.equal((JSON.parse(r.stdout).chunks as Array<{ text: string }>).map((c) => c.text).join(''), text, `${name}: the chunks are the file`)
  }
})

t.test('SIGTERM or Ctrl-C ends the JSONL output after a whole line, then the process by the signal', async (t) => {
  const log = file('signal.log', bigLog(6))
  // Standard input: the writer thread writes; a file under 32 MB: the main thread.
  for (const [from, signal] of [['stdin', 'SIGTERM'], ['file', 'SIGINT'], ['stdin', 'SIGINT'], ['file', 'SIGTERM']] as const) {
    const child = spawn(process.execPath, [bin, 'split', from === 'file' ? log : '-', '--jsonl', '--input-format', 'log'], { stdio: [from === 'file' ? 'ignore' : 'pipe', 'pipe', 'ignore'] })
    if (from === 'stdin') {
      // The process may end before it has read all of it.
      child.stdin!.on('error', () => {})
      child.stdin!.end(readFileSync(log))
    }
    // Output not read: the pipe fills and a write waits in the middle of its lines.
    await new Promise((resolve) => child.stdout!.once('readable', resolve))
    await new Promise((resolve) => setTimeout(resolve, 300))
    child.kill(signal)
    const parts: Buffer[] = []
    for await (const part of child.stdout!) parts.push(part as Buffer)
    const [, endedBy] = await new Promise<[number | null, string | null]>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve([child.exitCode, child.signalCode])
      else child.once('exit', (code, sig) => { resolve([code, sig]) })
    })
    const out = Buffer.concat(parts).toString('utf8')
    t.equal(endedBy, signal, `${from}, ${signal}: ended by the signal`)
    t.ok(out.length > 0 && out.endsWith('\n'), `${from}, ${signal}: the output ends at a line's end (${out.length} characters)`)
    t.ok(out.split('\n').slice(0, -1).every((line) => { try { return JSON.parse(line).text !== undefined } catch { return false } }), `${from}, ${signal}: every line is a chunk`)
  }

  // Output to a file is written synchronously, and a file is read so: the split gave the event
  // loop no turn, so the signal waited for the end of the split and was lost there (exit 0).
  const long = file('signal-long.log', bigLog(24))
  const outPath = join(dir, 'signal-long.jsonl')
  const child = spawn(process.execPath, [bin, 'split', long, '--jsonl', '--input-format', 'log'], { stdio: ['ignore', openSync(outPath, 'w'), 'ignore'] })
  while (statSync(outPath).size === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  child.kill('SIGTERM')
  const endedBy = await new Promise((resolve) => child.once('close', (code, sig) => { resolve(sig ?? code) }))
  const written = readFileSync(outPath, 'utf8')
  t.equal(endedBy, 'SIGTERM', 'output to a file: ended by the signal')
  t.ok(written.endsWith('\n'), 'at a line\'s end')
  const all = docsplit(['split', long, '--jsonl', '--input-format', 'log']).stdout
  t.ok(written.length < all.length, `not after the whole output (${written.length} of ${all.length} characters)`)
})

/**
 * `--jsonl` writes on a second thread for standard input (size unknown) and for files of 32 MB
 * or more, on the main thread for smaller files: each test runs both ways.
 */
const ways = (path: string): Array<{ way: string, args: string[], input?: Buffer }> => [
  { way: 'a file (main thread)', args: [path] },
  { way: 'standard input (writer thread)', args: ['-', '--input-format', 'log'], input: readFileSync(path) },
]

t.test('--jsonl writes the same lines as the response has chunks, on either thread', async (t) => {
  const path = file('big.log', bigLog(3))
  const whole = docsplit(['split', path, '--max-tokens', '128'])
  t.equal(whole.code, 0, whole.stderr)
  const chunks = JSON.parse(whole.stdout).chunks as unknown[]
  t.ok(chunks.length > 1000, `${chunks.length} chunks`)
  for (const { way, args, input } of ways(path)) {
    const lines = docsplit(['split', ...args, '--max-tokens', '128', '--jsonl'], input)
    t.equal(lines.code, 0, lines.stderr)
    t.equal(lines.stdout, chunks.map((c) => JSON.stringify(c) + '\n').join(''), `${way}: byte for byte, in order`)
  }
})

t.test('--jsonl on the writer thread keeps each chunk\'s context: CSV headers, markdown tables with different headers, chunks without', async (t) => {
  const table = (name: string, rows: number): string => `| ${name} id | ${name} value |\n|---|---|\n` +
    Array.from({ length: rows }, (_, i) => `| ${i} | ${name} row ${i} with a few words |`).join('\n') + '\n'
  const markdown = Array.from({ length: 60 }, (_, k) => `## Part ${k}\n\nSome prose before the table.\n\n${table(k % 3 === 0 ? 'alpha' : `t${k}`, 300)}\n`).join('\n')
  const csv = 'name,city,note\n' + Array.from({ length: 20_000 }, (_, i) => `n${i},"c, ${i}",note ${i}`).join('\n') + '\n'
  for (const [format, text] of [['markdown', markdown], ['csv', csv]] as const) {
    t.ok(text.length > 1 << 19, `${format}: more than two batches of text`)
    const whole = docsplit(['split', file(`contexts.${format === 'csv' ? 'csv' : 'md'}`, text), '--max-tokens', '128'])
    const chunks = JSON.parse(whole.stdout).chunks as Array<{ context?: string }>
    const contexts = new Set(chunks.map((c) => c.context))
    t.ok(contexts.size >= (format === 'csv' ? 1 : 3) && chunks.some((c) => c.context !== undefined), `${format}: ${contexts.size} distinct contexts`)
    const lines = docsplit(['split', '-', '--input-format', format, '--max-tokens', '128', '--jsonl'], Buffer.from(text))
    t.equal(lines.code, 0, lines.stderr)
    t.equal(lines.stdout, chunks.map((c) => JSON.stringify(c) + '\n').join(''), `${format}: byte for byte, in order`)
  }
})

t.test('--jsonl: a reader that stops early, a full disk, an input error half way', async (t) => {
  const { spawn } = await import('node:child_process')
  for (const { way, args, input } of ways(file('stop.log', bigLog(3)))) {
    const child = spawn(process.execPath, [bin, 'split', ...args, '--jsonl'], { stdio: ['pipe', 'pipe', 'pipe'] })
    child.stdin.on('error', () => {})
    child.stdin.end(input)
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    child.stdout.once('data', () => child.stdout.destroy())
    const code = await new Promise((resolve) => child.on('close', resolve))
    t.equal(code, 0, `${way}: a closed pipe is a normal way to stop`)
    t.equal(stderr, '')

    // --verify checks to the end all the same: its exit code must not say "passed" for a check cut short.
    const total = docsplit(['split', ...args, '--jsonl'], input).stdout.split('\n').length - 1
    for (const format of [['--jsonl'], []]) {
      const verifying = spawn(process.execPath, [bin, 'split', ...args, ...format, '--verify'], { stdio: ['pipe', 'pipe', 'pipe'] })
      verifying.stdin.on('error', () => {})
      verifying.stdin.end(input)
      let told = ''
      verifying.stderr.on('data', (d: Buffer) => { told += d.toString() })
      verifying.stdout.once('data', () => verifying.stdout.destroy())
      t.equal(await new Promise((resolve) => verifying.on('close', resolve)), 0, `${way} ${format.join('')}: --verify passed`)
      t.equal(told, `docsplit: note: the output's reader closed it; --verify goes on to the end of the input, writing nothing more\ndocsplit: verified ${total} chunks: lossless, offsets (characters, bytes, lines) and overlaps exact, every chunk within 512 tokens by recount\n`, `${way} ${format.join('')}: every chunk verified, not only those read`)
    }

    if (existsSync('/dev/full')) {
      const r = spawnSync(process.execPath, [bin, 'split', ...args, '--jsonl'], { input, stdio: ['pipe', openSync('/dev/full', 'w'), 'pipe'], encoding: 'utf8' })
      t.equal(r.status, 1)
      t.equal(r.stderr, 'docsplit: DOCSPLIT_INTERNAL: cannot write the output (ENOSPC)\n', `${way}: a full disk is a clear line, no stack trace`)
    }
  }

  const good = bigLog(2)
  for (const { way, args, input } of ways(file('broken.log', Buffer.concat([Buffer.from(good), Buffer.from([0xff]), Buffer.from('\n')])))) {
    const broken = docsplit(['split', ...args, '--jsonl'], input)
    t.equal(broken.code, 3)
    t.match(broken.stderr, /DOCSPLIT_INVALID_UTF8/)
    const out = broken.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as { text: string })
    t.ok(out.length > 100, `${way}: the chunks made before the error are written`)
    t.ok(good.startsWith(out.map((c) => c.text).join('')), 'in order, from the start')
  }
})

t.test('several files with --ndjson: one process, each between its header (naming it) and its trailer', async (t) => {
  const md = file('many-a.md', '# A\n\nFirst file.\n')
  const bad = file('many-b.json', 'nope') // refused before its first chunk: no header
  const csv = file('many-c.csv', 'x,y\n1,2\n')
  const missing = join(dir, 'many-missing.txt')
  const r = docsplit(['split', md, bad, missing, csv, '--ndjson', '--max-tokens', '64'])
  t.equal(r.code, 3, 'the first failure\'s code: an input error')
  t.same(r.stderr.trimEnd().split('\n'), [
    `docsplit: DOCSPLIT_PARSE_ERROR: ${JSON.stringify(bad)}: invalid JSON at line 1, column 2: invalid literal`,
    `docsplit: DOCSPLIT_READ_FAILED: ${JSON.stringify(missing)}: reading the input failed (ENOENT): no such file "${missing}"`,
  ], 'a line per failed file, naming it; the files after it still split')
  const lines = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
  const headers = lines.filter((l) => l.schema_version !== undefined)
  t.same(headers.map((h) => h.source), [md, csv], 'each file that split has a header naming it as given')
  const alone = [md, csv].flatMap((f) => docsplit(['split', f, '--ndjson', '--max-tokens', '64']).stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>))
  t.same(lines, alone, 'each file\'s lines are what it gives alone')

  const jsonl = docsplit(['split', md, csv, '--jsonl'])
  t.equal(jsonl.code, 2, 'chunk lines alone could not say which file they are from')
  t.match(jsonl.stderr, /docsplit split takes one FILE, or several with --ndjson/)
  t.equal(docsplit(['split', '-', '-', '--ndjson'], 'x').code, 2, 'standard input once')
  // What is wrong with the command fails it once, not once a file.
  for (const args of [['--max-tokens', '3'], ['--tokenizer', 'nope'], ['--splitter', 'nope'], ['--input-format', 'nope'], ['--encoding', 'nope'], ['--filename', 'x.md']]) {
    const once = docsplit(['split', md, csv, '--ndjson', ...args])
    t.equal(once.code, 2, args.join(' '))
    t.equal(once.stderr.trimEnd().split('\n').length, 1, `${args.join(' ')}: one line`)
    t.equal(once.stdout, '')
  }
})

t.test('boolean options take true or false, or stand alone, or --no-', async (t) => {
  const csv = file('h.csv', 'a,b\n1,2\n')
  const context = (args: string[]): unknown => {
    const r = docsplit(['split', csv, '--jsonl', ...args])
    t.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
    return (JSON.parse(r.stdout.split('\n')[0]!) as { context?: string }).context
  }
  t.equal(context([]), 'a,b', 'the header row is the context by default')
  t.equal(context(['--header']), 'a,b')
  t.equal(context(['--header', 'true']), 'a,b')
  for (const off of [['--header', 'false'], ['--header=false'], ['--no-header'], ['--header', 'FALSE'], ['--header=False']]) t.equal(context(off), undefined, off.join(' '))
  t.equal(context(['--header', 'True']), 'a,b')
  t.match(docsplit(['--help']).stdout, /--header \[true\|false\]/)
  // A value meant as a boolean is refused by the option's name, not taken for a second FILE.
  for (const [args, message] of [
    [['--header', 'no'], '--header takes true or false (or give --no-header), not "no"'],
    [['--header=0'], '--header takes true or false (or give --no-header), not "0"'],
    [['--no-header=true'], '--no-header takes no value; use --header true|false'],
  ] as const) {
    const r = docsplit(['split', csv, ...args])
    t.equal(r.code, 2, args.join(' '))
    t.equal(r.stderr, `docsplit: DOCSPLIT_INVALID_OPTION: ${message}; see docsplit --help\n`)
  }
  t.equal(docsplit(['split', '--header', csv, '--jsonl']).code, 0, 'a file after a bare boolean flag is still the FILE')
})

t.test('a usage error is one line', async (t) => {
  // parseArgs' own error (a value that starts with a dash and is no number), in one line
  const r = docsplit(['split', file('one.txt', 'x'), '--tokenizer', '-x'])
  t.equal(r.code, 2)
  t.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr)
  t.match(r.stderr, /^docsplit: DOCSPLIT_INVALID_REQUEST: Option '--tokenizer' argument is ambiguous\. /)
  const bogus = docsplit(['split', file('one.txt', 'x'), '--bogus'])
  t.equal(bogus.code, 2)
  t.match(bogus.stderr, /^docsplit: DOCSPLIT_UNKNOWN_OPTION: unknown option --bogus; accepted: --help, .*--max-tokens, .*--code-parsing, --separate-sections, --jsonl, --ndjson, --pretty, --verify \(see docsplit --help\)\n$/, 'the code the library and the service give, with the command\'s flags')
  t.match(docsplit(['serve', '--port', '9000']).stderr, /^docsplit: DOCSPLIT_UNKNOWN_OPTION: unknown option --port; accepted: --help, --version, --plugin; the service takes its settings \(port, limits\) from the environment/)
  t.match(docsplit(['split', file('one.txt', 'x'), '--max-tokens', 'abc']).stderr, /max_tokens must be an integer from 8 to 1000000 \(got "abc"\)/)
})

t.test('a slip of the keyboard in a flag or a command gets what it likely meant', async (t) => {
  const txt = file('slip.txt', 'x')
  t.match(docsplit(['split', txt, '--max-token', '64']).stderr, /^docsplit: DOCSPLIT_UNKNOWN_OPTION: unknown option --max-token \(did you mean "--max-tokens"\?\); accepted:/)
  t.match(docsplit(['splti', txt]).stderr, /^docsplit: DOCSPLIT_INVALID_REQUEST: unknown command "splti" \(did you mean "split"\?\); commands: split, formats, serve/)
  const forgot = docsplit([txt])
  t.equal(forgot.code, 2)
  t.equal(forgot.stderr, `docsplit: DOCSPLIT_INVALID_REQUEST: unknown command "${txt}"; to split that file: docsplit split ${txt}; commands: split, formats, serve (see docsplit --help)\n`)
})

t.test('an error is one line: a name given with control characters in it is quoted with escapes', async (t) => {
  const oneLine = (stderr: string): void => {
    t.match(stderr, /^docsplit: DOCSPLIT_[A-Z_]+: [^\n]*\n$/, 'one line')
    t.notMatch(stderr, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/, 'no control character but the line end')
  }
  const missing = docsplit(['split', 'no\nsuch\u001b[31mred\u009b.md'])
  t.equal(missing.code, 3)
  t.equal(missing.stderr, 'docsplit: DOCSPLIT_READ_FAILED: reading the input failed (ENOENT): no such file "no\\nsuch\\u001b[31mred\\u009b.md"\n')
  oneLine(missing.stderr)
  // Several files: the prefix naming the file is quoted alike.
  const several = docsplit(['split', '--ndjson', 'a\nb.md', file('fine.md', 'x')])
  t.equal(several.code, 3)
  t.match(several.stderr, /^docsplit: DOCSPLIT_READ_FAILED: "a\\nb\.md": reading the input failed \(ENOENT\): no such file "a\\nb\.md"\n$/)
  const dirName = join(dir, 'a\ndir')
  mkdirSync(dirName)
  oneLine(docsplit(['split', dirName]).stderr)
  // A file given without `split`: its hint is a word bash reads back as the same name.
  const forgot = docsplit([file('odd\nname.md', 'x')])
  t.equal(forgot.stderr, `docsplit: DOCSPLIT_INVALID_REQUEST: unknown command ${JSON.stringify(join(dir, 'odd\nname.md'))}; to split that file: docsplit split $'${join(dir, 'odd\\u000aname.md')}'; commands: split, formats, serve (see docsplit --help)\n`)
  const md = file('plain.md', 'x')
  // Labelled by what is bad: the values themselves would break the TAP lines.
  for (const [what, args] of [
    ['a command', ['splt\u001b]0;x\u0007']],
    ['a boolean', ['split', md, '--header', 'n\no']],
    ['a plugin module', ['split', md, '--plugin', './no\nsuch.js']],
    ['an option name', ['split', md, '--bo\ngus']],
    ['a tokenizer', ['split', md, '--tokenizer', 'to\nken']],
    ['a format', ['split', md, '--input-format', 'fo\u2028rmat']],
  ] as const) {
    const r = docsplit([...args])
    t.equal(r.code, 2, what)
    oneLine(r.stderr)
  }
})

t.test('formats and serve refuse a stray argument, as other bad arguments are refused', async (t) => {
  const formats = docsplit(['formats', 'extra'])
  t.equal(formats.code, 2)
  t.equal(formats.stdout, '', 'nothing listed')
  t.equal(formats.stderr, 'docsplit: DOCSPLIT_INVALID_REQUEST: docsplit formats takes no arguments, only flags; got "extra" (see docsplit --help)\n')
  // `serve` refuses it before it starts: it exits at once.
  const serve = docsplit(['serve', 'app.log', 'more'])
  t.equal(serve.code, 2)
  t.equal(serve.stderr, 'docsplit: DOCSPLIT_INVALID_REQUEST: docsplit serve takes no arguments, only flags; got "app.log" and 1 more (see docsplit --help)\n')
  t.equal(docsplit(['formats', '--json']).code, 0, 'flags alone still list')
})

t.test('a flag the command does not use is refused, not ignored', async (t) => {
  // `serve` checks its flags before it starts: it exits at once.
  for (const [args, message] of [
    // Not in the query: the service refuses a query parameter named as an option.
    [['serve', '--max-tokens', '256'], /docsplit serve takes no --max-tokens: split options are given with each request, in its body \(JSON members or form fields\), not to the service/],
    [['formats', '--max-tokens', '5'], /docsplit formats takes no --max-tokens; it takes --json, --help/],
    [['split', file('one.txt', 'x'), '--json'], /docsplit split takes no --json; it takes --jsonl, --ndjson, --pretty, --verify, the split options/],
    [['split', file('one.txt', 'x'), '--jsonl', '--pretty'], /--pretty indents the JSON response, --jsonl prints one chunk per line, --ndjson adds a header and a trailer line: give only one of --jsonl, --pretty/],
  ] as const) {
    const r = docsplit([...args])
    t.equal(r.code, 2, args.join(' '))
    t.match(r.stderr, message)
  }
  t.match(docsplit(['--help']).stdout, /--header \[true\|false\] \(or --no-header\)/, '--help names the negated boolean')
  // A command that is a name on every object's prototype is just an unknown command.
  for (const word of ['constructor', 'toString']) {
    const r = docsplit([word, '--bogus'])
    t.equal(r.code, 2, r.stderr)
    t.match(r.stderr, /DOCSPLIT_UNKNOWN_OPTION: unknown option --bogus/)
    t.match(docsplit([word]).stderr, new RegExp(`unknown command "${word}"`))
  }
})

t.test('a list option repeats (one value each) or takes a comma-separated list', async (t) => {
  const { buildXlsx } = await import('../helpers/xlsx-build.js')
  const book = file('regions.xlsx', buildXlsx([{ name: 'North, East', rows: [['n'], ['1']] }, { name: 'South', rows: [['s'], ['2']] }, { name: 'West', rows: [['w'], ['3']] }]))
  const sheetsOf = (args: string[]): unknown[] => {
    const r = docsplit(['split', book, ...args])
    t.equal(r.code, 0, r.stderr)
    return [...new Set((JSON.parse(r.stdout) as { chunks: Array<{ sheet: string }> }).chunks.map((c) => c.sheet))]
  }
  t.same(sheetsOf(['--sheets', 'West', '--sheets', 'North, East']), ['West', 'North, East'], 'repeated: a name with a comma stays whole, in order')
  t.same(sheetsOf(['--sheets', 'South,West']), ['South', 'West'], 'once: a comma-separated list')
  t.same(sheetsOf(['--sheets=3']), ['West'], 'a 1-based position')
})

t.test('a step that can never finish is an error naming it, not a silent exit 0', async (t) => {
  // Node exits once nothing is left to run, even while the command still waits.
  writeFileSync(join(dir, 'hangs.js'), `export default { kind: 'parser', name: 'hangs', docsplit: '^1', formats: ['hangs'], extensions: ['.hangs'], reads: 'text', defaultSplitter: 'record', create () { return { write () {}, end () {} } } }
await new Promise(() => {})
`)
  writeFileSync(join(dir, 'stalls.mjs'), `export default { kind: 'parser', name: 'stalls', docsplit: '^1', formats: ['stalls'], extensions: ['.stalls'], reads: 'text', defaultSplitter: 'record', create: () => new Promise(() => {}) }\n`)
  const run = (args: string[], env: Record<string, string> = {}): { code: number | null, stdout: string, stderr: string } => {
    // A timeout, should `serve` start listening instead.
    const r = spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env } })
    return { code: r.status, stdout: r.stdout, stderr: r.stderr }
  }
  const hangs = 'docsplit: DOCSPLIT_PLUGIN_LOAD_FAILED: plugin module "./hangs.js" never finished loading (a top-level await that never settles?)\n'
  const split = run(['split', file('h.txt', 'text\n'), '--plugin', './hangs.js'])
  t.equal(split.code, 2, 'the exit code of DOCSPLIT_PLUGIN_LOAD_FAILED, as for any plugin that fails to load')
  t.equal(split.stderr, hangs)
  t.equal(split.stdout, '')
  const serve = run(['serve'], { DOCSPLIT_PLUGINS: './hangs.js' })
  t.equal(serve.code, 2, serve.stdout)
  t.equal(serve.stderr, hangs)
  const stalls = run(['split', file('s.stalls', 'text\n'), '--plugin', './stalls.mjs'])
  t.equal(stalls.code, 1, 'past loading: an internal error')
  t.equal(stalls.stderr, 'docsplit: DOCSPLIT_INTERNAL: docsplit split stopped before it finished: it was waiting for the stalls parser\'s create(), which can never complete\n', 'naming the plugin step it waited for')
})

t.test('a plugin\'s timer keeps no command alive: a failed start exits with its code, a split once its output is out', async (t) => {
  writeFileSync(join(dir, 'ticks-throws.mjs'), 'setInterval(() => {}, 1000)\nthrow new Error(\'cannot start\')\n')
  writeFileSync(join(dir, 'ticks.mjs'), `setInterval(() => {}, 1000)
export default { kind: 'parser', name: 'ticks', docsplit: '^1', formats: ['ticks'], extensions: ['.ticks'], reads: 'text', defaultSplitter: 'record',
  create (ctx) { let text = ''; return { write (p) { text += p }, end () { let at = 0; for (const line of text.split(/(?<=\\n)/)) { ctx.emit({ type: 'record', start: at, end: at + line.length, text: line }); at += line.length } } } } }
`)
  // A timeout stands for "never exits" (status null).
  const run = (args: string[], env: Record<string, string> = {}): { code: number | null, stdout: string, stderr: string } => {
    const r = spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: 'utf8', timeout: 20_000, maxBuffer: 1 << 28, env: { ...process.env, HOST: '127.0.0.1', PORT: '0', ...env } })
    return { code: r.status, stdout: r.stdout, stderr: r.stderr }
  }
  const failed = /^docsplit: DOCSPLIT_PLUGIN_LOAD_FAILED: plugin module "\.\/ticks-throws\.mjs" threw while loading: cannot start\n$/
  for (const [args, env] of [[['formats', '--plugin', './ticks-throws.mjs']], [['serve', '--plugin', './ticks-throws.mjs']], [['serve'], { DOCSPLIT_PLUGINS: './ticks-throws.mjs' }]] as Array<[string[], Record<string, string>?]>) {
    const r = run(args, env)
    t.equal(r.code, 2, `${args.join(' ')} ${JSON.stringify(env ?? {})}: exits 2`)
    t.match(r.stderr, failed)
  }
  // A few MB of output through a pipe: all of it goes out before the exit.
  const lines = Array.from({ length: 60_000 }, (_, i) => `line ${i} of a document with a timer\n`).join('')
  const ok = run(['split', file('doc.ticks', lines), '--plugin', './ticks.mjs', '--max-tokens', '16'])
  t.equal(ok.code, 0, ok.stderr)
  const out = JSON.parse(ok.stdout) as { chunks: Array<{ text: string }> }
  t.equal(out.chunks.map((c) => c.text).join(''), lines, 'the whole response')
  const jsonl = run(['split', file('doc2.ticks', lines), '--plugin', './ticks.mjs', '--max-tokens', '16', '--jsonl'])
  t.equal(jsonl.code, 0, jsonl.stderr)
  t.equal(jsonl.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as { text: string }).text).join(''), lines, 'every line of JSONL')
})

t.test('after --, an argument that looks like --plugin is a file name', async (t) => {
  const name = '--plugin=notes.md'
  writeFileSync(join(dir, name), '# Notes\n\nA line.\n')
  const r = spawnSync(process.execPath, [bin, 'split', '--', name], { cwd: dir, encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  t.equal(JSON.parse(r.stdout).document.input_format, 'markdown')
})

t.test('a file that cannot be read is a one-line error, not a crash', { skip: process.getuid?.() !== 0 || spawnSync('setpriv', ['--version']).status !== 0 ? 'needs root and setpriv, to read as another user' : false }, async (t) => {
  const path = file('secret.md', '# Secret\n')
  spawnSync('chmod', ['000', path])
  spawnSync('chmod', ['755', dir])
  // env -i: the test runner's own hooks would write where that user may not.
  const r = spawnSync('env', ['-i', `PATH=${process.env.PATH ?? ''}`, 'setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, bin, 'split', path], { encoding: 'utf8' })
  t.equal(r.status, 3, r.stderr)
  t.match(r.stderr, /^docsplit: DOCSPLIT_READ_FAILED: reading the input failed \(EACCES\): cannot read ".*secret\.md"\n$/)
})

t.test('--jsonl on a stream that is still being written: chunks go out as they are made', async (t) => {
  const child = spawn(process.execPath, [bin, 'split', '-', '--jsonl', '--input-format', 'log', '--max-tokens', '64'], { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  const line = (i: number): string => `2024-01-01 10:00:${String(i % 60).padStart(2, '0')} INFO request ${i} served in ${i % 97} ms\n`
  let i = 0
  // A slow producer: some lines, then more only once a chunk has come out (or 10 s have passed).
  for (; i < 40; i++) child.stdin.write(line(i))
  const deadline = Date.now() + 10_000
  while (!out.includes('\n') && Date.now() < deadline) {
    child.stdin.write(line(i++))
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.ok(out.includes('\n'), `a chunk came out while the input was still open (after ${i} lines)`)
  child.stdin.end()
  const code = await new Promise((resolve) => child.on('close', resolve))
  t.equal(code, 0)
  t.equal(out.trimEnd().split('\n').map((l) => (JSON.parse(l) as { text: string }).text).join(''), Array.from({ length: i }, (_, k) => line(k)).join(''), 'and all of them, in order')
})

t.test('a file that shrinks while read (copytruncate) ends where its reading ended, with a note', async (t) => {
  const file = join(dir, 'rotating.log')
  const line = (i: number): string => `2024-01-01 10:00:00 INFO request ${i} served in ${i % 97} ms by worker ${i % 7}\n`
  const lines: string[] = []
  for (let i = 0, n = 0; n < 16 << 20; i++) n += (lines[i] = line(i)).length
  const original = lines.join('')
  writeFileSync(file, original)
  const child = spawn(process.execPath, [bin, 'split', file, '--jsonl'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  let out = ''
  child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
  // Once chunks come, stop reading them: the CLI waits on its output, so it stops reading the file.
  await new Promise<void>((resolve) => child.stdout.once('data', (d: Buffer) => { out += d.toString(); child.stdout.pause(); resolve() }))
  await new Promise((resolve) => setTimeout(resolve, 300))
  writeFileSync(file, '')
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stdout.resume()
  const code = await new Promise((resolve) => child.on('close', resolve))
  t.equal(code, 0, 'exit 0, as cat')
  const m = /docsplit: note: ".*rotating\.log" shrank while it was read: the chunks cover its first ([\d,]+) of the ([\d,]+) bytes it had when opened\n/.exec(stderr)
  t.ok(m !== null, `the note says so: ${stderr}`)
  const covered = Number(m?.[1]?.replace(/,/g, ''))
  t.equal(Number(m?.[2]?.replace(/,/g, '')), original.length)
  t.ok(covered > 0 && covered < original.length, `part of the file was read: ${covered}`)
  t.equal(out.trimEnd().split('\n').map((l) => (JSON.parse(l) as { text: string }).text).join(''), original.slice(0, covered), 'the chunks are the bytes read, in order')
})

t.test('a stream read for its format: a note says what the split waits for, and goes once the format is known', async (t) => {
  const run = async (args: string[]): Promise<{ stderr: string, out: string, code: unknown }> => {
    const child = spawn(process.execPath, [bin, 'split', '-', '--jsonl', ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
    let stderr = ''
    let out = ''
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    child.stdout.on('data', (d: Buffer) => { out += d.toString() })
    // A producer that stalls after its first line, as `tail -f app.log |` does: until the note
    // comes (a slow start on a loaded machine delays it) or, with nothing to wait for, 3.5 s.
    child.stdin.write('2024-01-01 10:00:00 INFO request 1 served\n')
    const stall = args.length === 0 ? 30_000 : 3500
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, stall)
      child.stderr.on('data', () => {
        if (!stderr.includes('note:')) return
        clearTimeout(timer)
        resolve()
      })
    })
    child.stdin.end('2024-01-01 10:00:01 INFO request 2 served\n')
    const code = await new Promise((resolve) => child.on('close', resolve))
    return { stderr, out, code }
  }
  // At once: each run mostly waits out its stalled producer.
  const givens = [['--input-format', 'log'], ['--filename', 'app.log']]
  const [auto, ...runs] = await Promise.all([run([]), ...givens.map(run)])
  t.equal(auto!.code, 0)
  t.equal(auto!.stderr, 'docsplit: note: waiting for 64 KiB of the input (or its end) to tell its format; with --input-format (log, jsonl, ...) it does not wait for them\n')
  t.equal(auto!.out.trimEnd().split('\n').length, 1, 'then the split as without it')
  for (const [i, given] of givens.entries()) {
    const named = runs[i]!
    t.equal(named.code, 0)
    t.equal(named.stderr, '', `${given.join(' ')}: no wait for the sample, no note`)
  }
})

t.test('standard input from a terminal says what it waits for', { skip: spawnSync('script', ['--version']).status === 0 ? false : 'script(1) is not installed' }, async (t) => {
  const typescript = join(dir, 'stdin.typescript')
  // In the foreground (a background job's standard input is /dev/null); ended at script's end of input, or by timeout.
  const r = spawnSync('script', ['-qfc', `timeout --foreground 20 ${process.execPath} ${bin} split - --jsonl`, typescript], { encoding: 'utf8', timeout: 60_000 })
  t.equal(r.status, 0, r.stderr)
  t.match(readFileSync(typescript, 'utf8'), /docsplit: reading standard input from the terminal: type the text, then Ctrl-D/)
})

t.test('the progress line on a terminal ends its line when the reader closes the pipe early', { skip: spawnSync('script', ['--version']).status === 0 ? false : 'script(1) is not installed' }, async (t) => {
  const log = file('progress.log', bigLog(24))
  const typescript = join(dir, 'progress.typescript')
  const r = spawnSync('script', ['-qfc', `${process.execPath} ${bin} split ${log} --jsonl | (sleep 1; head -c 1 > /dev/null); echo rc=$?`, typescript], { encoding: 'utf8', timeout: 60_000 })
  t.equal(r.status, 0, r.stderr)
  const seen = readFileSync(typescript, 'latin1')
  t.match(seen, /MB\/s/, 'the progress line was drawn')
  t.match(seen, /\r?\nrc=0/, 'what follows starts a line of its own')
  t.notMatch(seen, /\u001b\[Krc=0/, 'not glued to the progress line')
})

t.test('a bad option is a usage error before the FILE is opened, one FILE or several', async (t) => {
  for (const files of [[join(dir, 'missing.md')], [join(dir, 'missing.md'), join(dir, 'missing-too.md')]]) {
    const r = docsplit(['split', ...files, '--ndjson', '--max-tokens', '0'])
    t.equal(r.code, 2, `${files.length} FILE(s): exit 2, not the missing file's 3`)
    t.match(r.stderr, /^docsplit: DOCSPLIT_INVALID_BUDGET: /)
  }
})
