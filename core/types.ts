/**
 * The three plugin contracts (Parser, Tokenizer, Packer) and the context core hands a plugin.
 * Built-in plugins use exactly these types; there is no private door.
 */
import type { Static, TObject } from 'typebox'
import type { DocEvent } from './events.js'
import type { ParserErrorCode } from './errors.js'
import type { Segmenters } from './segment.js'
import type { Meter } from './budget.js'

/**
 * The options core defines (base-options.ts, whose keys options.ts checks these against at
 * compile time), after validation and defaults. A type, not an interface: a plugin's
 * `ctx.options` then still fits a function that takes ResolvedOptions.
 */
export type CoreOptions = {
  input_format: string
  max_tokens: number
  splitter: string
  tokenizer: string
  overlap_tokens: number
  encoding: string
  invalid_bytes: 'error' | 'replace'
  /** The input's file name, when one is given (`auto` chooses by its extension). */
  filename?: string
}

/** Every option after validation and defaults, by its snake_case name. */
export interface ResolvedOptions extends CoreOptions {
  /** Options declared by plugins (`log_start`, `delimiter`, ...). */
  [name: string]: unknown
}

/** A loaded tokenizer. `count` is exact: the number of tokens the encoder would produce. */
export interface Tokenizer {
  readonly name: string
  count (text: string): number
  /**
   * True when counting is so cheap (hundreds of MB/s) that packers may count every unit, and
   * when counts are subadditive: count(a + b) <= count(a) + count(b).
   */
  readonly cheap?: boolean
  /**
   * A tally of a text given part by part, each part read about once, so a packer that grows a
   * chunk record by record knows its exact count without re-reading it. For a tokenizer that
   * counts in one left-to-right pass with a small state (approx), or whose counts add up at
   * known places (BPE encoders split text into pieces first; see the tiktoken plugin).
   */
  tally? (): Tally
  /**
   * Optional: whether `count(text) > limit`, reading only as far as it needs to tell (about
   * `limit` tokens of text). A packer checks a long unit with it before reading it whole.
   */
  exceeds? (text: string, limit: number): boolean
  /**
   * Optional: counts many texts at once, off the calling thread (worker threads on other
   * cores); undefined when it cannot. On large inputs the pipeline counts each batch of blocks
   * and records this way before the splitter sees them, when the splitter counts them one by
   * one (`countsUnits`), and hands the counts over in the events (`tokens`).
   */
  countMany? (texts: string[]): Promise<ArrayLike<number> | undefined>
}

/** Counts a text given in consecutive parts, exactly as `count` counts the parts joined. */
export interface Tally {
  /**
   * Adds the next part; returns the count of all parts so far. `count`, when given, is the
   * tokenizer's own count of `text` alone (made ahead); a tally may use it instead of counting.
   */
  add (text: string, count?: number): number
  /** Forgets the part added last (one level); returns the count without it. */
  undo (): number
  /**
   * Optional: forgets every part but the one added last and returns that part's own count, as
   * a new tally given only it would. A packer that closes a chunk before the part that did not
   * fit carries that part into the next chunk without reading it again: it calls undo() (the
   * chunk's count without the part), closes the chunk, then restart(). So the part added last
   * is the one kept even after an undo() of it.
   */
  restart? (): number
  /**
   * Optional: how many characters already added the next `add` may read again (the text since
   * the last place where counts add up). A packer adding small pieces (words) stops using the
   * tally when this grows, as in a run of letters that no piece boundary breaks.
   */
  backlog? (): number
}

interface PluginBase {
  /** Unique within its kind. */
  name: string
  /** The docsplit plugin API range the plugin was built for, such as `^1`. */
  docsplit: string
  /** One sentence for `docsplit formats` and the OpenAPI description. */
  description?: string
  /** Optional extra (`web`, `spreadsheets`, `code-parsing`) or package the plugin needs. */
  extra?: string
  /** Whether the plugin can work here (its extra is installed), without running it. */
  available? (): boolean | Promise<boolean>
}

/**
 * The resolved options a plugin is given: core's, and those of its own `options` schema
 * (`ctx.options.delimiter` is typed by it). Nothing else: a name the plugin does not declare
 * (a slip, `ctx.options.delimter`) is a compile error, not an `unknown` that is always undefined.
 */
export type OwnOptions<O extends TObject> = CoreOptions & Static<O>

/** The `options` type parameter of a plugin that declares none (any plugin, where one is taken). */
export type NoOwnOptions = TObject<{}>

