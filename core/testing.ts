/**
 * `docsplit/testing`: the conformance kit every plugin is held to, built-ins included.
 * Each check runs the DESIGN.md invariants (as fast-check properties where inputs can be
 * generated) and the hostile-input basics, and throws an Error whose message says which
 * sample, which rule, and where.
 *
 *   import { checkParser } from 'docsplit/testing'
 *   await checkParser(myPlugin, [{ name: 'basic', input: 'key = value\n' }])
 */
import fc from 'fast-check'
import type { DocEvent } from './events.js'
import { DocsplitError, isDocsplitError, parserFailError } from './errors.js'
import { overConfirmer, structureEstimate } from './budget.js'
import { DEFAULT_TOKENIZER } from './base-options.js'
import { resolvePluginOptions } from './options.js'
import { EVENT_TYPES, eventFieldProblem, UNKNOWN_EVENT_TYPE } from './event-check.js'
import { isPromise, silence } from './plugin-values.js'
import { endSteps, finished } from './plugin-calls.js'
import { split } from './split.js'
import { isFrozen, isRegistered, register, tokenizerByName, validatePlugin } from './registry.js'
import type { SplitResponse } from './schema.js'
import type { PackerPlugin, ParserHandler, ParserPlugin, ResolvedOptions, Tokenizer, TokenizerPlugin } from './types.js'

export interface Sample {
  name: string
  input: string | Uint8Array
  /** Split options for this sample (format options, encoding, ...). */
  options?: Record<string, unknown>
}

export interface CheckOptions {
  /** Budgets to split the samples at. */
  budgets?: number[]
  /** fast-check runs for generated inputs. */
  numRuns?: number
  /** Generated inputs for this format (default: arbitrary unicode strings). */
  arbitrary?: fc.Arbitrary<string>
}

class ConformanceError extends Error {
  override name = 'ConformanceError'
}

function fail (plugin: string, sample: string, message: string): never {
  throw new ConformanceError(`${plugin}: ${sample}: ${message}`)
}

/** fast-check's assert, failing with the kit's own message (fast-check keeps it in `cause`). */
async function holds (property: fc.IRawProperty<any>, params: fc.Parameters<any>): Promise<void> {
  try {
    await fc.assert(property, params)
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause
    if (cause instanceof ConformanceError) throw cause
    throw error
  }
}

const decodeText = (input: string | Uint8Array): string => typeof input === 'string' ? input : new TextDecoder('utf-8', { fatal: true }).decode(input).replace(/^\uFEFF/, '')

/**
 * Runs a parser alone (no packer) and returns its events. `pieces` is a piece size, or the
 * offsets to cut the input at (taken modulo its length + 1, deduplicated, sorted), so a test can
 * feed the same input whole, in slow-stream pieces, or cut at chosen places; a `whole` parser
 * gets it in one piece, as the pipeline gives it.
 */
export async function parserEvents (plugin: ParserPlugin, input: string | Uint8Array, options: Record<string, unknown> = {}, pieces: number | number[] = Number.MAX_SAFE_INTEGER): Promise<DocEvent[]> {
  const out: DocEvent[] = []
  // Its own options checked, coerced and with their defaults, as the engine gives them (null:
  // not given, as in split()).
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== null))
  const own = await resolvePluginOptions(plugin.options, given)
  const resolved = { input_format: plugin.formats[0], max_tokens: 512, splitter: plugin.defaultSplitter, tokenizer: DEFAULT_TOKENIZER, overlap_tokens: 0, encoding: 'utf-8', invalid_bytes: 'error', ...given, ...own } as ResolvedOptions
  // As the pipeline estimates (the default tokenizer, when the built-ins are registered).
  const load = async (name: string): Promise<Tokenizer | undefined> => { try { return await tokenizerByName(name).load() } catch { return undefined } }
  const defaultTokenizer = await load(DEFAULT_TOKENIZER)
  const tokenizer = resolved.tokenizer === DEFAULT_TOKENIZER ? defaultTokenizer : await load(resolved.tokenizer)
  const handler = await plugin.create({
    options: resolved,
    estimate: structureEstimate(defaultTokenizer),
    confirmOver: tokenizer === undefined ? () => true : overConfirmer(tokenizer, tokenizer === defaultTokenizer && tokenizer.cheap === true, resolved.max_tokens),
    emit: (e) => { out.push(e) },
    fail: (code, message) => { throw parserFailError(plugin.name, code, message) },
  }) as ParserHandler<string | Uint8Array>
  const data = plugin.reads === 'text' ? decodeText(input) : input
  // As the engine holds it: write() finishes before it returns.
  const write = (piece: string | Uint8Array): void => { finished(handler.write(piece), `parser "${plugin.name}"`, 'write') }
  if (plugin.whole === true) {
    // As the pipeline does: all the text in one write, none for an empty input.
    if (data.length > 0) write(data)
  } else if (typeof pieces === 'number') {
    for (let i = 0; i < data.length; i += pieces) write(data.slice(i, i + pieces))
  } else {
    let pos = 0
    for (const c of [...new Set(pieces.map((p) => p % (data.length + 1)))].sort((a, b) => a - b)) {
      write(data.slice(pos, c))
      pos = c
    }
    write(data.slice(pos))
  }
  const steps = endSteps(plugin.name, handler.end())
  while (steps !== undefined && steps.next().done !== true) { /* each step emits */ }
  return out
}

