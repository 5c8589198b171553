// Worker thread for fuzz.test.ts: runs fast-check properties for one format against the built
// engine (dist/), telling the main thread before and after each case so that a case that runs
// past its bound can be caught (the main thread terminates this worker and keeps the input).
// Plain JavaScript: worker threads load it with Node's own loader.
import { parentPort, workerData } from 'node:worker_threads'
import fc from 'fast-check'
import { split, isDocsplitError } from '../../dist/index.js'
import { invariantProblems } from '../../dist/testing.js'
import { tokenizerByName } from '../../dist/core/registry.js'

const { formats = [], reads, numRuns, seed, seeds } = workerData
let format = formats[0]
const approx = await tokenizerByName('approx').load()

/** Pieces that reach the corners of every built-in format's grammar. */
const TOKENS = ['\n', '\r\n', '\r', ' ', '  ', '\t', '"', "'", ',', ';', '|', ':', '-', '- ', '* ', '#', '# ', '## ', '>', '<', '/>', '</', '<a>', '</a>', '<?xml version="1.0"?>', '<!--', '-->', '<![CDATA[', ']]>', '<!DOCTYPE r [<!ENTITY e "x">]>', '&e;', '&amp;', '&#0;',
  '{', '}', '[', ']', '{"a":', '1', '-0', '1e999', 'null', 'true', '\\', '\\u0000', '\\ud800', '---', '...', '&a ', '*a', '!!binary', '? ', '%YAML 1.2', '```', '~~~', '    ', '1. ', '[x]: http://a "t"', '|', '|---|', '<div>',
  '2024-01-01T00:00:00Z ', 'ERROR ', '[INFO] ', 'Jan  1 00:00:00 host app[1]: ', 'Traceback (most recent call last):', '  File "a.py", line 1',
  'def ', 'class ', 'function ', 'fn ', 'func ', '(', ')', '{}', ';', '//', '/*', '*/', '#!', '@', '=>', 'a', 'é', '😀', '\u200d', '\u0301', '\u0000', '\ufeff', '\u2028', '\ud800', '\udfff']

const structured = fc.array(fc.constantFrom(...TOKENS), { maxLength: 80 }).map((a) => a.join(''))
const strings = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 200 }), structured)
const bytes = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  structured.map((s) => new TextEncoder().encode(s)),
  fc.tuple(fc.constantFrom([0xef, 0xbb, 0xbf], [0xff, 0xfe], [0xfe, 0xff], [0x50, 0x4b, 0x03, 0x04]), fc.uint8Array({ maxLength: 200 })).map(([p, b]) => Uint8Array.from([...p, ...b])),
)
const budgets = fc.constantFrom(8, 16, 64, 512)
const splitters = fc.constantFrom(undefined, 'sibling', 'record')

function sourceOf (input) {
  if (typeof input === 'string') return input
  if ((readsNow ?? reads) === 'bytes') return undefined
  if (input[0] === 0xff && input[1] === 0xfe) return new TextDecoder('utf-16le').decode(input.subarray(2))
  if (input[0] === 0xfe && input[1] === 0xff) return new TextDecoder('utf-16be').decode(input.subarray(2))
  try { return new TextDecoder('utf-8', { fatal: true }).decode(input).replace(/^\uFEFF/, '') } catch { return undefined }
}

/**
 * Byte offsets index the input as received (README: a BOM and the source encoding included),
 * while invariantProblems counts UTF-8 bytes of the decoded text. For an input with a BOM or in
 * UTF-16, check the received-byte offsets here and rewrite them to the UTF-8 ones in place.
 */
