import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { get_encoding, type TiktokenEncoding } from 'tiktoken'
import plugins, { ENCODINGS, MODEL_ALIASES, type EncodingName } from '../../../plugins/tokenizers/tiktoken/index.js'
import { loadEncoding } from '../../../plugins/tokenizers/tiktoken/load.js'
import { isRegistered, register, tokenizerByName } from '../../../core/registry.js'
import { DocsplitError } from '../../../core/errors.js'
import { corpusFiles, corpusMissing } from '../../helpers/corpus.js'

const tricky = [
  '',
  'hello world',
  'Hello <|endoftext|> world',
  '<|endoftext|><|fim_prefix|><|fim_middle|><|fim_suffix|><|im_start|><|im_end|><|endofprompt|>',
  'emoji 🎉🦊 👨‍👩‍👧 🇫🇷 zwj and flags',
  '日本語のテキスト。中文字符，한국어 문장입니다.',
  'Ωμέγα Привет мир नमस्ते สวัสดี ሰላም 𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '   \t\n\n\r\n    indented\n\u00A0\u3000',
  '12345678901234567890 3.14159 -42 1e10',
  "it's they're we've I'm you'll he'd",
  'lone surrogates \uD800 and \uDC00 here',
  // U+FEFF is white space to JavaScript's \s, not to tiktoken's (Rust's): a BOM, a zero-width no-break space.
  '\uFEFFHello world.',
  'a\uFEFFb \uFEFF\uFEFF x \uFEFFy end.\uFEFF\n\u00A0\uFEFFz \uFEFF \uFEFF\t\uFEFF\n\n',
  'x'.repeat(5000),
  // Single pieces over bpe-core.ts's LONG_PIECE: merged from a heap, the same ids.
  '的是不了人我在有他这'.repeat(200),
  // Long pieces that are not ASCII, found by their bytes: a BOM's bytes first, accented letters,
  // emoji whose parts cut characters in two (no UTF-8 of their own), Hangul, Thai.
  '\uFEFF' + 'äöüß'.repeat(150), 'é'.repeat(700), '🎉🦊👨‍👩‍👧'.repeat(120), '한국어문장입니다'.repeat(80), 'สวัสดีครับ'.repeat(80),
  '='.repeat(3000),
  Array.from({ length: 4000 }, (_, i) => 'etaoinshrdlu'[(i * 7919) % 12]).join(''),
]

function samples (): string[] {
  if (corpusMissing !== false) return []
  const out: string[] = []
  for (const folder of ['markdown', 'log', 'csv', 'json', 'xml', 'yaml']) {
    for (const file of corpusFiles(folder).slice(0, 2)) out.push(readFileSync(file, 'utf8').slice(0, 6000))
  }
  return out
}

const byName = new Map(plugins.map((p) => [p.name, p]))