/** Tiling and balance of a parser's events over `text`; returns the first problem. */
export function eventProblem (list: DocEvent[], text: string | undefined): string | undefined {
  let pos = 0
  let depth = 0
  for (const e of list) {
    if (!EVENT_TYPES.has((e as { type?: unknown } | null)?.type as string)) return UNKNOWN_EVENT_TYPE
    const field = eventFieldProblem(e)
    if (field !== undefined) return `${e.type}${e.type === 'block' || e.type === 'record' ? ` at ${e.start}` : ''} with ${field}`
    if (e.type === 'enter') depth++
    else if (e.type === 'exit') {
      if (--depth < 0) return 'an exit without an enter'
    } else if (e.type === 'block' || e.type === 'record') {
      if (e.start !== pos) return `${e.type} starts at ${e.start}, expected ${pos} (events must tile the text)`
      if (e.end !== e.start + e.text.length) return `${e.type} at ${e.start}: end is not start + text length`
      if (text !== undefined && text.slice(e.start, e.end) !== e.text) return `${e.type} at ${e.start}: text differs from the source`
      pos = e.end
    }
  }
  if (depth !== 0) return `${depth} container(s) left open`
  if (text !== undefined && pos !== text.length) return `events cover ${pos} of ${text.length} characters`
  return undefined
}

export interface InvariantOptions {
  /** Recounts every chunk: must be the tokenizer the split used. */
  tokenizer: Tokenizer
  /** Check records-whole: no chunk boundary inside a record (offsets of record starts/ends). */
  recordBoundaries?: Set<number>
  /** Text formats only: chunks are slices of the source. */
  lossless?: boolean
}

/** Code point index → UTF-16 index, for slicing like Python. */
function codePointOffsets (text: string): number[] {
  const out: number[] = []
  for (let i = 0; i < text.length; i++) {
    out.push(i)
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) i++
    }
  }
  out.push(text.length)
  return out
}

