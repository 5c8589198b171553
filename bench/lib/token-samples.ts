/**
 * Text samples per format for calibrating and testing the approx tokenizer, read at run time
 * (nothing is copied into the repo): the shared corpus (../shared/corpus), JS/TS sources,
 * TypeScript declaration files and English prose from node_modules, Python's standard library
 * (/usr/lib/python3.*) when installed, and CJK and other-script text from TypeScript's localized
 * diagnostic messages (node_modules/typescript/lib/<locale>/diagnosticMessages.generated.json).
 */
import { prng, randomBytes } from './prng.js'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..')
export const corpusDir = resolve(repo, '../shared/corpus')
const modules = join(repo, 'node_modules')

export const FORMATS = ['prose', 'markdown', 'code', 'declarations', 'python', 'log', 'csv', 'json', 'xml', 'yaml', 'cjk', 'i18n', 'data'] as const
export type SampleFormat = typeof FORMATS[number]

function walk (root: string, keep: (name: string) => boolean, out: string[] = []): string[] {
  if (!existsSync(root)) return out
  for (const name of readdirSync(root).sort()) {
    const full = join(root, name)
    // A link whose target is gone (a tool's build folder of another checkout) is skipped.
    const st = statSync(full, { throwIfNoEntry: false })
    if (st === undefined) continue
    if (st.isDirectory()) walk(full, keep, out)
    else if (keep(name)) out.push(full)
  }
  return out
}

/** Decodes UTF-8, falling back to windows-1252 for the corpus's Latin-1 files. */
function decode (bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes).replace(/^\uFEFF/, '')
  } catch {
    return new TextDecoder('windows-1252').decode(bytes)
  }
}

function read (file: string): string { return decode(readFileSync(file)) }

function corpusTexts (folder: string, exts: string[]): string[] {
  return walk(join(corpusDir, folder), (n) => exts.some((e) => n.toLowerCase().endsWith(e))).map(read)
}

/** Joins small files so that each text is long enough to cut pieces of up to ~2000 tokens. */
function batch (texts: string[], minChars = 24_000): string[] {
  const out: string[] = []
  let cur = ''
  for (const t of texts) {
    if (t.length >= minChars) { out.push(t); continue }
    cur = cur === '' ? t : cur + '\n' + t
    if (cur.length >= minChars) { out.push(cur); cur = '' }
  }
  if (cur !== '') out.push(cur)
  return out
}

/** The dependencies of every kind that package.json names, sorted. */
function namedPackages (): string[] {
  const pkg = JSON.parse(read(join(repo, 'package.json'))) as Record<string, Record<string, string> | undefined>
  return [...new Set(['dependencies', 'optionalDependencies', 'devDependencies'].flatMap((k) => Object.keys(pkg[k] ?? {})))].sort()
}