t.test('plugins: names, extra, aliases, availability', async (t) => {
  t.same(plugins.map((p) => p.name), ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base'])
  for (const p of plugins) {
    t.equal(p.kind, 'tokenizer')
    t.equal(p.extra, 'gpt-tokenizer')
    t.equal(p.docsplit, '^1')
    t.equal(await p.available?.(), true)
  }
  t.ok(byName.get('o200k_base')?.aliases?.includes('gpt-4o'))
})

t.test('model aliases resolve through the registry', async (t) => {
  register(plugins)
  const expected: Record<string, EncodingName> = {
    'gpt-4o': 'o200k_base', 'gpt-4o-mini': 'o200k_base', 'gpt-4.1': 'o200k_base', 'gpt-4.1-mini': 'o200k_base',
    o1: 'o200k_base', o3: 'o200k_base', 'o4-mini': 'o200k_base', 'gpt-5': 'o200k_base',
    'gpt-4': 'cl100k_base', 'gpt-4-turbo': 'cl100k_base', 'gpt-3.5-turbo': 'cl100k_base',
    'text-embedding-3-small': 'cl100k_base', 'text-embedding-3-large': 'cl100k_base', 'text-embedding-ada-002': 'cl100k_base',
    'text-davinci-003': 'p50k_base', 'code-davinci-002': 'p50k_base', davinci: 'r50k_base',
  }
  for (const [model, encoding] of Object.entries(expected)) t.equal(tokenizerByName(model).name, encoding, model)
  for (const encoding of ENCODINGS) t.equal(tokenizerByName(encoding).name, encoding)
  const all = Object.values(MODEL_ALIASES).flat()
  t.equal(new Set(all).size, all.length, 'no alias names two encodings')
})

t.test('every model name tiktoken knows selects the encoding tiktoken gives it; dated and fine-tuned names by prefix', async (t) => {
  if (!isRegistered(plugins[0]!)) register(plugins)
  // p50k_edit and gpt2 have p50k_base's and r50k_base's ranks; they differ in special tokens only, counted as text here.
  const same: Record<string, string> = { p50k_edit: 'p50k_base', gpt2: 'r50k_base' }
  const known = JSON.parse(readFileSync(createRequire(import.meta.url).resolve('tiktoken/model_to_encoding.json'), 'utf8')) as Record<string, string>
  t.ok(Object.keys(known).length >= 90, 'tiktoken\'s own table, not an empty one')
  for (const [model, encoding] of Object.entries(known)) t.equal(tokenizerByName(model).name, same[encoding] ?? encoding, model)
  // Names in no table: Python tiktoken's prefixes resolve them (its `encoding_for_model`; the npm package has no prefixes), and docsplit's two more for fine-tunes.
  const byPrefix: Record<string, EncodingName> = {
    'gpt-4o-2099-12-31': 'o200k_base', 'GPT-4o-Mini-2024-07-18': 'o200k_base', 'gpt-5.1': 'o200k_base', 'gpt-5-codex': 'o200k_base',
    'o3-deep-research': 'o200k_base', 'o4-mini-high': 'o200k_base', 'gpt-oss-120b': 'o200k_base', 'chatgpt-4o-2025-01-01': 'o200k_base',
    'ft:gpt-4o-mini-2024-07-18:my-org::abc123': 'o200k_base', 'ft:gpt-4.1-nano-2025-04-14:org::x': 'o200k_base', 'ft:o4-mini-2025-04-16:org::x': 'o200k_base',
    'gpt-4-0125-preview': 'cl100k_base', 'gpt-35-turbo-16k': 'cl100k_base', 'gpt-3.5-turbo-instruct-0914': 'cl100k_base',
    'ft:gpt-3.5-turbo-0613:org::id': 'cl100k_base', 'ft:davinci-002:org::id': 'cl100k_base', 'ft:gpt-4-0613:org::id': 'cl100k_base',
    'gpt-3.5': 'cl100k_base', 'gpt-2': 'r50k_base',
  }
  for (const [model, encoding] of Object.entries(byPrefix)) t.equal(tokenizerByName(model).name, encoding, model)
  for (const model of ['gpt-4o x', 'gpt4o-2024', 'o2-mini', 'claude-3-opus']) t.throws(() => tokenizerByName(model), { code: 'DOCSPLIT_UNKNOWN_TOKENIZER' }, model)
})

for (const encoding of ENCODINGS) {
  t.test(`${encoding}: ids equal the tiktoken WASM ids, counts equal id lengths`, async (t) => {
    const tok = await loadEncoding(encoding)
    const loaded = await byName.get(encoding)!.load()
    t.equal(loaded.name, encoding)
    t.equal(loaded.cheap, false)
    const wasm = get_encoding(encoding as TiktokenEncoding)
    try {
      for (const s of [...tricky, ...samples()]) {
        const ids = tok.encode(s)
        const expected = Array.from(wasm.encode(s, [], []))
        t.same(ids, expected, `ids of ${JSON.stringify(s.slice(0, 40))}`)
        t.equal(loaded.count(s), expected.length, `count of ${JSON.stringify(s.slice(0, 40))}`)
      }
    } finally {
      wasm.free()
    }
  })
}

t.test('white space of every kind, U+FEFF among it: ids equal the tiktoken WASM ids (fast-check)', async (t) => {
  const alphabet = [' ', '  ', '\t', '\n', '\r\n', '\u000B', '\u000C', '\u0085', '\u00A0', '\u1680', '\u2007', '\u2028', '\u202F', '\u3000', '\uFEFF', '\u200B',
    'a', 'Word', 'ÉTÉ', '42', '1234', '.', '!!', '/', "'s", '日本', 'é', '\u0301', '🎉']
  const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 40 }).map((parts) => parts.join(''))
  for (const encoding of ['o200k_base', 'cl100k_base'] as const) {
    const tok = await loadEncoding(encoding)
    const wasm = get_encoding(encoding)
    try {
      const run = fc.check(fc.property(text, (s) => {
        const expected = Array.from(wasm.encode(s, [], []))
        return JSON.stringify(tok.encode(s)) === JSON.stringify(expected) && tok.count(s) === expected.length
      }), { numRuns: 300, seed: 37 })
      t.notOk(run.failed, `${encoding}: ids and counts equal tiktoken's${run.failed ? `; not for ${JSON.stringify(run.counterexample?.[0])}` : ''}`)
    } finally {
      wasm.free()
    }
  }
})