export function invariantProblems (response: SplitResponse, source: string, options: InvariantOptions): string[] {
  const problems: string[] = []
  const add = (p: string): void => { if (problems.length < 10) problems.push(p) }
  const cps = codePointOffsets(source)
  const max = response.metadata.max_tokens
  const overlap = response.metadata.overlap_tokens
  let end = 0
  let newlinesBefore = 0
  let u16 = 0
  // Bytes before the chunk, counted incrementally (chunks come in order).
  let bytesBefore = 0
  let bytesAt = 0
  response.chunks.forEach((c, i) => {
    if (c.index !== i) add(`chunk ${i}: index ${c.index}`)
    if (options.lossless !== false) {
      const from = cps[c.char_start]
      const to = cps[c.char_end]
      if (from === undefined || to === undefined || source.slice(from, to) !== c.text) add(`chunk ${i}: text differs from source[${c.char_start}:${c.char_end}]`)
      if (overlap === 0 && c.char_start !== end) add(`chunk ${i}: starts at ${c.char_start}, previous ended at ${end}`)
      if (from !== undefined) {
        // Lines and bytes, counted from scratch (the engine counts incrementally).
        // A line break is LF, CRLF (at its LF) or a lone CR.
        while (u16 < from) {
          const ch = source.charCodeAt(u16)
          if (ch === 10 || (ch === 13 && u16 + 1 < source.length && source.charCodeAt(u16 + 1) !== 10)) newlinesBefore++
          u16++
        }
        if (c.line_start !== newlinesBefore + 1) add(`chunk ${i}: line_start ${c.line_start}, expected ${newlinesBefore + 1}`)
        bytesBefore += Buffer.byteLength(source.slice(bytesAt, from), 'utf8')
        bytesAt = from
        if (c.byte_start !== bytesBefore) add(`chunk ${i}: byte_start ${c.byte_start}, expected ${bytesBefore}`)
        if (c.byte_end - c.byte_start !== Buffer.byteLength(c.text, 'utf8')) add(`chunk ${i}: byte span differs from the text's UTF-8 length`)
      }
    }
    end = c.char_end
    const count = options.tokenizer.count(c.text)
    if (count !== c.token_count) add(`chunk ${i}: token_count ${c.token_count}, recount ${count}`)
    if (!c.protected && count > max) add(`chunk ${i}: ${count} tokens over budget ${max}`)
    if (c.protected && c.record_count !== 1) add(`chunk ${i}: protected but holds ${c.record_count ?? 'no'} records (protected is for a single record over budget)`)
    if (c.text.length === 0) add(`chunk ${i}: empty`)
    if (c.boundary === 'end' && i !== response.chunks.length - 1) add(`chunk ${i}: boundary "end", but chunks follow it (only the last chunk of the document ends there)`)
  })
  if (options.lossless !== false && end !== cps.length - 1) add(`chunks end at ${end} of ${cps.length - 1} code points`)
  if (response.chunk_count !== response.chunks.length) add('chunk_count differs from the number of chunks')
  if (options.recordBoundaries !== undefined) {
    for (const c of response.chunks) {
      const from = cps[c.char_start]!
      const to = cps[c.char_end]!
      if (!options.recordBoundaries.has(from) || !options.recordBoundaries.has(to)) add(`chunk ${c.index}: boundary inside a record`)
    }
  }
  return problems
}

/** The first invariant problem of a response, if any. */
export function responseProblem (r: SplitResponse, source: string | undefined, tokenizer: Tokenizer): string | undefined {
  return invariantProblems(r, source ?? '', { tokenizer, lossless: source !== undefined })[0]
}

/**
 * The kit splits through the engine, so the plugin must be registered; the registry freezes at
 * the first split, so a test file that checks several plugins registers them all first.
 */
function registerForCheck (plugin: ParserPlugin | PackerPlugin): void {
  if (isRegistered(plugin)) return
  if (isFrozen()) {
    throw new DocsplitError('DOCSPLIT_REGISTRY_FROZEN', `${plugin.kind} "${plugin.name}" is not registered and the registry froze at the first split: register every plugin a test file checks before the first check (register(a, b))`)
  }
  register(plugin)
}

/**
 * Whether `message` holds 16 characters of `input` in a row, a letter or digit among them, as
 * written or as JSON.stringify writes them (the usual way to quote a line with control
 * characters). The message's windows are looked for in the input: a message is short, an input
 * may be a megabyte.
 */
function quotesInput (message: string, input: string): boolean {
  const forms = [input, JSON.stringify(input).slice(1, -1)]
  for (let i = 0; i + 16 <= message.length; i++) {
    const window = message.slice(i, i + 16)
    if (/[\p{L}\p{N}]/u.test(window) && forms.some((form) => form.includes(window))) return true
  }
  return false
}

const NO_QUOTES = 'messages never contain document text (the service sends them to clients)'

/** Errors that say the plugin failed, whatever the input. */
const PLUGIN_FAULTS = new Set(['DOCSPLIT_INTERNAL', 'DOCSPLIT_PLUGIN_CONTRACT'])