function prose (): string[] {
  const out: string[] = []
  const gsm = join(corpusDir, 'json/gsm8k-test.jsonl')
  if (existsSync(gsm)) {
    const lines = read(gsm).split('\n').filter((l) => l.trim() !== '')
    out.push(lines.map((l) => { const o = JSON.parse(l) as { question: string, answer: string }; return `${o.question}\n\n${o.answer}` }).join('\n\n'))
  }
  const sonnets = join(corpusDir, 'json/corpora-shakespeare-sonnets.json')
  if (existsSync(sonnets)) {
    const o = JSON.parse(read(sonnets)) as { sonnets: Array<{ lines: string[] }> }
    out.push(o.sonnets.map((s) => s.lines.join('\n')).join('\n\n'))
  }
  // Paragraph lines of package READMEs (outside code fences, not tables or lists): the packages
  // package.json names, so that the sample does not change with how npm lays out the rest.
  const paras: string[] = []
  for (const file of namedPackages().map((d) => join(modules, d, 'README.md')).filter(existsSync)) {
    let fence = false
    for (const line of read(file).split('\n')) {
      if (/^\s*(```|~~~)/.test(line)) { fence = !fence; continue }
      if (!fence && /^[A-Z][a-z]/.test(line) && line.length > 60 && !line.includes('|') && !line.includes('](')) paras.push(line)
    }
  }
  out.push(...batch(paras.map((p) => p + '\n')))
  return out
}

/** Hand-written JS and TS sources of installed packages (no bundles, no generated .d.ts). */
function code (): string[] {
  const dirs = ['ajv/lib', 'gpt-tokenizer/src', 'glob/src', 'piscina/src', 'markdown-it/lib', 'fastify/lib', 'semver/classes', 'semver/ranges', 'semver/functions', 'sax/lib', 'csv-parse/lib', 'yaml/dist/parse', 'yaml/dist/compose']
  const files: string[] = []
  for (const d of dirs) {
    files.push(...walk(join(modules, d), (n) => /\.(js|mjs|cjs|ts)$/.test(n) && !n.endsWith('.d.ts') && !n.endsWith('.min.js') && !n.includes('.test.')).slice(0, 40))
  }
  return batch(files.map(read).filter((t) => t.length < 300_000 && !t.split('\n').some((l) => l.length > 400)))
}

/** FNV-1a of a string: picks files by name, the same on every machine. */
function hash (s: string): number {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619)
  return h >>> 0
}

/**
 * Files of one half of `files` (by a hash of the path under `root`), in hash order, until
 * `bytes`: the other half never enters the samples, so inputs drawn from it (bench/inputs.ts
 * draws from both) test files the fit has not seen.
 */
function sampleHalf (files: string[], root: string, bytes: number): string[] {
  const out: string[] = []
  let total = 0
  for (const f of files.map((f) => ({ f, h: hash(f.slice(root.length)) })).filter((x) => (x.h & 1) === 0).sort((a, b) => a.h - b.h || (a.f < b.f ? -1 : 1))) {
    const size = statSync(f.f).size
    if (size === 0 || size > 256 * 1024) continue
    out.push(f.f)
    total += size
    if (total >= bytes) break
  }
  return out
}

/**
 * TypeScript declaration files of installed packages: long string-literal unions (model names,
 * encodings, locales), enums of character codes and generated tables, which read as cheap words
 * and numbers but cost the real encodings 2-3 tokens each.
 */
function declarations (): string[] {
  return batch(sampleHalf(walk(modules, (n) => n.endsWith('.d.ts')), modules, 1_500_000).map(read))
}

/** Python's standard library (codec tables, locale maps and plain code), when installed. */
function python (): string[] {
  const root = ['/usr/lib'].flatMap((d) => existsSync(d) ? readdirSync(d).filter((n) => /^python3\.\d+$/.test(n)).sort().map((n) => join(d, n)) : []).pop()
  if (root === undefined) return []
  return batch(sampleHalf(walk(root, (n) => n.endsWith('.py')), root, 1_500_000).map(read))
}

function diagnostics (locales: string[]): string[] {
  const out: string[] = []
  for (const loc of locales) {
    const file = join(modules, 'typescript/lib', loc, 'diagnosticMessages.generated.json')
    if (!existsSync(file)) continue
    const o = JSON.parse(read(file)) as Record<string, string>
    out.push(Object.values(o).join('\n'))
  }
  return out
}

/**
 * Encoded data as documents carry it: PEM certificates, images inlined as data URIs in markdown,
 * base64 and base64url fields in JSON, hex digests. Random bytes, like the compressed or
 * encrypted payloads such text usually holds, from a fixed seed (the same on every machine).
 */
function data (): string[] {
  const random = prng(2026)
  const bytes = (n: number): Buffer => randomBytes(random, n)
  const size = (): number => 200 + Math.floor(random() * 3000)
  const pem: string[] = []
  const images: string[] = []
  const json: string[] = []
  const digests: string[] = []
  for (let i = 0; i < 40; i++) {
    const lines = bytes(size()).toString('base64').match(/.{1,64}/g)!.join('\n')
    pem.push(`-----BEGIN CERTIFICATE-----\n${lines}\n-----END CERTIFICATE-----\n`)
    images.push(`Figure ${i + 1} shows the result.\n\n![figure ${i + 1}](data:image/png;base64,${bytes(size()).toString('base64')})\n`)
    json.push(`{"id": ${i}, "token": "${bytes(32).toString('base64url')}.${bytes(96).toString('base64url')}", "payload": "${bytes(size()).toString('base64')}"}`)
    for (let j = 0; j < 40; j++) digests.push(`${bytes(32).toString('hex')}  dist/chunk-${bytes(4).toString('hex')}.js`)
  }
  return [pem.join(''), images.join('\n'), json.join('\n'), digests.join('\n')]
}

/** The sample texts of one format (empty when its source is missing). */
export function formatTexts (format: SampleFormat): string[] {
  switch (format) {
    case 'prose': return prose()
    case 'markdown': return corpusTexts('markdown', ['.md'])
    case 'code': return code()
    case 'declarations': return declarations()
    case 'python': return python()
    case 'log': return corpusTexts('log', ['.log', '.txt', '.jsonl', '.json'])
    case 'csv': return batch(corpusTexts('csv', ['.csv', '.tsv']))
    case 'json': return batch(corpusTexts('json', ['.json', '.jsonl']))
    case 'xml': return batch(corpusTexts('xml', ['.xml', '.rss', '.atom', '.svg', '.osm', '.tei', '.xhtml', '.html', '.kml', '.gpx']))
    case 'yaml': return batch(corpusTexts('yaml', ['.yaml', '.yml']))
    case 'cjk': return diagnostics(['ja', 'ko', 'zh-cn', 'zh-tw'])
    case 'i18n': return diagnostics(['ru', 'cs', 'pl', 'tr', 'de', 'fr', 'es', 'it', 'pt-br'])
    case 'data': return data()
  }
}

export { prng as rng }

/**
 * Cuts texts into consecutive pieces of about `min`..`max` tokens (log-uniform sizes), using
 * `charsPerToken` of the text to turn a token target into a cut position. Pieces never split a
 * surrogate pair. Callers keep the pieces whose exact counts fall in the range.
 */
export function cutPieces (texts: string[], random: () => number, charsPerToken: (text: string) => number, min = 50, max = 2000): string[] {
  const pieces: string[] = []
  for (const text of texts) {
    const cpt = Math.max(0.5, charsPerToken(text))
    let at = 0
    while (at < text.length) {
      const tokens = Math.exp(Math.log(min) + random() * (Math.log(max) - Math.log(min)))
      let end = Math.min(text.length, at + Math.max(1, Math.round(tokens * cpt)))
      const c = text.charCodeAt(end - 1)
      if (c >= 0xD800 && c <= 0xDBFF && end < text.length) end++
      pieces.push(text.slice(at, end))
      at = end
    }
  }
  return pieces
}
