/**
 * bytes → decode → parser → events → packer → drafts → chunks, one piece at a time:
 *
 *   input pieces ─▶ StreamDecoder ─▶ parser.write ─▶ emit(event) ─▶ packer.push ─▶ emit(draft)
 *                                                                     └▶ overlap, offsets, id ─▶ chunk
 *
 * After each input piece the chunks made so far are yielded, so memory stays bounded by what
 * the parser and packer hold (one record or block for streaming formats), not the document.
 *
 * On a large input, when the splitter counts blocks and records one by one and the tokenizer
 * can count batches on other cores (`countMany`), events wait in batches between parser and
 * packer while their texts are counted; the counts travel in the events. Same output.
 */
import { constants } from 'node:buffer'
import type { TObject } from 'typebox'
import { Meter, overConfirmer, structureEstimate } from './budget.js'
import { chunkId } from './chunk-id.js'
import { StreamDecoder, UTF16_HEAD, UTF8, encodingInfo, utf16WithoutBom, type EncodingInfo } from './decode.js'
import type { BlockEvent, DocEvent, RecordEvent } from './events.js'
import { DocsplitError, isDocsplitError, parserFailError, type ErrorCode, type ParserErrorCode } from './errors.js'
import { draftProblem } from './draft-check.js'
import { eventFieldProblem, UNKNOWN_EVENT_TYPE } from './event-check.js'
import { DECLARED_HEAD, FORMAT_SAMPLE, binaryFormatOf, checkedDeclaredEncoding, chooseParser, formatNamedByFile, needsFile } from './format-choice.js'
import { bytesOf, inputPieces, nextPiece, release, sampleText, type InputPiece, type SplitInput } from './input.js'
import { checkDefaultSplitters } from './load.js'
import { DEFAULT_TOKENIZER, applyPluginDefaults, baseOptions, inTableOrder, prepareOptionChecks, resolveOptions } from './options.js'
import { pluginOptionNames } from './plugin-options.js'
import { countFault, endSteps, finished, loadTokenizer, pluginFailure, pluginStep } from './plugin-calls.js'
import { withOverlap } from './overlap.js'
import { isCount } from './plugin-values.js'
import { PositionTracker, isHighSurrogate } from './positions.js'
import { SourceWindow } from './source.js'
import { abortable, checkedSignal, stopIfAborted, type AbortSignalLike } from './abort.js'
import { WellFormedCheck } from './well-formed.js'
import { freeze, isFrozen, packerByName, parserForFormat, tokenizerByName, tokenizerSpelling } from './registry.js'
import { SCHEMA_VERSION, type Chunk, type Metadata, type SplitSummary } from './schema.js'
import { segmenters } from './segment.js'
import type { ChunkDraft, PackerContext, PackerHandler, ParserHandler, ResolvedOptions } from './types.js'
import { VERSION } from './version.js'

/**
 * The options plugins declare, by name: the built-in ones (`delimiter`, `log_start`, ...), and
 * a third-party plugin's once its package adds them with
 * `declare module 'docsplit' { interface PluginOptions extends OptionsOf<typeof plugin> {} }`.
 */
export interface PluginOptions {} // filled by declaration merging

/**
 * Split options by their shared snake_case names (see options.ts), plus plugin options. No
 * other names: the engine refuses them (DOCSPLIT_UNKNOWN_OPTION), so the compiler does too.
 * `null` means not given, as a JSON `null` does on the service.
 * Options read from a form or a file are checked at run time: pass them `as SplitOptions`.
 */
export interface SplitOptions extends PluginOptions {
  input_format?: string | null
  max_tokens?: number | null
  splitter?: string | null
  tokenizer?: string | null
  overlap_tokens?: number | null
  encoding?: string | null
  invalid_bytes?: 'error' | 'replace' | null
  filename?: string | null
}

export interface SplitStart {
  schema_version: typeof SCHEMA_VERSION
  input_format: string
  metadata: Metadata
}

/** Errors of the input itself: what came before one still goes out (see `salvage`). */
const INPUT_ERRORS = new Set<ErrorCode>(['DOCSPLIT_PARSE_ERROR', 'DOCSPLIT_INVALID_UTF8', 'DOCSPLIT_READ_FAILED', 'DOCSPLIT_LIMIT_EXCEEDED'])

/** A whole-document parser's input bytes are decoded this many at a time (see `wholeBytes`). */
const GATHER_BYTES = 64 << 20

/** The size of the buffer that gathers them past GATHER_SMALL (pages are touched only as it fills). */
const GATHER_START = 16 << 20

const GATHER_SMALL = 1 << 20

/** The first bytes kept to tell a binary format in an input that is not text (see withBinaryHint). */
const BINARY_HEAD = 4096

/** Bytes decoded into one string at most. */
const DECODE_PART = 256 << 20

/**
 * Bytes decoded into one string at most for a streaming parser. A string over 128 KB goes to
 * V8's large-object space, fresh pages per string: a 64 MB log decoded 256 KB at a time took
 * 390 ms, 64 KB at a time 45 ms.
 */