async function expectOnlyDocsplitErrors (plugin: string, sample: string, run: () => Promise<unknown>): Promise<unknown> {
  try {
    return await run()
  } catch (error) {
    // split() wraps what a plugin throws (DOCSPLIT_INTERNAL, with the error as cause) and a
    // broken contract (DOCSPLIT_PLUGIN_CONTRACT): both are the plugin's failure, not the input's.
    if (isDocsplitError(error) && !PLUGIN_FAULTS.has(error.code)) return error
    // A broken contract the engine found (a chunk over budget, a gap): the plugin threw nothing.
    if (isDocsplitError(error) && error.code === 'DOCSPLIT_PLUGIN_CONTRACT' && error.cause === undefined) fail(plugin, sample, `broke the contract: ${error.message}`)
    const thrown = isDocsplitError(error) && error.code === 'DOCSPLIT_INTERNAL' && error.cause !== undefined ? error.cause : error
    const what = thrown instanceof Error ? `${isDocsplitError(thrown) ? thrown.code : thrown.name}: ${thrown.message}` : String(thrown)
    fail(plugin, sample, `threw ${what}; only a DocsplitError about the input may leave a plugin`)
  }
}

/**
 * A parser: metadata, tiling, piece-size invariance, determinism, the invariants through both
 * splitters at several budgets, hostile basics (empty, invalid UTF-8, a 1 MB line) and
 * generated inputs that must either split correctly or fail with a DocsplitError.
 */
export async function checkParser (plugin: ParserPlugin, samples: Sample[], options: CheckOptions = {}): Promise<void> {
  validatePlugin(plugin)
  registerForCheck(plugin)
  const name = `parser "${plugin.name}"`
  const approx = await tokenizerByName('approx').load()
  const format = plugin.formats[0]!
  /** The parser's events alone; an exception or a DocsplitError is a failure of the sample. */
  const events = async (sample: Sample, size?: number): Promise<DocEvent[]> => {
    const out = await expectOnlyDocsplitErrors(name, sample.name, () => parserEvents(plugin, sample.input, sample.options ?? {}, size))
    if (isDocsplitError(out)) fail(name, sample.name, `failed with ${out.code}: ${out.message}`)
    return out as DocEvent[]
  }
  /** detect() and formatOf() on a text: an exception fails the check (the engine names the parser). */
  const sniffs = (label: string, text: string): void => {
    for (const method of ['detect', 'formatOf'] as const) {
      if (plugin[method] === undefined) continue
      try {
        plugin[method]!(text.slice(0, 1 << 16))
      } catch (error) {
        fail(name, label, `${method}() threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}; a sniffer that cannot tell answers ${method === 'detect' ? '0' : 'undefined'}`)
      }
    }
  }
  sniffs('empty input', '')
  for (const sample of samples) {
    const opts = sample.options ?? {}
    sniffs(sample.name, typeof sample.input === 'string' ? sample.input : new TextDecoder().decode(sample.input))
    const whole = await events(sample)
    const text = plugin.reads === 'text' ? decodeText(sample.input) : undefined
    const problem = eventProblem(whole, text)
    if (problem !== undefined) fail(name, sample.name, problem)
    for (const size of [1, 7, 64]) {
      const pieces = await events(sample, size)
      if (JSON.stringify(pieces) !== JSON.stringify(whole)) fail(name, sample.name, `events differ when the input comes in pieces of ${size}`)
    }
    for (const splitter of ['sibling', 'record']) {
      for (const max of options.budgets ?? [8, 64, 512]) {
        const run = (): Promise<SplitResponse> => split(sample.input, { ...opts, input_format: format, splitter, max_tokens: max })
        const r = await run()
        const p = responseProblem(r, text, approx)
        if (p !== undefined) fail(name, `${sample.name} (${splitter}, max_tokens ${max})`, p)
        if (JSON.stringify(await run()) !== JSON.stringify(r)) fail(name, sample.name, `output differs between two runs (${splitter}, ${max})`)
      }
    }
  }
  if (plugin.reads === 'text') {
    const empty = await expectOnlyDocsplitErrors(name, 'empty input', () => split('', { input_format: format }))
    if (!isDocsplitError(empty) && (empty as SplitResponse).chunk_count !== 0) fail(name, 'empty input', 'expected zero chunks')
    const invalid = await expectOnlyDocsplitErrors(name, 'invalid UTF-8', () => split(Uint8Array.from([0x61, 0xff, 0x62]), { input_format: format }))
    if (!isDocsplitError(invalid) || invalid.code !== 'DOCSPLIT_INVALID_UTF8') fail(name, 'invalid UTF-8', 'expected DOCSPLIT_INVALID_UTF8')
    const line = 'x'.repeat(1 << 20)
    const huge = await expectOnlyDocsplitErrors(name, 'a 1 MB line', () => split(line, { input_format: format, max_tokens: 512 }))
    if (isDocsplitError(huge) && quotesInput(huge.message, line)) fail(name, 'a 1 MB line', `its ${huge.code} message quotes the input; ${NO_QUOTES}`)
    if (!isDocsplitError(huge)) {
      const p = responseProblem(huge as SplitResponse, line, approx)
      if (p !== undefined) fail(name, 'a 1 MB line', p)
    }
    await holds(fc.asyncProperty(options.arbitrary ?? fc.string({ unit: 'binary', maxLength: 300 }), fc.constantFrom(8, 64), async (input, max) => {
      sniffs(`generated input ${JSON.stringify(input.slice(0, 80))}`, input)
      const r = await expectOnlyDocsplitErrors(name, 'generated input', () => split(input, { input_format: format, max_tokens: max }))
      if (isDocsplitError(r) && quotesInput(r.message, input)) {
        fail(name, `generated input ${JSON.stringify(input.slice(0, 80))}`, `its ${r.code} message quotes the input; ${NO_QUOTES}`)
      }
      if (!isDocsplitError(r)) {
        const p = responseProblem(r as SplitResponse, input, approx)
        if (p !== undefined) fail(name, `generated input ${JSON.stringify(input.slice(0, 80))}`, p)
      }
    }), { numRuns: options.numRuns ?? 100 })
  }
}