function byteOffsetsProblem (input, response, source) {
  if (typeof input === 'string' || source === undefined) return undefined
  const utf16 = (input[0] === 0xff && input[1] === 0xfe) || (input[0] === 0xfe && input[1] === 0xff)
  const utf8Bom = input[0] === 0xef && input[1] === 0xbb && input[2] === 0xbf
  if (!utf16 && !utf8Bom) return undefined
  // Code point index -> UTF-16 index of the decoded text.
  const cps = []
  for (let i = 0; i < source.length; i++) {
    cps.push(i)
    const c = source.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < source.length) { const d = source.charCodeAt(i + 1); if (d >= 0xdc00 && d <= 0xdfff) i++ }
  }
  cps.push(source.length)
  for (const c of response.chunks) {
    const from = cps[c.char_start]
    const to = cps[c.char_end]
    if (from === undefined || to === undefined) return undefined
    const start = utf16 ? 2 + 2 * from : 3 + Buffer.byteLength(source.slice(0, from), 'utf8')
    const end = utf16 ? 2 + 2 * to : 3 + Buffer.byteLength(source.slice(0, to), 'utf8')
    if (c.byte_start !== start || c.byte_end !== end) return `chunk ${c.index}: bytes [${c.byte_start}, ${c.byte_end}) of the input as received, expected [${start}, ${end})`
    c.byte_start = Buffer.byteLength(source.slice(0, from), 'utf8')
    c.byte_end = c.byte_start + Buffer.byteLength(c.text, 'utf8')
  }
  return undefined
}

const show = (input) => typeof input === 'string' ? { string: input } : { base64: Buffer.from(input).toString('base64') }

async function oneCase (input, max, splitter, given) {
  const options = given ?? { input_format: format, max_tokens: max, ...(splitter !== undefined ? { splitter } : {}) }
  parentPort.postMessage({ kind: 'begin', format, input: show(input), options })
  let response
  try {
    response = await split(input, options)
  } catch (error) {
    parentPort.postMessage({ kind: 'end' })
    if (isDocsplitError(error)) return
    throw new Error(`threw ${error?.constructor?.name}: ${String(error?.message).slice(0, 200)} (only DocsplitError may leave the engine)`)
  }
  parentPort.postMessage({ kind: 'end' })
  const source = sourceOf(input)
  if (source === undefined && (readsNow ?? reads) === 'text' && typeof input !== 'string') {
    // Bytes that are not UTF-8 (nor UTF-16 with a BOM) must not split as UTF-8 by default.
    throw new Error('split succeeded on input that is not valid UTF-8')
  }
  const shift = byteOffsetsProblem(input, response, source)
  if (shift !== undefined) throw new Error(`invariants: ${shift}`)
  const problems = invariantProblems(response, source ?? '', { tokenizer: approx, lossless: source !== undefined })
  if (problems.length > 0) throw new Error(`invariants: ${problems.slice(0, 3).join('; ')}`)
}

let readsNow = reads
async function oneCaseAs (kind, input, options) {
  readsNow = kind
  await oneCase(input, undefined, undefined, options)
}

const failures = []
if (seeds !== undefined) {
  // Replay saved failures (regressions.test.ts): each must now pass the same properties.
  const { listParsers } = await import('../../dist/index.js')
  const byFormat = new Map(listParsers().flatMap((p) => p.formats.map((f) => [f, p.reads])))
  for (const s of seeds) {
    format = s.format
    const input = s.input.string !== undefined ? s.input.string : Uint8Array.from(Buffer.from(s.input.base64, 'base64'))
    try {
      await oneCaseAs(byFormat.get(s.format) ?? 'text', input, s.options)
    } catch (error) {
      failures.push({ kind: 'seed', format: s.format, name: s.name, input: s.input, options: s.options, error: String(error?.message ?? error).slice(0, 500) })
    }
  }
} else for (format of formats) for (const [kind, arb] of [['string', strings], ['bytes', bytes]]) {
  const result = await fc.check(fc.asyncProperty(arb, budgets, splitters, async (input, max, splitter) => { await oneCase(input, max, splitter) }), { numRuns, seed, endOnFailure: false })
  if (result.failed) {
    const [input, max, splitter] = result.counterexample
    failures.push({ kind, format, input: show(input), options: { input_format: format, max_tokens: max, ...(splitter !== undefined ? { splitter } : {}) }, error: String(result.errorInstance?.message ?? result.error).slice(0, 500), seed: result.seed, path: result.counterexamplePath })
  }
}
parentPort.postMessage({ kind: 'done', failures })