/**
 * The split options a plugin declares, as `split()` takes them. A plugin package makes them
 * known to its users' compiler by adding them to `PluginOptions`:
 * `declare module 'docsplit' { interface PluginOptions extends OptionsOf<typeof plugin> {} }`.
 */
export type OptionsOf<P> = P extends { options?: infer O } ? (O extends TObject ? Nullable<Static<O>> : object) : object

/** Each property may also be `null`: not given, as in split()'s own options. */
type Nullable<T> = { [K in keyof T]: T[K] | null }

export interface ParserContext<O extends TObject = NoOwnOptions> {
  readonly options: OwnOptions<O>
  /** Hands one event to the packer. Events must tile the text (see events.ts). */
  emit (event: DocEvent): void
  /**
   * Throws a DocsplitError with one of the codes a parser may give (PARSER_ERROR_CODES:
   * DOCSPLIT_PARSE_ERROR, DOCSPLIT_LIMIT_EXCEEDED, ...); another is DOCSPLIT_PLUGIN_CONTRACT.
   * The message must not contain document text: the service sends it to clients as it is.
   */
  fail (code: ParserErrorCode, message: string): never
  /**
   * An estimate of the tokens in `text`, for decisions about structure (is this member too long
   * to stay one record?): the default tokenizer's count (approx, which errs high against the real
   * encodings), whatever tokenizer the request names.
   */
  estimate (text: string): number
  /**
   * Whether `text`, which `estimate` put at `estimated` tokens, over max_tokens, is over it by the
   * request's tokenizer too: with approx, yes; with an exact one, its count decides while the
   * estimate is under three times the budget (above, yes). Ask it before opening a record, so
   * that one that fits the named tokenizer is not opened because approx counts it higher.
   */
  confirmOver (text: string, estimated: number): boolean
}

export interface ParserHandler<Input = string> {
  /** A piece of the input, in order. Pieces may split anywhere (mid-line, mid-character pair). */
  write (piece: Input): void
  /**
   * No more input: emit what is left and close open containers. A parser that emits much here
   * (a whole-document parser) may return an iterable and emit its events as it is stepped: the
   * pipeline hands out the chunks made between steps, so they need not all wait in memory.
   */
  end (): void | Iterable<unknown>
}

/** What every parser declares; `reads` and `create` come with TextParserPlugin or BytesParserPlugin. */
export interface ParserPluginBase<O extends TObject = NoOwnOptions> extends PluginBase {
  kind: 'parser'
  /** Format names this parser accepts (`markdown`, `md`). The first is the canonical name. */
  formats: readonly string[]
  /** File extensions with the dot (`.md`), for `auto`. */
  extensions: readonly string[]
  /**
   * Which of `formats` an extension means, when a parser takes several distinct formats
   * (`.ts` → `typescript`, `.tsv` → `tsv`). By default, the first (canonical) format.
   */
  extensionFormats?: Record<string, string>
  /**
   * Names in `formats` that are other names of another entry (`md` → `markdown`): a response
   * reports the entry's name, whichever one was asked for. The parser still sees the name given.
   */
  formatAliases?: Record<string, string>
  /**
   * A `text` parser that needs the whole document at once (markdown-it, tree-sitter, yaml): the
   * pipeline gathers the decoded text and calls write() once, with all of it, just before end()
   * (not at all for an empty input). It keeps that one string for checking the events, where a
   * parser that joined its pieces itself would have the document twice in memory.
   */
  whole?: boolean
  /** The splitter used when the request names none. */
  defaultSplitter: string
  /** Extra options, as a TypeBox object of optional properties (snake_case names). */
  options?: O
  /**
   * The fields its records add to chunks (RecordEvent.fields), as a TypeBox object of optional
   * strings and numbers: they join the Chunk schema that OpenAPI and the README show. Declare
   * their TypeScript types for library users too: `declare module 'docsplit' { interface ChunkFields { ... } }`.
   */
  chunkFields?: TObject
  /**
   * Content sniffing for `auto`: a score from 0 (not this format) to 1 (certainly this format)
   * for the first decoded characters of the input. Called only when the extension did not decide.
   */
  detect? (sample: string): number
  /**
   * Which of `formats` the sample is, when `detect` chose this parser (a shebang names the
   * language); by default, or when the answer is not one of `formats`, the first.
   */
  formatOf? (sample: string): string | undefined
  /**
   * The encoding the document declares in its first bytes (an XML declaration's `encoding`), or
   * undefined. Used when the caller gave no `encoding` and the input has no BOM; `head` holds
   * the first DECLARED_HEAD bytes (fewer for a shorter input).
   */
  declaredEncoding? (head: Uint8Array): string | undefined
}