/**
 * A packer: through the engine over the given samples (of any registered format): tiling,
 * lossless, budget by recount, determinism, at several budgets, with and without overlap,
 * counting with approx.
 */
export async function checkPacker (plugin: PackerPlugin, samples: Array<Sample & { options: { input_format: string } }>, options: CheckOptions = {}): Promise<void> {
  validatePlugin(plugin)
  registerForCheck(plugin)
  const name = `packer "${plugin.name}"`
  const approx = await tokenizerByName('approx').load()
  for (const sample of samples) {
    const text = typeof sample.input === 'string' ? sample.input : decodeText(sample.input)
    for (const max of options.budgets ?? [8, 64, 512, 4096]) {
      for (const overlap of [0, Math.floor(max / 4)]) {
        const run = (): Promise<SplitResponse> => split(sample.input, { ...sample.options, splitter: plugin.name, max_tokens: max, overlap_tokens: overlap })
        const runName = `${sample.name} (max_tokens ${max}, overlap ${overlap})`
        const r = await expectOnlyDocsplitErrors(name, runName, run)
        if (isDocsplitError(r)) fail(name, runName, `failed with ${r.code}: ${r.message}`)
        const p = responseProblem(r as SplitResponse, text, approx)
        if (p !== undefined) fail(name, runName, p)
        if (JSON.stringify(await run()) !== JSON.stringify(r)) fail(name, sample.name, 'output differs between two runs')
      }
    }
  }
}

/**
 * A tokenizer: it loads, counts '' as 0, returns non-negative integers, is deterministic and
 * never throws on any string (special tokens included); if it claims `cheap`, it must be
 * subadditive: count(a + b) <= count(a) + count(b).
 */