const STREAM_DECODE_PART = 1 << 16

/** The longest string V8 makes: a whole-document parser's text must fit in one. */
const MAX_STRING_LENGTH = constants.MAX_STRING_LENGTH

/**
 * Counting ahead starts after this many characters (below, starting threads costs more than it
 * saves); the threads start earlier, so that they have loaded their tables by then.
 */
const AHEAD_AFTER = 4 << 20

const AHEAD_WARM = 1 << 20

/** Characters of blocks and records per batch counted ahead, and batches in flight at most. */
const AHEAD_BATCH = 1 << 19

const AHEAD_INFLIGHT = 6

/**
 * The longest container label in a chunk's `path`, in UTF-16 code units: a setext heading may be
 * a whole paragraph, a JSON key or an XML name megabytes long, and every chunk under it repeats
 * the label (a 6 MB markdown file gave 1.2 GB of JSONL at budget 64).
 */
const MAX_LABEL = 200

/** Code units of a long label kept after the ellipsis: a JSON path's index, an XML position. */
const LABEL_TAIL = 40

/** `document.replaced`: what the UTF-8 decoder (bytes) or the string check (text) read as U+FFFD. */
function replacedInfo (by: { replaced: number, firstReplacedByte: number } | undefined): { sequences: number, first_byte: number | null } {
  return { sequences: by?.replaced ?? 0, first_byte: by !== undefined && by.replaced > 0 ? by.firstReplacedByte : null }
}

/**
 * `label` in MAX_LABEL code units: its start, an ellipsis, and its end (`$.<long key>[3]` keeps
 * the `[3]`), never cutting a surrogate pair.
 */
function shortLabel (label: string): string {
  let head = MAX_LABEL - 1 - LABEL_TAIL
  if (isHighSurrogate(label.charCodeAt(head - 1))) head--
  let tail = label.length - LABEL_TAIL
  if (isHighSurrogate(label.charCodeAt(tail - 1))) tail++
  return label.slice(0, head) + '…' + label.slice(tail)
}

/** Events held back while the texts of their blocks and records are counted. */
interface Batch {
  events: DocEvent[]
  counted: Promise<void>
  done: boolean
}

/**
 * The options that apply: the engine's and those of the parser and splitter at work. Another
 * plugin's option is accepted (a client may send one set of options for every format) but has
 * no effect here, so the metadata, which lists the options in effect, leaves it out.
 */
function inEffect (options: Record<string, unknown>, schemas: Array<TObject | undefined>, readsBytes: boolean): Record<string, unknown> {
  const own = new Set([...Object.keys(baseOptions), ...schemas.flatMap((schema) => pluginOptionNames(schema))])
  // A parser of bytes (xlsx) decodes nothing: the text encoding does not apply.
  if (readsBytes) {
    own.delete('encoding')
    own.delete('invalid_bytes')
  }
  return Object.fromEntries(Object.entries(options).filter(([name]) => own.has(name)))
}

/** The options argument as an object: null means the defaults, as undefined does (JavaScript callers pass either). */
function optionsObject (raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {}
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new DocsplitError('DOCSPLIT_INVALID_OPTION', `the options must be an object of option names and values, such as { max_tokens: 256 }, not ${Array.isArray(raw) ? 'an array' : `a ${typeof raw}`}`)
  }
  // A copy: a getter or a proxy is read once, here, so every later read sees the same value;
  // one that throws is the caller's error, not the engine's.
  try {
    return { ...raw }
  } catch (error) {
    throw new DocsplitError('DOCSPLIT_INVALID_OPTION', `the options could not be read: reading them threw ${error instanceof Error ? `a ${error.name}` : 'a value that is not an Error'}`)
  }
}

export async function * run (input: SplitInput, raw: SplitOptions, onStart: (start: SplitStart) => void, idsLater = false, given?: AbortSignalLike): AsyncGenerator<Chunk[], SplitSummary> {
  try {
    const signal = checkedSignal(given)
    const steps = splitting(input, raw, onStart, idsLater, signal)
    return yield * (signal === undefined ? steps : abortable(steps, signal, () => { release(input) }))
  } catch (error) {
    release(input)
    throw error
  }
}

/**
 * Checks `raw` as a split does before its input tells anything: the values, the encoding, and
 * the names that do not wait for the input (a format given by name, the splitter, the tokenizer,
 * which loads). For a front that runs many splits with one set of options (the CLI's several
 * files): what is wrong with them fails once, with the code a split gives. Not public API.
 */
export async function checkSplitOptions (raw: SplitOptions): Promise<void> {
  const { options } = await checkedOptions(raw)
  encodingInfo(options.encoding)
  if (options.input_format.toLowerCase() !== 'auto') parserForFormat(options.input_format)
  if (options.splitter !== undefined) packerByName(options.splitter)
  await loadTokenizer(tokenizerByName(options.tokenizer))
}

