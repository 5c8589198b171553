/**
 * Hostile inputs, shared by the CLI, library and HTTP suites. Each case says what it is, how to
 * send it (text or bytes, options, file name), and which outcomes are acceptable: a documented
 * error code, or a valid split (checked with `invariantProblems`).
 */
import zlib from 'node:zlib'
import { makeZip, buildXlsx, readZip } from '../helpers/xlsx-build.js'

export interface HostileCase {
  name: string
  /** The document (a string goes to the text endpoint too; bytes only to the file endpoint). */
  input: string | Buffer
  filename: string
  options?: Record<string, string | number>
  /** Error codes that are an acceptable answer. */
  codes: string[]
  /** A valid split is an acceptable answer too. */
  splitOk: boolean
  /** Also send through the JSON text endpoint (strings that fit the body limit). */
  text?: boolean
  /** Extra check on a successful split (e.g. no external entity content). */
  forbid?: RegExp
  /** A known bug: the case is expected to fail until fixed (reported, tap todo). */
  knownBug?: string
}

const MB5 = 5_000_000

function xmlBillionLaughs (): string {
  const lines = ['<?xml version="1.0"?>', '<!DOCTYPE lolz [', ' <!ENTITY lol "lol">']
  lines.push(' <!ENTITY lol1 "' + '&lol;'.repeat(10) + '">')
  for (let i = 2; i <= 9; i++) lines.push(` <!ENTITY lol${i} "` + `&lol${i - 1};`.repeat(10) + '">')
  lines.push(']>', '<lolz><a>&lol9;</a><a>&lol9;</a></lolz>', '')
  return lines.join('\n')
}

function yamlBillionLaughs (): string {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
  const names = 'abcdefghi'
  for (let i = 1; i < names.length; i++) {
    const prev = names[i - 1]!
    lines.push(`${names[i]}: &${names[i]} [${Array(9).fill(`*${prev}`).join(',')}]`)
  }
  lines.push('')
  return lines.join('\n')
}

/** A zip bomb dressed as an XLSX: a real workbook whose sheet part claims 1000 bytes and inflates to 128 MiB. */
function xlsxBomb (): Buffer {
  const good = readZip(buildXlsx([{ name: 'S', rows: [['a', 'b'], [1, 2]] }]))
  const zeros = zlib.deflateRawSync(Buffer.alloc(128 * 1024 * 1024), { level: 9 })
  return makeZip([
    ...good.filter((e) => !/sheet1\.xml$/.test(e.name)).map((e) => ({ name: e.name, data: e.data })),
    { name: 'xl/worksheets/sheet1.xml', compressed: zeros, usize: 1000 },
  ])
}

/** The same bomb with honest headers (declares 128 MiB). */
export function xlsxHonestBomb (): Buffer {
  const good = readZip(buildXlsx([{ name: 'S', rows: [['a', 'b'], [1, 2]] }]))
  const zeros = zlib.deflateRawSync(Buffer.alloc(128 * 1024 * 1024), { level: 9 })
  return makeZip([
    ...good.filter((e) => !/sheet1\.xml$/.test(e.name)).map((e) => ({ name: e.name, data: e.data })),
    { name: 'xl/worksheets/sheet1.xml', compressed: zeros, usize: 128 * 1024 * 1024 },
  ])
}

function utf16leNoBom (text: string): Buffer {
  return Buffer.from(text, 'utf16le')
}

/** `n` characters of JavaScript declarations on one line, as a minifier writes them. */
function minifiedJs (n: number): string {
  const parts: string[] = []
  let length = 0
  for (let i = 0; length < n; i++) {
    const part = `function f${i}(a,b){var c=a+b;if(c>${i}){return c*2}else{return [a,b,"x${i}"].join(",")}};`
    parts.push(part)
    length += part.length
  }
  return parts.join('')
}

