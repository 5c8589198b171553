/**
 * Every built-in plugin passes the same conformance kit that third-party plugins use.
 */
import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { checkPacker, checkParser, checkTokenizer, type Sample } from '../../testing.js'
import { definePlugin, listPackers, listParsers, listTokenizers, type Tokenizer, type TokenizerPlugin } from '../../index.js'
import { corpusFiles } from '../helpers/corpus.js'

/** A few small real samples per format (corpus when present), plus generated ones. */
const generated: Record<string, Sample[]> = {
  text: [{ name: 'paragraphs', input: 'One. Two three.\n\nFour 😀 five.\r\n\r\n\n日本語の文。\n' }],
  markdown: [{ name: 'document', input: '---\ntitle: T\n---\n# A\n\nText [x][r].\n\n- a\n- b\n\n```js\ncode\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[r]: https://example.com\n' }],
  log: [{ name: 'entries', input: '2024-01-01 10:00:00 INFO start\n2024-01-01 10:00:01 ERROR boom\njava.lang.Exception: x\n\tat a.b(C.java:1)\n2024-01-01 10:00:02 INFO end\n' }],
  csv: [{ name: 'quoted', input: 'id,name\r\n1,"a, b"\r\n2,"multi\nline"\r\n' }],
  json: [{ name: 'array', input: '[{"a": 1}, {"b": [1, 2, "日本"]}, 3]\n' }],
  jsonl: [{ name: 'lines', input: '{"a":1}\n\n{"b":2}\n' }],
  xml: [{ name: 'feed', input: '<?xml version="1.0"?>\n<root>\n  <item id="1">a &amp; b</item>\n  <item><![CDATA[x < y]]></item>\n  <!-- c -->\n</root>\n' }],
  yaml: [{ name: 'docs', input: 'a: 1\n# comment\nb:\n  - x\n  - y\n---\nc: 3\n' }],
  code: [{ name: 'python', input: 'import os\n\n\n@dec\ndef f(x):\n    return x\n\n\nclass A:\n    def m(self):\n        pass\n', options: { input_format: 'python' } }],
}

const corpusSample: Record<string, [string, string[]]> = {
  markdown: ['markdown', ['markdown-test-file.md']],
  log: ['log', ['fluent-bit-multiline-java-go.log']],
  csv: ['csv', ['simple.csv', 'quotes_and_newlines.csv']],
  yaml: ['yaml', ['ingress-nginx-deploy-cloud.yaml']],
}

for (const parser of listParsers()) {
  t.test(`parser ${parser.name} should pass the conformance kit`, async (t) => {
    const samples = [...(generated[parser.name] ?? [])]
    const [folder, names] = corpusSample[parser.name] ?? ['', []]
    for (const path of folder === '' ? [] : corpusFiles(folder).filter((p) => names.some((n) => p.endsWith(n)))) {
      samples.push({ name: path.split('/').pop()!, input: readFileSync(path) })
    }
    if (parser.reads === 'bytes') {
      const file = corpusFiles('xlsx', ['.xlsx'])[0]
      if (file !== undefined) samples.push({ name: 'workbook', input: readFileSync(file) })
    }
    if (samples.length === 0) return t.skip(`no sample for ${parser.name}`)
    await checkParser(parser, samples, { numRuns: 40, arbitrary: parser.reads === 'text' ? fc.string({ maxLength: 200 }) : undefined })
    t.pass(`${samples.length} samples and generated inputs`)
  })
}

for (const packer of listPackers()) {
  t.test(`splitter ${packer.name} should pass the conformance kit`, async (t) => {
    await checkPacker(packer, [
      { name: 'markdown', input: generated.markdown![0]!.input as string, options: { input_format: 'markdown' } },
      { name: 'log', input: generated.log![0]!.input as string, options: { input_format: 'log' } },
      { name: 'text', input: 'word '.repeat(400), options: { input_format: 'text' } },
    ], { budgets: [8, 64, 512] })
    t.pass('held')
  })
}

for (const tokenizer of listTokenizers()) {
  t.test(`tokenizer ${tokenizer.name} should pass the conformance kit`, async (t) => {
    if (tokenizer.available !== undefined && !(await tokenizer.available())) return t.skip(`${tokenizer.name} needs ${tokenizer.extra ?? 'a package'}`)
    await checkTokenizer(tokenizer, ['plain words', '    indented code();', '日本語'], { numRuns: 200 })
    t.pass('held')
  })
}

/** A tokenizer plugin that loads `tokenizer` under `name`: what the kit must catch is in `tokenizer`. */
const faulty = (name: string, tokenizer: Omit<Tokenizer, 'name'>): TokenizerPlugin =>
  definePlugin<TokenizerPlugin>({ kind: 'tokenizer', name, docsplit: '^1', load: () => ({ name, ...tokenizer }) })
const chars = (text: string): number => text.length

t.test('the kit catches a countMany that does not count like count', async (t) => {
  const badMany = faulty('chars-with-wrong-batches', { count: chars, countMany: async (texts: string[]) => texts.map((s) => s.length + 1) })
  await t.rejects(checkTokenizer(badMany, [], { numRuns: 50 }), { message: /countMany/ })
})

t.test('the kit catches a tally that does not count like the tokenizer', async (t) => {
  const words = (text: string): number => text.split(/\s+/).filter(Boolean).length
  const badTally = faulty('words-with-summing-tally', {
    count: words,
    // Sums the parts' counts: wrong when a word runs across two parts.
    tally: () => { let sum = 0; let last = 0; return { add: (s: string) => { last = words(s); return (sum += last) }, undo: () => (sum -= last) } },
  })
  await t.rejects(checkTokenizer(badTally, [], { numRuns: 200 }), { message: /tally/ })
})

t.test('the kit catches an exceeds that does not agree with count', async (t) => {
  // Off by one: says "over" at exactly the limit.
  const badExceeds = faulty('chars-with-wrong-exceeds', { count: chars, exceeds: (text: string, limit: number) => text.length >= limit })
  await t.rejects(checkTokenizer(badExceeds, [], { numRuns: 300 }), { message: /exceeds/ })
})