/** A parser of text: its handler gets decoded strings. */
export interface TextParserPlugin<O extends TObject = NoOwnOptions> extends ParserPluginBase<O> {
  reads: 'text'
  create (ctx: ParserContext<O>): ParserHandler<string> | Promise<ParserHandler<string>>
}

/** A parser of bytes (xlsx): its handler gets raw Uint8Array pieces. */
export interface BytesParserPlugin<O extends TObject = NoOwnOptions> extends ParserPluginBase<O> {
  reads: 'bytes'
  create (ctx: ParserContext<O>): ParserHandler<Uint8Array> | Promise<ParserHandler<Uint8Array>>
}

/** A parser: by `reads`, a handler of strings or of bytes (so a plugin's `write(piece)` is typed). */
export type ParserPlugin<O extends TObject = NoOwnOptions> = TextParserPlugin<O> | BytesParserPlugin<O>

/** What a packer emits: a span of the document; core adds ids, offsets and the index. */
export interface ChunkDraft {
  /** Offsets in the decoded text (UTF-16 units), as in events. */
  start: number
  end: number
  text: string
  /** Exact count of `text` by the context's tokenizer. */
  tokenCount: number
  path: string[]
  kinds: string[]
  boundary: Boundary
  protected?: boolean
  recordStart?: number
  recordCount?: number
  context?: string
  /** Offsets inside the draft where an overlap tail may start (record starts; 0 repeats all of it); default: word starts. */
  overlapStarts?: number[]
  /**
   * Stretches of the draft ([start, end) offsets in it, ascending, not overlapping) that an
   * overlap tail may start at the start of, but not inside: what leads into what follows it (a
   * heading, a lead-in line, a comment over a declaration), which the next chunk should not
   * repeat from its last word.
   */
  overlapAvoid?: Array<[number, number]>
  /** This chunk starts a new group (sheet, CSV context): it repeats nothing of the previous one. */
  noOverlap?: boolean
  refs?: string[]
  /** Extra chunk fields from records (see RecordEvent.fields). */
  fields?: Record<string, string | number>
}

export type Boundary = 'section' | 'block' | 'line' | 'sentence' | 'word' | 'grapheme' | 'record' | 'end'

export interface PackerContext<O extends TObject = NoOwnOptions> {
  readonly options: OwnOptions<O>
  readonly tokenizer: Tokenizer
  /** The budget a packer packs to: max_tokens less the tokens reserved for overlap. */
  readonly budget: number
  /** Estimates and exact counts against the budget (see budget.ts). */
  readonly meter: Meter
  readonly segmenters: Segmenters
  /**
   * The decoded text from `start` to `end` when the engine still holds it in one piece (text
   * formats), else undefined. A chunk's text taken from here is one slice of the source, not
   * parts joined, so nothing downstream has to copy it into one string.
   */
  source (start: number, end: number): string | undefined
  emit (chunk: ChunkDraft): void
}

export interface PackerHandler {
  push (event: DocEvent): void
  /**
   * No more events: emit what is held. `interrupted` is true when the input stopped at an error
   * (what came before it still goes out): the last chunk then did not reach the end of the
   * document, so it keeps the boundary where it ended instead of `end`.
   */
  end (interrupted?: boolean): void
}

export interface PackerPlugin<O extends TObject = NoOwnOptions> extends PluginBase {
  kind: 'packer'
  options?: O
  /**
   * The packer counts the text of each block and record on its own: the pipeline may count
   * them ahead, on other cores, and hand the counts over in the events (`tokens`).
   */
  countsUnits?: boolean
  create (ctx: PackerContext<O>): PackerHandler
}

export interface TokenizerPlugin extends PluginBase {
  kind: 'tokenizer'
  /** Other names that select it: model names such as `gpt-4o`. */
  aliases?: readonly string[]
  /**
   * Starts of further model names that select it: `gpt-4o-` for dated snapshots such as
   * `gpt-4o-2024-08-06`. A name, then an alias, is matched first; else the longest prefix the
   * name starts with (any letter case), for a name of printable ASCII without spaces.
   */
  modelPrefixes?: readonly string[]
  /** Loads the tokenizer on first use. A missing package is DOCSPLIT_TOKENIZER_UNAVAILABLE. */
  load (): Tokenizer | Promise<Tokenizer>
}

export type Plugin<O extends TObject = NoOwnOptions> = ParserPlugin<O> | PackerPlugin<O> | TokenizerPlugin