export function hostileCases (): HostileCase[] {
  const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(40) + '\n'
  return [
    { name: 'XML billion laughs', input: xmlBillionLaughs(), filename: 'lol.xml', codes: ['DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_LIMIT_EXCEEDED'], splitOk: true, text: true, forbid: /(lol){50}/ },
    { name: 'XML external entity (file)', input: '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n<r><a>&xxe;</a><a>x</a></r>\n', filename: 'xxe.xml', codes: ['DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_LIMIT_EXCEEDED'], splitOk: true, text: true, forbid: /root:/ },
    // The http entity points at a loopback listener the suites watch: it must never be connected.
    { name: 'XML external entity (http)', input: '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY xxe SYSTEM "http://127.0.0.1:@PORT@/xxe">]>\n<r><a>&xxe;</a><a>x</a></r>\n', filename: 'xxe-http.xml', codes: ['DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_LIMIT_EXCEEDED'], splitOk: true, text: true, forbid: /XXE-PAYLOAD/ },
    { name: 'XML 100,000 elements never closed', input: '<root>' + '<item><t>text</t><body>lorem '.repeat(100_000), filename: 'open.xml', codes: ['DOCSPLIT_LIMIT_EXCEEDED'], splitOk: false, text: true },
    { name: 'YAML billion laughs', input: yamlBillionLaughs(), filename: 'lol.yaml', codes: ['DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_LIMIT_EXCEEDED'], splitOk: true, text: true, forbid: /(lol.{0,4}){2000}/s },
    { name: 'YAML 20,000 nested block sequences', input: '- '.repeat(20_000) + 'x\n', filename: 'deep.yaml', codes: ['DOCSPLIT_LIMIT_EXCEEDED'], splitOk: false, text: true },
    { name: 'markdown front matter 20,000 deep', input: '---\n' + '- '.repeat(20_000) + 'x\n---\n# Title\n', filename: 'front.md', codes: [], splitOk: true, text: true },
    { name: 'JSON nested 100,000 deep', input: '['.repeat(100_000) + ']'.repeat(100_000), filename: 'deep.json', codes: ['DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_LIMIT_EXCEEDED'], splitOk: true, text: true },
    { name: 'JSON objects nested 100,000 deep', input: '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000), filename: 'deep-obj.json', codes: ['DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_LIMIT_EXCEEDED'], splitOk: true, text: true },
    { name: '5 MB single line (words)', input: 'lorem ipsum dolor sit amet '.repeat(Math.floor(MB5 / 27)), filename: 'line.txt', codes: [], splitOk: true, text: true },
    { name: '5 MB run of one character', input: 'a'.repeat(MB5), filename: 'run.txt', codes: [], splitOk: true, text: true },
    // Minified code: every declaration on one line (the syntax walk once read that line per node).
    { name: 'JavaScript minified, 4 MB on one line', input: minifiedJs(4_000_000), filename: 'bundle.min.js', codes: [], splitOk: true },
    { name: '1 MB run of one character (markdown)', input: '#'.repeat(1_000_000), filename: 'run.md', codes: [], splitOk: true },
    { name: 'invalid UTF-8 at start', input: Buffer.concat([Buffer.from([0x80, 0x81, 0xfd]), Buffer.from(prose)]), filename: 'bad-start.txt', codes: ['DOCSPLIT_INVALID_UTF8'], splitOk: false },
    { name: 'invalid UTF-8 in the middle', input: Buffer.concat([Buffer.from(prose), Buffer.from([0xc3, 0x28]), Buffer.from(prose)]), filename: 'bad-mid.txt', codes: ['DOCSPLIT_INVALID_UTF8'], splitOk: false },
    { name: 'invalid UTF-8 at end (truncated sequence)', input: Buffer.concat([Buffer.from(prose), Buffer.from([0xe2, 0x82])]), filename: 'bad-end.txt', codes: ['DOCSPLIT_INVALID_UTF8'], splitOk: false },
    { name: 'NUL bytes', input: ('abc\u0000def\u0000\n\u0000\u0000\u0000' + prose).repeat(50), filename: 'nul.txt', codes: ['DOCSPLIT_PARSE_ERROR'], splitOk: true, text: true },
    { name: 'UTF-16LE without BOM', input: utf16leNoBom('# Title\n\n' + prose.repeat(20)), filename: 'utf16.md', codes: ['DOCSPLIT_INVALID_UTF8', 'DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_UNSUPPORTED_ENCODING'], splitOk: true },
    { name: 'UTF-16BE without BOM, auto format', input: Buffer.from(utf16leNoBom('a,b\n1,2\n'.repeat(200)).swap16()), filename: 'utf16', codes: ['DOCSPLIT_INVALID_UTF8', 'DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_UNSUPPORTED_FORMAT', 'DOCSPLIT_UNSUPPORTED_ENCODING'], splitOk: true },
    { name: 'CSV unterminated quote at start', input: '"name,value\n' + 'x,1\n'.repeat(10_000), filename: 'quote.csv', codes: ['DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_LIMIT_EXCEEDED'], splitOk: true, text: true },
    { name: 'markdown 50,000 nested list markers', input: '- '.repeat(50_000) + 'deep\n', filename: 'lists.md', codes: ['DOCSPLIT_LIMIT_EXCEEDED', 'DOCSPLIT_PARSE_ERROR'], splitOk: true, text: true },
    { name: 'markdown 2,000 nested lists (indented lines)', input: Array.from({ length: 2_000 }, (_, i) => ' '.repeat(i * 2) + '- x').join('\n') + '\n', filename: 'lists2.md', codes: ['DOCSPLIT_LIMIT_EXCEEDED', 'DOCSPLIT_PARSE_ERROR'], splitOk: true },
    { name: 'markdown 50,000 nested blockquotes', input: '>'.repeat(50_000) + ' deep\n', filename: 'quotes.md', codes: ['DOCSPLIT_LIMIT_EXCEEDED', 'DOCSPLIT_PARSE_ERROR'], splitOk: true, text: true },
    { name: 'log: 1 MB of spaces', input: ' '.repeat(1_000_000) + '\n', filename: 'spaces.log', codes: [], splitOk: true, text: true },
    { name: 'log: aaaa...! lines', input: ('a'.repeat(100_000) + '!\n').repeat(10), filename: 'aaa.log', codes: [], splitOk: true, text: true },
    { name: 'log: timestamp-like 1 MB line', input: '2024-01-01 ' + '2024-01-01 '.repeat(90_000) + '\n', filename: 'ts.log', codes: [], splitOk: true, text: true },
    { name: 'log: user log_start with catastrophic backtracking', input: ('a'.repeat(5_000) + '!\n').repeat(20), filename: 'redos.log', options: { log_start: '^(a+)+$' }, codes: ['DOCSPLIT_INVALID_OPTION', 'DOCSPLIT_TIMEOUT'], splitOk: true, text: true },
    { name: 'log: user log_start with polynomial backtracking', input: ('a'.repeat(1000) + '\n').repeat(5), filename: 'poly.log', options: { log_start: '^a*a*a*a*a*b' }, codes: ['DOCSPLIT_INVALID_OPTION'], splitOk: false },
    { name: 'XLSX zip bomb (lying header, 128 MiB of zeros)', input: xlsxBomb(), filename: 'bomb.xlsx', codes: ['DOCSPLIT_LIMIT_EXCEEDED', 'DOCSPLIT_PARSE_ERROR'], splitOk: false },
    { name: 'XLSX zip bomb (honest header)', input: xlsxHonestBomb(), filename: 'bomb2.xlsx', codes: ['DOCSPLIT_LIMIT_EXCEEDED'], splitOk: false },
    { name: 'XLSX that is not a zip', input: Buffer.from('PK\u0003\u0004 this is not really a zip '.repeat(100)), filename: 'fake.xlsx', codes: ['DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_LIMIT_EXCEEDED'], splitOk: false },
  ]
}