t.test('long pieces that are not ASCII: ids equal tiktoken\'s after 256 KB of them, when their parts are found by bytes', async (t) => {
  const texts = tricky.filter((s) => Buffer.byteLength(s) > 512 && !/^[\x00-\x7f]*$/.test(s))
  t.ok(texts.length >= 5, 'long pieces that are not ASCII among the tricky texts')
  for (const encoding of ['o200k_base', 'cl100k_base'] as const) {
    const tok = await loadEncoding(encoding)
    // 300 KB of one CJK piece: past the bytes after which the byte map is built.
    t.ok(tok.count('的是不了人我在有他这'.repeat(10_000)) > 0)
    const wasm = get_encoding(encoding)
    try {
      for (const s of texts) t.same(tok.encode(s), Array.from(wasm.encode(s, [], [])), `${encoding}: ids of ${JSON.stringify(s.slice(0, 20))}`)
    } finally {
      wasm.free()
    }
  }
})

t.test('long runs of one unit (blank lines, spaces, rules) count as tiktoken counts them, again from the cache', async (t) => {
  const units = ['\n', ' ', '\r\n', ' \n', '\t\n', '=', '-=', '\t', 'ab', '=-=-=-=+', '\u3000']
  const lengths = [257, 511, 513, 1000, 4097]
  for (const encoding of ['o200k_base', 'cl100k_base'] as const) {
    const loaded = await byName.get(encoding)!.load()
    const wasm = get_encoding(encoding)
    try {
      let wrong = 0
      let checked = 0
      // Twice over: the second pass reads the runs' counts from the cache, by unit and length.
      for (let pass = 0; pass < 2; pass++) {
        for (const unit of units) {
          for (const length of lengths) {
            const run = unit.repeat(Math.ceil(length / unit.length)).slice(0, length)
            for (const s of [run, `Title.${run}end.`, `${run}${unit.slice(0, 1)}x`]) {
              checked++
              if (loaded.count(s) !== wasm.encode(s, [], []).length) wrong++
            }
          }
        }
      }
      t.equal(wrong, 0, `${encoding}: ${checked} counts equal tiktoken's`)
    } finally {
      wasm.free()
    }
  }
})

t.test('special-token text is ordinary text and never throws', async (t) => {
  const tok = await byName.get('o200k_base')!.load()
  const s = 'before <|endoftext|> after'
  t.ok(tok.count(s) > tok.count('before  after'), 'counted as text, more than one token')
  t.ok(tok.count('<|endoftext|>') > 1)
})

t.test('a missing gpt-tokenizer is DOCSPLIT_TOKENIZER_UNAVAILABLE', async (t) => {
  const missing = async (): Promise<unknown> => { throw Object.assign(new Error("Cannot find package 'gpt-tokenizer' imported from /srv/app/x.js"), { code: 'ERR_MODULE_NOT_FOUND' }) }
  const err = await loadEncoding('o200k_base', missing).then(() => undefined, (e: unknown) => e)
  t.ok(err instanceof DocsplitError)
  const e = err as DocsplitError
  t.equal(e.code, 'DOCSPLIT_TOKENIZER_UNAVAILABLE')
  t.equal(e.status, 422)
  t.equal(e.exitCode, 4)
  t.equal(e.message, 'tokenizer "o200k_base" needs the optional package gpt-tokenizer: npm install gpt-tokenizer')
  t.notMatch(e.message, /\/srv\//, 'no server path in the message')
  const broken = await loadEncoding('cl100k_base', async () => ({ nothing: true })).then(() => undefined, (e: unknown) => e)
  t.equal((broken as DocsplitError).code, 'DOCSPLIT_TOKENIZER_UNAVAILABLE')
})