/** The options as given (an object) and resolved, once the registry is frozen. */
async function checkedOptions (raw: SplitOptions): Promise<{ given: Record<string, unknown>, options: ResolvedOptions }> {
  // The plugins are all there now: a set that does not hold together is not frozen.
  if (!isFrozen()) checkDefaultSplitters()
  freeze()
  const given = optionsObject(raw)
  await prepareOptionChecks(given)
  return { given, options: resolveOptions(given) }
}

async function * splitting (input: SplitInput, raw: SplitOptions, onStart: (start: SplitStart) => void, idsLater: boolean, signal?: AbortSignalLike): AsyncGenerator<Chunk[], SplitSummary> {
  const { given, options } = await checkedOptions(raw)
  const source = inputPieces(input)[Symbol.asyncIterator]()
  /** Bytes given whole, not as a stream: its pieces are its own consecutive subarrays. */
  const givenBytes = input instanceof Uint8Array ? input : input instanceof ArrayBuffer ? bytesOf(input) : undefined
  /** A stream's bytes held past the next read are copied: the caller may reuse its buffer. */
  const keep = (piece: Uint8Array): Uint8Array => givenBytes !== undefined ? piece : Uint8Array.prototype.slice.call(piece)
  const buffered: InputPiece[] = []
  let exhausted = false
  const sample = (): string => sampleText(buffered, options.encoding)
  const byName = formatNamedByFile(options.filename)
  /** Reads pieces ahead into `buffered` until it holds `limit` bytes or characters, or the input ends. */
  const readAhead = async (limit: number): Promise<void> => {
    let size = buffered.reduce((n, p) => n + p.length, 0)
    while (!exhausted && size < limit) {
      const next = await nextPiece(source)
      if (next.done === true) { exhausted = true; break }
      buffered.push(typeof next.value === 'string' ? next.value : keep(next.value))
      size += next.value.length
    }
  }
  /** The first `n` bytes of a byte input (read ahead for them), or undefined for text. */
  const headBytes = async (n: number): Promise<Uint8Array | undefined> => {
    await readAhead(n)
    if (buffered.length === 0 || typeof buffered[0] === 'string') return undefined
    return Buffer.concat(buffered as Uint8Array[], Math.min(n, buffered.reduce((total, p) => total + p.length, 0)))
  }
  if (given.encoding === undefined && typeof input !== 'string') {
    // UTF-16 without a byte order mark: told from the first bytes, before the format is.
    const head = await headBytes(UTF16_HEAD)
    if (head !== undefined) options.encoding = utf16WithoutBom(head) ?? options.encoding
  }
  if (options.input_format === 'auto' && !byName) await readAhead(FORMAT_SAMPLE)
  encodingInfo(options.encoding)
  const { parser, format, byContent } = chooseParser(options, sample)
  /** The name a response gives the format: `markdown` for `md`. */
  const formatName = parser.formatAliases !== undefined && Object.hasOwn(parser.formatAliases, format) ? parser.formatAliases[format]! : format
  if (parser.declaredEncoding !== undefined && given.encoding === undefined && typeof input !== 'string') {
    // Enough bytes for the declaration, however small the pieces come.
    const head = await headBytes(DECLARED_HEAD)
    if (head !== undefined) options.encoding = checkedDeclaredEncoding(parser, head) ?? options.encoding
  }
  if (parser.reads === 'bytes' && (typeof input === 'string' || typeof buffered[0] === 'string')) {
    throw needsFile(format)
  }
  options.input_format = format
  // A parser's own splitter is registered: checked before the first split, after which nothing registers.
  const packerPlugin = packerByName(options.splitter ?? parser.defaultSplitter)
  options.splitter = packerPlugin.name
  const tokenizerPlugin = tokenizerByName(options.tokenizer)
  options.tokenizer = tokenizerSpelling(options.tokenizer)
  const tokenizer = await loadTokenizer(tokenizerPlugin)
  stopIfAborted(signal)
  // The default tokenizer, when cheap, sharpens the packers' estimates for an exact one.
  const defaultTokenizer = DEFAULT_TOKENIZER === tokenizerPlugin.name ? tokenizer : await loadTokenizer(tokenizerByName(DEFAULT_TOKENIZER)).catch(() => undefined)
  const estimator = tokenizer.cheap === true ? undefined : defaultTokenizer
  applyPluginDefaults(options, [parser.options, packerPlugin.options])

  const maxTokens = options.max_tokens
  const overlapTokens = options.overlap_tokens
  const meter = new Meter(tokenizer, maxTokens - overlapTokens, estimator)
  const metadata: Metadata = {
    splitter: packerPlugin.name,
    tokenizer: typeof tokenizer.name === 'string' && tokenizer.name !== '' ? tokenizer.name : tokenizerPlugin.name,
    max_tokens: maxTokens,
    overlap_tokens: overlapTokens,
    engine_version: VERSION,
    // Names as the engine reads them: `markdown` for `md`, `windows-1252` for `ISO-8859-1`.
    options: inTableOrder(inEffect({ ...options, input_format: formatName, encoding: encodingInfo(options.encoding).name }, [parser.options, packerPlugin.options], parser.reads === 'bytes')) as ResolvedOptions,
  }

  // Document information gathered from events.
  const info: Record<string, unknown> = {}
  let title: string | null = null
  let frontMatter: unknown = null
  const definitions = new Map<string, { label: string, url: string, title: string | null, chunks: Set<number> }>()
  const refsByLabel = new Map<string, Set<number>>()

  // Chunk assembly.
  const ready: Chunk[] = []
  let decoder: StreamDecoder | undefined
  let encoding: EncodingInfo = UTF8
  let tracker: PositionTracker | undefined
  let previous: ChunkDraft | undefined
  let tokenTotal = 0
  let receivedBytes = 0
  let bytesInput = false
  let decodedLength = 0
  let eventEnd = 0

  let chunkCount = 0
  /** The decoded text, to check chunks against (a parser of bytes has no text source). */
  const sourceText = parser.reads === 'text' ? new SourceWindow() : undefined
  /** Containers open: each enter needs its exit. */
  let depth = 0
  // Typed where it is declared, so that a check before it narrows what follows.
  const contract: (message: string) => never = (message) => {
    throw new DocsplitError('DOCSPLIT_PLUGIN_CONTRACT', message)
  }

  /**
   * A splitter packs to max_tokens - overlap_tokens and may protect a record over that; a chunk
   * says `protected` only over max_tokens itself, and any other gets its overlap.
   */
  const overMax = (draft: ChunkDraft): boolean => draft.protected === true && draft.tokenCount > maxTokens

  const packerCtx: PackerContext = {
    options,
    tokenizer,
    budget: meter.budget,
    meter,
    segmenters,
    source: (start, end) => sourceText?.slice(start, end),
    emit (draft) {
      tracker ??= decoder !== undefined
        ? new PositionTracker(decoder.byteLength, decoder.bomBytes, encoding === UTF8, (before) => { decoder!.forget(before) })
        : new PositionTracker(encoding.byteLength, 0, encoding === UTF8)
      if (typeof draft.text !== 'string') contract(`splitter "${packerPlugin.name}" emitted a chunk at ${draft.start} whose text is not a string`)
      if (draft.text.length === 0) contract(`splitter "${packerPlugin.name}" emitted an empty chunk at ${draft.start}; a chunk holds at least one character`)
      if (draft.start !== tracker.end || draft.end !== draft.start + draft.text.length) {
        contract(`splitter "${packerPlugin.name}" emitted a chunk at ${draft.start} that does not continue the previous one (at ${tracker.end})`)
      }
      if (!isCount(draft.tokenCount)) throw countFault(tokenizer, tokenizerPlugin.name, packerPlugin.name, draft.text, draft.tokenCount, draft.start)
      if (previous?.boundary === 'end') {
        contract(`splitter "${packerPlugin.name}" emitted a chunk at ${draft.start} after one whose boundary is "end"; only the last chunk of the document ends there`)
      }
      let start = draft.start
      let text = draft.text
      let tokenCount = draft.tokenCount
      if (overlapTokens > 0 && previous !== undefined && !overMax(draft) && !overMax(previous) && draft.noOverlap !== true) {
        const o = withOverlap(previous, draft, overlapTokens, maxTokens, meter, segmenters)
        if (o !== undefined) ({ start, text, tokenCount } = o)
      }
      // Counted by core with the tokenizer: a count that is not one is the tokenizer's.
      if (!isCount(tokenCount)) throw countFault(tokenizer, tokenizerPlugin.name, packerPlugin.name, text, tokenCount)
      if (sourceText !== undefined && !sourceText.matches(draft.start, draft.text)) {
        contract(`the chunk at ${draft.start}..${draft.end} is not the source text there: parser "${parser.name}" or splitter "${packerPlugin.name}" changed it`)
      }
      if (tokenCount > maxTokens && draft.protected !== true) {
        contract(`splitter "${packerPlugin.name}" emitted a chunk of ${tokenCount} tokens over the budget of ${maxTokens}`)
      }
      const problem = draftProblem(draft, meter.budget)
      if (problem !== undefined) contract(`splitter "${packerPlugin.name}" emitted a chunk at ${draft.start} with ${problem}`)
      const loc = tracker.locate(start, text) ?? contract(`splitter "${packerPlugin.name}" emitted overlapping chunks`)
      const index = chunkCount
      const chunk: Chunk = {
        id: idsLater ? '' : chunkId(loc, text),
        index,
        text,
        token_count: tokenCount,
        ...loc,
        path: draft.path,
        kinds: draft.kinds,
        boundary: draft.boundary,
        protected: overMax(draft),
      }
      if (draft.recordStart !== undefined) chunk.record_start = draft.recordStart
      if (draft.recordCount !== undefined) chunk.record_count = draft.recordCount
      if (draft.context !== undefined) chunk.context = draft.context
      if (draft.fields !== undefined) Object.assign(chunk, draft.fields)
      for (const label of draft.refs ?? []) {
        let set = refsByLabel.get(label)
        if (set === undefined) refsByLabel.set(label, set = new Set())
        set.add(index)
      }
      chunkCount++
      tokenTotal += tokenCount
      previous = draft
      ready.push(chunk)
    },
  }
  let packer: PackerHandler
  try {
    packer = packerPlugin.create(packerCtx)
  } catch (error) {
    throw pluginFailure(error, `${packerPlugin.name} splitter`)
  }

  if (packer === null || typeof packer !== 'object' || typeof packer.push !== 'function' || typeof packer.end !== 'function') {
    contract(`splitter "${packerPlugin.name}": create() must return a handler with push(event) and end()`)
  }
  /** Ended, or failed: its end() is not to be called (again). */
  let packerClosed = false
  /** A failure inside the splitter (or the tokenizer it counts with) is named as such, not as the parser's. */
  const packerFailure = (error: unknown): DocsplitError => {
    packerClosed = true
    return pluginFailure(error, `${packerPlugin.name} splitter (counting with the ${tokenizerPlugin.name} tokenizer)`)
  }
  const packerLabel = `splitter "${packerPlugin.name}"`
  const pushEvent = (event: DocEvent): void => {
    try {
      finished(packer.push(event) as unknown, packerLabel, 'push')
    } catch (error) {
      throw packerFailure(error)
    }
  }

  const parserCtx = {
    options,
    emit (event: DocEvent) {
      if (typeof event !== 'object' || event === null) contract(`parser "${parser.name}" emitted ${event === null ? 'null' : `a ${typeof event}`}, not an event`)
      // A label names a container or a record; every chunk inside repeats it in `path`.
      if (event.type === 'enter' || (event.type === 'record' && event.label !== undefined)) {
        if (typeof event.label !== 'string') contract(`parser "${parser.name}" emitted ${event.type === 'enter' ? 'an enter' : 'a record'} whose label is not a string`)
        if (event.label.length > MAX_LABEL) event = { ...event, label: shortLabel(event.label) }
      }
      const problem = eventFieldProblem(event)
      if (problem !== undefined) {
        const what = event.type === 'block' || event.type === 'record' ? `a ${event.type} at ${String(event.start)}` : event.type === 'info' ? 'an info event' : `a ${String(event.type)}`
        contract(`parser "${parser.name}" emitted ${what} with ${problem}`)
      }
      switch (event.type) {
        case 'block':
        case 'record':
          if (event.start !== eventEnd) {
            if (typeof event.start !== 'number' || typeof event.end !== 'number') contract(`parser "${parser.name}" emitted a ${event.type} whose start or end is not a number`)
            contract(`parser "${parser.name}" emitted a ${event.type} at ${event.start}; the previous one ended at ${eventEnd}, where the next must start`)
          }
          if (typeof event.text !== 'string') contract(`parser "${parser.name}" emitted a ${event.type} whose text is not a string`)
          if (event.kind !== undefined && typeof event.kind !== 'string') contract(`parser "${parser.name}" emitted a ${event.type} whose kind is not a string`)
          if (event.end !== event.start + event.text.length) {
            contract(`parser "${parser.name}" emitted a ${event.type} at ${event.start}..${event.end} whose text has ${event.text.length} characters; end must be start + text.length`)
          }
          // Packers count these texts and may take a chunk's text from the source instead.
          if (sourceText !== undefined && !sourceText.holds(event.start, event.text)) {
            contract(`parser "${parser.name}" emitted a ${event.type} at ${event.start}..${event.end} whose text is not the source text there`)
          }
          eventEnd = event.end
          break
        case 'enter':
          depth++
          break
        case 'exit':
          if (--depth < 0) contract(`parser "${parser.name}" emitted an exit without an enter`)
          break
        case 'definition':
          if (!definitions.has(event.label)) definitions.set(event.label, { label: event.label, url: event.url, title: event.title ?? null, chunks: new Set() })
          break
        case 'info':
          if (event.scope === 'metadata') (metadata as unknown as Record<string, unknown>)[event.key] = event.value
          else if (event.key === 'title' && typeof event.value === 'string') title ??= event.value
          else if (event.key === 'front_matter') frontMatter = event.value
          else info[event.key] = event.value
          break
        default:
          contract(`parser "${parser.name}" emitted ${UNKNOWN_EVENT_TYPE}`)
      }
      if (countingAhead) hold(event)
      else pushEvent(event)
    },
    estimate: structureEstimate(defaultTokenizer),
    confirmOver: overConfirmer(tokenizer, tokenizer === defaultTokenizer && tokenizer.cheap === true, maxTokens),
    fail (code: ParserErrorCode, message: string): never {
      // A document the content made look like another format (JSON log lines, then a panic's
      // plain lines) says how to choose the format it is.
      const hint = byContent === true && code === 'DOCSPLIT_PARSE_ERROR' ? ` (input_format "auto" read the content as ${formatName}; pass input_format to read it as another format)` : ''
      throw parserFailError(parser.name, code, message + hint)
    },
  }
  // Counting ahead (see the file comment).
  const countMany = packerPlugin.countsUnits === true ? tokenizer.countMany?.bind(tokenizer) : undefined
  let countingAhead = false
  let warming = false
  /**
   * The counting threads start once AHEAD_WARM characters are read, and count ahead from
   * AHEAD_AFTER on. Bytes gathered for a whole-text parser (decoded at the end) count as read
   * for the start; counting ahead waits for their characters.
   */
  const countAheadWhenLarge = (): void => {
    if (countMany === undefined || countingAhead) return
    if (!warming && decodedLength + gatheredBytes >= AHEAD_WARM) {
      warming = true
      void countMany([]).catch(() => {})
    }
    countingAhead = decodedLength >= AHEAD_AFTER
  }
  let batch: DocEvent[] = []
  let units: Array<BlockEvent | RecordEvent> = []
  let batchChars = 0
  const inflight: Batch[] = []
  const dispatch = (): void => {
    if (batch.length === 0) return
    const held = units
    const counted = countMany!(held.map((r) => r.text)).then((counts) => {
      if (counts !== undefined) for (let i = 0; i < held.length; i++) held[i]!.tokens = counts[i]!
    }, () => {})
    const b: Batch = { events: batch, counted, done: false }
    void counted.then(() => { b.done = true })
    inflight.push(b)
    batch = []
    units = []
    batchChars = 0
  }
  const hold = (event: DocEvent): void => {
    batch.push(event)
    if (event.type === 'record' || event.type === 'block') {
      units.push(event)
      batchChars += event.text.length
      if (batchChars >= AHEAD_BATCH) dispatch()
    }
  }
  /** Hands counted batches to the packer in order; waits while too many are in flight, or for all. */
  const drain = async (all: boolean): Promise<void> => {
    if (all) dispatch()
    while (inflight.length > 0 && (all || inflight[0]!.done || inflight.length > AHEAD_INFLIGHT)) {
      const b = inflight.shift()!
      await b.counted
      for (const e of b.events) pushEvent(e)
    }
  }

  let handler: ParserHandler<InputPiece>
  const parserLabel = `parser "${parser.name}"`
  /** Hands the parser a piece; its write() must finish before it returns. */
  const write = (piece: InputPiece): void => { finished(handler.write(piece) as unknown, parserLabel, 'write') }
  try {
    handler = await pluginStep(`the ${parser.name} parser's create()`, () => parser.create(parserCtx)) as ParserHandler<InputPiece>
    stopIfAborted(signal)
  } catch (error) {
    throw pluginFailure(error, `${parser.name} parser`)
  }
  if (handler === null || typeof handler !== 'object' || typeof handler.write !== 'function' || typeof handler.end !== 'function') {
    contract(`parser "${parser.name}": create() must return a handler with write(piece) and end()`)
  }
  onStart({ schema_version: SCHEMA_VERSION, input_format: formatName, metadata })

  const wellFormed = new WellFormedCheck(options.invalid_bytes === 'replace')
  /** A whole-text parser's text so far, handed over once, joined (see ParserPlugin.whole). */
  const wholeText: string[] | undefined = parser.whole === true ? [] : undefined
  let wholeLength = 0
  /**
   * A whole-text parser's bytes, decoded GATHER_BYTES at a time: a document of up to that size
   * is decoded once, at the end. Decoded piece by piece, every piece lived on in V8's heap
   * beside the joined text until a full collection, and their survival grew the young
   * generation: 23 MB more peak RSS on 8 MB of markdown.
   */
  let wholeBytes: Buffer | undefined
  let gatheredBytes = 0
  /** Where the gathered bytes start in `givenBytes`, whose pieces are not copied. */
  let givenAt = 0
  /** Gives decoded text to the parser, and to the check of its events. */
  const give = (text: string): void => {
    if (text.length === 0) return
    if (wholeText !== undefined) {
      // Said as soon as it is known, not after reading the rest: the join would fail anyway.
      if ((wholeLength += text.length) > MAX_STRING_LENGTH) {
        throw new DocsplitError('DOCSPLIT_LIMIT_EXCEEDED', `${format} is parsed as one string, and this document is longer than the ${MAX_STRING_LENGTH.toLocaleString('en-US')} characters a string can hold`)
      }
      wholeText.push(text)
      return
    }
    sourceText?.add(text)
    write(text)
  }
  const feed = (piece: InputPiece): void => {
    if (typeof piece === 'string') {
      if (parser.reads === 'bytes') {
        throw needsFile(format)
      }
      // Text is decoded already: another encoding would be ignored while metadata said it applied.
      if (decodedLength === 0 && encodingInfo(options.encoding).name !== 'utf-8') {
        throw new DocsplitError('DOCSPLIT_INVALID_OPTION', `encoding "${options.encoding.slice(0, 64)}" applies to bytes; this input is text (a string), decoded already: leave encoding out, or pass the bytes`)
      }
      const { text, error } = wellFormed.next(piece)
      if (error === undefined) return giveText(text)
      // The text before a lone surrogate still goes first, as before invalid bytes (giveDecoded).
      try {
        giveText(text)
      } catch {}
      throw error
    }
    bytesInput = true
    receivedBytes += piece.length
    // A parser of bytes may hold its pieces (xlsx holds the whole file): they are its to keep.
    if (parser.reads === 'bytes') { write(keep(piece)); return }
    // Bytes are gathered for a whole-text parser only (the registry allows `whole` on no other).
    if (wholeText === undefined) { decode(piece); return }
    if (gatheredBytes + piece.length > GATHER_BYTES) decodeGathered()
    if (givenBytes === undefined) {
      // A piece that fills a batch alone is decoded now, before its buffer can change: no copy.
      if (piece.length >= GATHER_BYTES) { decode(piece); return }
      // Copied once into one buffer, not kept as copies joined at the end: fresh memory is slow
      // to touch (8 MB of markdown: 2,000 fewer page faults). The first piece gets a buffer of
      // its size, which doubles while the document is small; past GATHER_SMALL it is
      // GATHER_START, large enough for most documents, and grows once or twice for larger ones.
      // (A small document does not reserve 16 MB: V8 counts it as external memory, and 2,000
      // small streamed splits each reserving it ran 100 full collections.)
      const needed = gatheredBytes + piece.length
      if (wholeBytes === undefined || needed > wholeBytes.length) {
        const doubled = Math.max(needed, 2 * (wholeBytes?.length ?? 0))
        const size = wholeBytes === undefined ? piece.length : Math.min(GATHER_BYTES, needed > GATHER_SMALL ? Math.max(doubled, GATHER_START) : doubled)
        const grown = Buffer.allocUnsafeSlow(size)
        wholeBytes?.copy(grown, 0, 0, gatheredBytes)
        wholeBytes = grown
      }
      wholeBytes.set(piece, gatheredBytes)
    }
    gatheredBytes += piece.length
  }
  const giveText = (text: string): void => {
    if (text.length === 0) return
    decodedLength += text.length
    give(text)
  }
  /** Decodes the bytes gathered for a whole-text parser. */
  const decodeGathered = (): void => {
    if (gatheredBytes === 0) return
    const all = givenBytes !== undefined ? givenBytes.subarray(givenAt, givenAt + gatheredBytes) : wholeBytes!.subarray(0, gatheredBytes)
    givenAt += gatheredBytes
    wholeBytes = undefined
    gatheredBytes = 0
    decode(all)
  }
  /** Bytes decoded into one string at most: a streaming parser's are kept small (see STREAM_DECODE_PART). */
  const decodePart = wholeText === undefined ? STREAM_DECODE_PART : DECODE_PART
  /** The first bytes decoded, for withBinaryHint. */
  let firstBytes: Uint8Array | undefined
  const decode = (piece: Uint8Array): void => {
    firstBytes ??= piece.slice(0, BINARY_HEAD)
    if (piece.length > decodePart) {
      // A piece longer than a string can be, or (streaming) than a young-space string.
      for (let at = 0; at < piece.length; at += decodePart) decode(piece.subarray(at, at + decodePart))
      return
    }
    decoder ??= new StreamDecoder(options.encoding, options.invalid_bytes === 'replace')
    const text = decoder.decode(piece)
    encoding = decoder.encoding
    decodedLength += text.length
    giveDecoded(text)
  }
  /**
   * Gives decoded text to the parser. When the decoder met invalid bytes after it, the text
   * before them still goes first, so that its chunks go out; the bad bytes are what is
   * reported, as before any parse, even if the parser fails on that text (binary data: its
   * first bytes are no document either).
   */
  const giveDecoded = (text: string): void => {
    const failure = decoder?.failure
    if (failure === undefined) return give(text)
    try {
      give(text)
    } catch {}
    throw withBinaryHint(failure)
  }
  /**
   * Bytes that are not UTF-8 in a format chosen by name or extension: when a parser of bytes
   * claims the first of them (a workbook named `.txt`), the error says to pass that format, not
   * only to try another encoding, which would split the zip's bytes as text.
   */
  const withBinaryHint = (failure: DocsplitError): DocsplitError => {
    if (failure.code !== 'DOCSPLIT_INVALID_UTF8' || byContent === true || firstBytes === undefined) return failure
    const binary = binaryFormatOf(firstBytes)
    if (binary === undefined) return failure
    return new DocsplitError(failure.code, `the bytes look like ${binary}, not text: pass input_format "${binary}" to read them so; ${failure.message}`)
  }
  const guarded = <T>(step: () => T): T => {
    try {
      return step()
    } catch (error) {
      throw pluginFailure(error, `${parser.name} parser`)
    }
  }

  /**
   * Feeds a piece; the chunks it made go out even when it fails (an input error after them).
   * A streaming parser gets bytes a decoded part at a time, each part's chunks out before the
   * next: fed a 256 KB read whole, a log of mostly ASCII with some other characters (two-byte
   * strings) held all of its text and chunks at once, which outlived young collections: 11 full
   * collections, 134-145 MB peak RSS and 4.6 s through the CLI on 305 MB; 105 MB and 3.6 s in parts.
   */
  function * fed (piece: InputPiece): Generator<Chunk[]> {
    if (typeof piece !== 'string' && wholeText === undefined && parser.reads === 'text' && piece.length > decodePart) {
      for (let at = 0; at < piece.length; at += decodePart) yield * fed(piece.subarray(at, at + decodePart))
      return
    }
    try {
      guarded(() => feed(piece))
    } finally {
      if (ready.length > 0) yield ready.splice(0)
    }
  }

  try {
    for (const piece of buffered) {
      stopIfAborted(signal)
      yield * fed(piece)
    }
    buffered.length = 0
    while (!exhausted) {
      const next = await nextPiece(source)
      if (next.done === true) break
      stopIfAborted(signal)
      yield * fed(next.value)
      countAheadWhenLarge()
      if (countingAhead) await drain(false)
      if (ready.length > 0) yield ready.splice(0)
    }
  } catch (error) {
    yield * salvage(error)
    throw error
  } finally {
    // A consumer that stops early (break, an error) must not leave the input open.
    await source.return(undefined)
  }
  try {
    yield * finish()
  } catch (error) {
    yield * salvage(error)
    throw error
  }
  if (ready.length > 0) yield ready.splice(0)
  return summarize()

  /**
   * After an input error (a bad record, invalid bytes, a failed read): what was read before it
   * still goes out, the events held while counted ahead and what the splitter holds (it ends
   * as if the document ended there), before the error is reported. Not after a plugin's own
   * failure: its state is not to be trusted.
   */
  async function * salvage (error: unknown): AsyncGenerator<Chunk[]> {
    if (!isDocsplitError(error) || !INPUT_ERRORS.has(error.code) || packerClosed) return
    try {
      if (countingAhead) await drain(true)
      packerClosed = true
      packer.end(true)
    } catch {
      return
    }
    if (ready.length > 0) yield ready.splice(0)
  }

  /** The rest of the input, the parser's end and the packer's. */
  async function * finish (): AsyncGenerator<Chunk[]> {
    // A high surrogate that ended the last string piece: lone, refused or read as U+FFFD.
    const last = wellFormed.end()
    if (last.error !== undefined) throw last.error
    if (last.text !== '') giveText(last.text)
    const steps = guarded(() => {
      decodeGathered()
      if (decoder !== undefined) {
        const rest = decoder.end()
        encoding = decoder.encoding
        decodedLength += rest.length
        giveDecoded(rest)
      }
      if (wholeText !== undefined && wholeText.length > 0) {
        // Joined once and held once: the pieces go as soon as the parser has the text. Text given
        // as one string is that string (its pieces are its slices): no copy at all.
        const text = typeof input === 'string' ? input : wholeText.length === 1 ? wholeText[0]! : wholeText.join('')
        wholeText.length = 0
        sourceText?.add(text)
        write(text)
      }
      countAheadWhenLarge()
      // Empty input is zero chunks in every format, even where an empty document is invalid.
      if (decodedLength > 0 || receivedBytes > (decoder?.bomBytes ?? 0)) return handler.end()
    })
    const it = endSteps(parser.name, steps)
    // A parser that emits in steps: chunks leave between steps.
    while (it !== undefined) {
      stopIfAborted(signal)
      if (!guarded(() => it.next().done !== true)) break
      if (countingAhead) await drain(false)
      if (ready.length > 0) yield ready.splice(0)
    }
    if (countingAhead) await drain(true)
    try {
      packerClosed = true
      packer.end()
    } catch (error) {
      throw packerFailure(error)
    }
  }

  /** The response without its chunks, once all are made. */
  function summarize (): SplitSummary {
    const covered = tracker?.end ?? 0
    if (covered !== eventEnd) contract(`splitter "${packerPlugin.name}" covered ${covered} of ${eventEnd} characters`)
    if (parser.reads === 'text' && eventEnd !== decodedLength) contract(`parser "${parser.name}" covered ${eventEnd} of ${decodedLength} characters`)
    if (depth !== 0) contract(`parser "${parser.name}" left ${depth} container${depth === 1 ? '' : 's'} open (an enter without its exit)`)

    const totals = tracker?.totals() ?? { chars: 0, bytes: decoder?.bomBytes ?? 0, lines: 0 }
    for (const [label, uses] of refsByLabel) {
      const def = definitions.get(label)
      if (def !== undefined) for (const i of uses) def.chunks.add(i)
    }
    return {
      schema_version: SCHEMA_VERSION,
      document: {
        input_format: formatName,
        char_count: totals.chars,
        byte_count: bytesInput ? receivedBytes : totals.bytes,
        line_count: totals.lines,
        token_count: tokenTotal,
        title,
        front_matter: frontMatter,
        encoding: parser.reads === 'bytes' ? 'binary' : encoding.name,
        ...(options.invalid_bytes === 'replace' && parser.reads === 'text' && encoding === UTF8 ? { replaced: replacedInfo(bytesInput ? decoder : wellFormed) } : {}),
        info,
      },
      metadata,
      reference_definitions: [...definitions.values()].map((d) => ({ ...d, chunks: [...d.chunks].sort((a, b) => a - b) })),
      chunk_count: chunkCount,
    }
  }
}