export async function checkTokenizer (plugin: TokenizerPlugin, samples: string[] = [], options: CheckOptions = {}): Promise<void> {
  validatePlugin(plugin)
  const name = `tokenizer "${plugin.name}"`
  const tokenizer = await plugin.load()
  const valid = (text: string, label: string): number => {
    let n: number
    try {
      n = tokenizer.count(text)
    } catch (error) {
      fail(name, label, `count threw ${error instanceof Error ? error.message : String(error)}`)
    }
    if (isPromise(n)) {
      silence(n)
      fail(name, label, 'count returned a promise: count must be synchronous (load() may be async)')
    }
    if (!Number.isInteger(n) || n < 0) fail(name, label, `count returned ${typeof n === 'string' ? JSON.stringify(n) : n}, expected a non-negative integer`)
    if (tokenizer.count(text) !== n) fail(name, label, 'count is not deterministic')
    return n
  }
  if (valid('', 'empty string') !== 0) fail(name, 'empty string', `counted ${tokenizer.count('')} tokens, expected 0`)
  for (const s of [...samples, '<|endoftext|> and <|fim_prefix|>', '😀👩‍👩‍👧日本語', ' \n\t\r\n']) valid(s, JSON.stringify(s.slice(0, 40)))
  await holds(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 }), (a, b) => {
    const na = valid(a, 'generated string')
    const nb = valid(b, 'generated string')
    if (tokenizer.cheap === true && valid(a + b, 'generated string') > na + nb) {
      fail(name, `${JSON.stringify(a.slice(0, 40))} + ${JSON.stringify(b.slice(0, 40))}`, 'claims cheap but is not subadditive: count(a + b) > count(a) + count(b)')
    }
  }), { numRuns: options.numRuns ?? 300 })
  if (tokenizer.countMany !== undefined) {
    const texts = [...samples, '', 'plain words', '😀👩‍👩‍👧日本語', 'x'.repeat(3000)]
    const counts = await tokenizer.countMany(texts)
    if (counts !== undefined) {
      if (counts.length !== texts.length) fail(name, 'countMany', `returned ${counts.length} counts for ${texts.length} texts`)
      texts.forEach((text, i) => { if (counts[i] !== tokenizer.count(text)) fail(name, JSON.stringify(text.slice(0, 40)), `countMany says ${counts[i]}, count says ${tokenizer.count(text)}`) })
    }
  }
  const exceeds = tokenizer.exceeds
  if (exceeds !== undefined) {
    await holds(fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom(...samples, '<|endoftext|> words', 'x'.repeat(3000))), fc.nat(400), (text, limit) => {
      const n = tokenizer.count(text)
      // Around the count, where an off-by-one shows, and at a random limit.
      for (const at of [n - 1, n, limit]) {
        if (at >= 0 && exceeds.call(tokenizer, text, at) !== n > at) fail(name, JSON.stringify(text.slice(0, 40)), `exceeds(text, ${at}) is ${String(!(n > at))}, count says ${n}`)
      }
    }), { numRuns: options.numRuns ?? 300 })
  }
  const tally = tokenizer.tally
  if (tally !== undefined) {
    await holds(fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 80 }), { maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 80 }), (parts, last) => {
      const t = tally.call(tokenizer)
      let joined = ''
      for (const part of parts) {
        joined += part
        const n = t.add(part)
        if (n !== tokenizer.count(joined)) fail(name, JSON.stringify(joined.slice(0, 40)), `tally counted ${n}, adding the text part by part; count says ${tokenizer.count(joined)}`)
      }
      t.add(last)
      if (t.undo() !== tokenizer.count(joined)) fail(name, JSON.stringify(joined.slice(0, 40)), 'tally.undo() does not return the count before the last part')
      if (t.add(last) !== tokenizer.count(joined + last)) fail(name, JSON.stringify((joined + last).slice(0, 40)), 'after undo, tally.add counts differently')
      // Given each part's own count (as counted ahead), the same totals; asking for the backlog
      // between parts changes nothing.
      const known = tally.call(tokenizer)
      let n = 0
      for (const part of [...parts, last]) {
        const backlog = known.backlog?.()
        if (backlog !== undefined && !(Number.isInteger(backlog) && backlog >= 0)) fail(name, 'tally.backlog()', `returned ${String(backlog)}, not a number of characters`)
        n = known.add(part, tokenizer.count(part))
      }
      if (n !== tokenizer.count(joined + last)) fail(name, JSON.stringify((joined + last).slice(0, 40)), 'tally.add(part, count) counts differently from tally.add(part)')
      if (t.restart !== undefined) {
        t.undo()
        if (t.restart() !== tokenizer.count(last)) fail(name, JSON.stringify(last.slice(0, 40)), 'tally.restart() does not return the count of the last part alone')
        if (t.add(joined) !== tokenizer.count(last + joined)) fail(name, JSON.stringify((last + joined).slice(0, 40)), 'after restart, tally.add counts differently')
      }
    }), { numRuns: options.numRuns ?? 300 })
  }
}
