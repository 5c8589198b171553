/**
 * Markdown → docsplit events, on markdown-it's block parser (inline parsing never runs).
 *
 * markdown-it gives block tokens with line maps ([first, end) lines). We turn those into events
 * that tile the text: a block starts at the start of its first line and runs to the start of the
 * next block, so blank lines, container markers (`>`, list bullets on otherwise empty lines),
 * table delimiter rows and trailing whitespace go with the block before them. Lines no token
 * covers that hold link reference definitions become a `definitions` block.
 *
 * Line ends: `\n`, `\r\n` and a lone `\r`, as CommonMark says. markdown-it reads a copy of the
 * same length (so offsets hold) in which the `\r` of `\r\n` is a space and a lone `\r` is `\n`;
 * a CRLF line's `\r` stays part of its line in the events. NUL becomes U+FFFD in the copy.
 * Everything here is iterative: the nesting depth of the input costs no stack (markdown-it itself stops nesting at `maxNesting`;
 * what is nested deeper stays text of the enclosing block).
 */
import type { Env, MarkdownIt, StateBlock, Token } from 'markdown-it'
import type { BlockEvent, CutStyle, DocEvent, InfoEvent, RefUse } from '../../../core/events.js'
import { walkObjects } from '../../../core/walk.js'
import { withoutStackTraces } from '../../../core/without-stacks.js'

interface Reference { href: string, title: string }

let md: MarkdownIt | undefined
let yamlLib: typeof import('yaml') | undefined
type YamlToken = import('yaml').CST.Token

/**
 * markdown-it (and yaml, for front matter) load with the first markdown document, not with
 * docsplit: together they cost a process that splits logs some 10 MB and 40 ms at start.
 */
export async function loadMarkdownParser (): Promise<void> {
  if (md !== undefined) return
  const [{ default: MarkdownItCtor }, yaml] = await Promise.all([import('markdown-it'), import('yaml')])
  yamlLib = yaml
  // The default preset has GFM tables and strikethrough; `html: true` turns on HTML blocks.
  md ??= new MarkdownItCtor('default', { html: true, linkify: false, typographer: false })
}

function markdownIt (): MarkdownIt {
  if (md === undefined) throw new Error('loadMarkdownParser() must run before markdown is parsed')
  return md
}

/**
 * markdown-it 15 builds Token with a transpiled class-field helper (a defineProperty per field)
 * that costs a sixth of the block parse. PlainToken has Token's fields, set by plain assignment,
 * and Token's prototype (its methods, `instanceof Token`); `usePlainTokens` gives a state a
 * StateBlock#push that makes them.
 */
interface PlainTokenClass { new (type: string, tag: string, nesting: -1 | 0 | 1): Token }
const plainTokenClasses = new WeakMap<object, PlainTokenClass>()

function plainTokenClass (TokenClass: typeof Token): PlainTokenClass {
  let cls = plainTokenClasses.get(TokenClass)
  if (cls === undefined) {
    function PlainToken (this: Record<string, unknown>, type: string, tag: string, nesting: -1 | 0 | 1): void {
      this.type = type
      this.tag = tag
      this.attrs = null
      this.map = null
      this.nesting = nesting
      this.level = 0
      this.children = null
      this.content = ''
      this.markup = ''
      this.info = ''
      this.meta = null
      this.block = false
      this.hidden = false
    }
    PlainToken.prototype = Object.create(TokenClass.prototype as object) as object
    cls = PlainToken as unknown as PlainTokenClass
    plainTokenClasses.set(TokenClass, cls)
  }
  return cls
}

function usePlainTokens (state: StateBlock): void {
  const PlainToken = plainTokenClass(state.Token)
  state.push = function push (this: StateBlock, type: string, tag: string, nesting: -1 | 0 | 1): Token {
    const token = new PlainToken(type, tag, nesting)
    token.block = true
    if (nesting < 0) this.level--
    token.level = this.level
    if (nesting > 0) this.level++
    this.tokens.push(token)
    return token
  }
}

/**
 * A block state for `src`, as `new StateBlock(src, ...)` makes it, with the per-line tables in
 * Int32Arrays (half the memory of arrays of numbers) filled by a scan that finds line ends with
 * indexOf and reads only each line's indentation; StateBlock's constructor visits every
 * character and pushes onto five growing arrays. Rules only index these tables.
 */
function newState (parser: MarkdownIt, src: string, env: Env): StateBlock {
  const state = new parser.block.State('', parser, env, [])
  usePlainTokens(state)
  const len = src.length
  let max = 1
  for (let i = src.indexOf('\n'); i !== -1; i = src.indexOf('\n', i + 1)) max++
  const bMarks = new Int32Array(max + 1)
  const eMarks = new Int32Array(max + 1)
  const tShift = new Int32Array(max + 1)
  const sCount = new Int32Array(max + 1)
  let line = 0
  for (let start = 0; start < len;) {
    const nl = src.indexOf('\n', start)
    const end = nl === -1 ? len : nl
    let pos = start
    let offset = 0
    for (; pos < end; pos++) {
      const ch = src.charCodeAt(pos)
      if (ch === 32) offset++
      else if (ch === 9) offset += 4 - offset % 4
      else break
    }
    // As markdown-it: a last line without `\n` that is only spaces and tabs is no line.
    if (nl === -1 && pos === end) break
    bMarks[line] = start
    eMarks[line] = end
    tShift[line] = pos - start
    sCount[line] = offset
    line++
    if (nl === -1) break
    start = nl + 1
  }
  bMarks[line] = len
  eMarks[line] = len
  state.src = src
  state.bMarks = bMarks as unknown as number[]
  state.eMarks = eMarks as unknown as number[]
  state.tShift = tShift as unknown as number[]
  state.sCount = sCount as unknown as number[]
  state.bsCount = new Int32Array(max + 1) as unknown as number[]
  state.lineMax = line
  state.getLines = labelLinesOnly
  return state
}

/**
 * StateBlock#getLines for a parse whose inline content is never read: the text of a block's
 * lines, copied (and re-indented) for paragraphs, fences, code and HTML blocks, was 5% of a
 * markdown split and garbage as large as the document. Only a setext heading's content is read
 * (as its label), and markdown-it's lheading asks for it with `end` on the underline: a run of
 * `=` or `-` and then only spaces. Any other call gets ''.
 */
function labelLinesOnly (this: StateBlock, begin: number, end: number, indent: number, keepLastLF: boolean): string {
  if (keepLastLF || end >= this.lineMax || !isUnderline(this, end)) return ''
  return (Object.getPrototypeOf(this) as StateBlock).getLines.call(this, begin, end, indent, keepLastLF)
}

function isUnderline (state: StateBlock, line: number): boolean {
  const src = state.src
  let pos = state.bMarks[line]! + state.tShift[line]!
  const max = state.eMarks[line]!
  const marker = src.charCodeAt(pos)
  if (pos >= max || (marker !== 0x3D && marker !== 0x2D)) return false
  while (pos < max && src.charCodeAt(pos) === marker) pos++
  while (pos < max && (src.charCodeAt(pos) === 0x20 || src.charCodeAt(pos) === 0x09)) pos++
  return pos >= max
}

/** CommonMark label normalization (as markdown-it keys `env.references`). */
export function referenceKey (label: string): string {
  return label.trim().replace(/\s+/g, ' ').toLowerCase().toUpperCase()
}

/** The label as events carry it: normalized and lower case. */
function eventLabel (key: string): string {
  return key.toLowerCase()
}

/**
 * YAML front matter: `---` on the first line, closed by `---` or `...`, holding a YAML mapping,
 * nothing, or text that does not parse but starts like a mapping (`key:`). Anything else
 * (`---` / `Foo` / `---` is a thematic break and a setext heading in CommonMark) is markdown.
 * The closing line must come within the first MiB.
 */
const MAX_FRONT_MATTER = 1 << 20
/** A closing line. Anchored: a trailing-whitespace pattern backtracks on a line of 400K spaces. */
const CLOSING_FENCE = /^(?:---|\.\.\.)[ \t\r\n]*$/

/** Nesting levels of front matter that is parsed (real front matter has a handful). */
const MAX_FRONT_MATTER_DEPTH = 100
/** What frontMatterValue answers for front matter nested deeper than that. */
const TOO_DEEP = Symbol('too deep')

/**
 * The front matter's value, read as yaml's `parse` reads it (one document; its first error
 * thrown), lexed once: its syntax tree is checked for depth, then composed. TOO_DEEP when it
 * nests deeper than MAX_FRONT_MATTER_DEPTH: the tree is built without recursion, but the
 * composer recurses per level, and a stack overflow there can leave V8 unable to compile a
 * regexp later (a service's next request died).
 */
function frontMatterValue (body: string): unknown {
  const yaml = yamlLib!
  const tokens: YamlToken[] = []
  let documents = 0
  for (const token of new yaml.Parser().parse(body)) {
    // Two objects of the tree per level: a collection and its item.
    if (!walkObjects(token, (_, depth) => depth <= 2 * MAX_FRONT_MATTER_DEPTH)) return TOO_DEEP
    // Refused at the second, before the rest is read: 1 MiB of `--- x` lines is 170,000 documents.
    if (token.type === 'document' && ++documents > 1) throw new Error('front matter holds more than one YAML document')
    tokens.push(token)
  }
  // logLevel error: yaml's warnings quote the document (a collection key), and print to stderr.
  const options = { maxAliasCount: 100, logLevel: 'error' } as const
  // yaml makes an Error with its stack for every problem: only the first is read.
  const [doc] = withoutStackTraces(() => [...new yaml.Composer(options).compose(tokens, true, body.length)])
  if (doc === undefined) return null // compose(..., true) always gives one; typed as maybe none
  if (doc.errors.length > 0) throw doc.errors[0]!
  return jsonValue(doc.toJS(options))
}

/**
 * A YAML value as JSON data, so that the library's front matter is what the CLI and the service
 * print: a `!!set` as the list of its members, an `!!omap` (a Map) as an object, `!!binary` as
 * its base64, a `!!timestamp` as its ISO string, and .nan and .inf as null (as JSON.stringify
 * writes them). An alias's value is converted where it is met, as JSON.stringify repeats it: the
 * nesting can pass MAX_FRONT_MATTER_DEPTH that way, but yaml's maxAliasCount bounds it (a few
 * hundred levels).
 */
function jsonValue (value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  if (typeof value === 'bigint') return Number(value)
  if (value === null || typeof value !== 'object') return value === undefined ? null : value
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString()
  if (value instanceof Set) return [...value].map(jsonValue)
  if (Array.isArray(value)) return value.map(jsonValue)
  const entries = value instanceof Map ? [...value] : Object.entries(value)
  const out: Record<string, unknown> = {}
  // Defined, not assigned: a key `__proto__` is a member, as JSON.parse makes it.
  for (const [key, member] of entries) Object.defineProperty(out, String(key), { value: jsonValue(member), enumerable: true, writable: true, configurable: true })
  return out
}

function frontMatter (text: string, lineStarts: ArrayLike<number>, lineCount: number): { end: number, value: unknown } {
  const none = { end: 0, value: null }
  if (!/^\uFEFF?---[ \t]*(?:\r\n?|\n|$)/.test(text)) return none
  for (let line = 1; line < lineCount; line++) {
    const s = lineStarts[line] as number
    if (s > MAX_FRONT_MATTER) break
    const c = text.charCodeAt(s)
    if (c !== 45 && c !== 46) continue
    if (!CLOSING_FENCE.test(text.slice(s, lineStarts[line + 1]))) continue
    const body = text.slice(lineStarts[1], s)
    if (body.trim() === '') return { end: line + 1, value: null }
    try {
      const value = frontMatterValue(body)
      if (value === TOO_DEEP) return { end: line + 1, value: null }
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? { end: line + 1, value } : none
    } catch {
      return /^\s*(?:#.*\n\s*)*[^\s:#][^:\n]*:(?:\s|$)/.test(body) ? { end: line + 1, value: null } : none
    }
  }
  return none
}

/** A list item marker. */
const MARKER = String.raw`(?:[-+*]|\d{1,9}[.)])`
/**
 * The container markers before a line's content: quotes, and list markers each followed by
 * whitespace. The spaces after a marker are read by one `[ \t>]*` only (a lookahead asks for the
 * first): two quantifiers sharing them backtrack exponentially on `-  -  -  …`.
 */
const CONTAINERS = String.raw`^[ \t>]*(?:${MARKER}(?=[ \t])[ \t>]*)*`

/** A gap line (no token covers it) that starts a link reference definition, inside any containers (a marker may also end the line). */
const DEF_LINE = new RegExp(String.raw`^[ \t>]*(?:${MARKER}(?:(?=[ \t])[ \t>]*|$))*\[`)
/** Labels of definitions in a `definitions` block (one per line start, inside any containers). */
const DEF_LABEL = new RegExp(String.raw`${CONTAINERS}\[((?:[^\[\]\\\n]|\\.){1,999})\]:`, 'gm')
/** Uses of references: `[text][label]`, `[label][]`, `[label]` (a simple scan, not full inline parsing). */
const REF_USE = /\[((?:[^\[\]\\]|\\[^\n]){1,999})\](?:\[((?:[^\[\]\\]|\\[^\n]){0,999})\])?/g

/**
 * The code spans of `text` as [start, end) pairs, flattened: a run of n backticks up to the
 * next run of exactly n (CommonMark; a backslash does not escape inside, and an unmatched run
 * is text). A `[label]` inside one is code, not a use of the label.
 */
function codeSpans (text: string): number[] {
  const spans: number[] = []
  let at = text.indexOf('`')
  while (at !== -1) {
    let n = 1
    while (text.charCodeAt(at + n) === 96) n++
    if (at > 0 && text.charCodeAt(at - 1) === 92 /* \ */) {
      // An escaped backtick is text; the rest of the run may still open a span.
      at++
      if (--n === 0) { at = text.indexOf('`', at); continue }
    }
    let close = text.indexOf('`', at + n)
    let m = 0
    while (close !== -1) {
      m = 1
      while (text.charCodeAt(close + m) === 96) m++
      if (m === n) break
      close = text.indexOf('`', close + m)
    }
    if (close === -1) {
      at = text.indexOf('`', at + n)
      continue
    }
    spans.push(at, close + n)
    at = text.indexOf('`', close + n)
  }
  return spans
}

function findRefs (text: string, base: number, labels: Set<string>): RefUse[] | undefined {
  if (text.indexOf('[') === -1) return undefined
  let out: RefUse[] | undefined
  const spans = text.indexOf('`') === -1 ? undefined : codeSpans(text)
  let span = 0
  REF_USE.lastIndex = 0
  for (let m = REF_USE.exec(text); m !== null; m = REF_USE.exec(text)) {
    if (spans !== undefined) {
      while (span < spans.length && spans[span + 1]! <= m.index) span += 2
      if (span < spans.length && spans[span]! <= m.index) continue
    }
    const [whole, first, second] = m as unknown as [string, string, string | undefined]
    if (second === undefined) {
      const next = text.charCodeAt(m.index + whole.length)
      if (next === 40 /* ( */ || next === 58 /* : */) continue
    }
    const key = referenceKey(second !== undefined && second.trim() !== '' ? second : first)
    if (key === '' || !labels.has(key)) continue
    ;(out ??= []).push({ label: eventLabel(key), offset: base + m.index })
  }
  return out
}

/**
 * A line that may define a reference, inside any containers; its label may span lines, whose
 * container markers and indentation count here (a label has at most 999 characters without them).
 * Sticky: tried at line starts only.
 */
const MAYBE_DEF = new RegExp(String.raw`${CONTAINERS}\[((?:[^\[\]\\]|\\[\s\S]){1,4000})\]:`, 'my')

/** Whether a line whose first character after spaces and tabs is `c` may define a reference: `[`, or a container marker (`>`, a bullet, a digit) before it. */
function mayOpenDefinition (c: number): boolean {
  return c === 91 || c === 62 || c === 45 || c === 43 || c === 42 || (c >= 48 && c <= 57)
}

/**
 * The keys of every label that a line of `src` (the copy markdown-it reads) may define: all that
 * markdown-it will find and perhaps a few more (a line inside a code block). Known before the
 * parse, so blocks can go out with their reference uses while later lines are parsed; the
 * engine keeps the uses of labels that a definition event defines. Only lines that start like a
 * definition are tried (a scan of the whole text from every line start cost 15 ms per 8 MB).
 */
function labelsMaybeDefined (src: string, state: StateBlock): Set<string> {
  const labels = new Set<string>()
  if (src.indexOf(']:') === -1) return labels
  const { bMarks, eMarks, tShift } = state
  for (let line = 0; line < state.lineMax; line++) {
    const first = bMarks[line]! + tShift[line]!
    if (first >= eMarks[line]! || !mayOpenDefinition(src.charCodeAt(first))) continue
    MAYBE_DEF.lastIndex = bMarks[line]!
    const m = MAYBE_DEF.exec(src)
    if (m === null) continue
    const label = m[1] as string
    const key = referenceKey(label)
    if (key !== '') labels.add(key)
    // A label over lines inside a quote or list: markdown-it reads it without the markers.
    if (label.indexOf('\n') !== -1) {
      const bare = referenceKey(label.replace(/\n[ \t>]*/g, '\n'))
      if (bare !== '') labels.add(bare)
    }
  }
  return labels
}

/** An event that waits behind a held block: enter and exit take their position when it goes. */
type Queued = { type: 'enter', kind: string, label: string } | { type: 'exit' } | InfoEvent

interface PendingBlock {
  kind: string
  line: number
  cut: CutStyle | undefined
  attachNext: boolean
  /** Look for reference uses in it. */
  refs: boolean
  /** It is the first block of a list item: the lead line of a nested list that may follow. */
  leadsItem: boolean
  /** A paragraph whose last line ends in a colon: it may introduce what follows. */
  endsInColon: boolean
}

interface Frame { startLine: number, endLine: number, hasBlock: boolean, kind: string }

const CONTAINER_OPEN: Record<string, string> = {
  bullet_list_open: 'list',
  ordered_list_open: 'list',
  list_item_open: 'item',
  blockquote_open: 'blockquote',
  table_open: 'table',
}
const CONTAINER_CLOSE = new Set(['bullet_list_close', 'ordered_list_close', 'list_item_close', 'blockquote_close', 'table_close'])

/**
 * A block that belongs with the block after it, as a heading does: HTML that only marks the
 * place (an anchor for links, `<a id="x"></a>`, which markdown-it reads as a paragraph; a
 * comment), and lines of tags that end with one that opens what follows: a start tag alone on
 * its line (MDX's `<Tabs>`, `</TabItem>` then `<TabItem value="yarn">`; not a void element such
 * as `<img>`) or an admonition's first line (`:::note`, `!!! warning "Title"`; not a closing
 * `:::`). A heading, then `<a id="...">`, then the section's list made the heading and its
 * anchor a chunk of their own; a chunk ended with `<TabItem value="yarn">`, its code in the next.
 */
const PLACE_MARKER = String.raw`<a\s+(?:id|name)\s*=\s*(?:"[^"]*"|'[^']*')\s*>\s*<\/a>|<!--(?:(?!-->)[^])*-->`
const OPENER = String.raw`<(?!(?:img|br|hr|input|meta|link|source|col|area|base|embed|param|track|wbr)\b)[A-Za-z][\w.:-]*(?:\s+(?:[^>"'/{]|"[^"]*"|'[^']*'|\{[^{}]*\})*)?>|(?::::+|!!!|\?\?\?\+?)[ \t]*[\w"][^\r\n]*`
const CLOSER_TAG = String.raw`<\/[A-Za-z][\w.:-]*\s*>`
const LINE_END = String.raw`[ \t]*(?:\r?\n|\r|$)`
const ATTACHED_LINES = new RegExp(String.raw`^(?:[ \t]*(?:${PLACE_MARKER}|${OPENER}|${CLOSER_TAG})${LINE_END})*[ \t]*(?:${PLACE_MARKER}|${OPENER})${LINE_END}$`, 'i')
const MARKER_MAX = 1024

function attachesToNext (block: string): boolean {
  if (block.length > MARKER_MAX) return false
  // Nearly every paragraph starts with text, not `<`, `:`, `!` or `?`: the regex runs on the few
  // that may match (trimming and testing every paragraph cost 3% of a markdown split).
  let first = 0
  while (block.charCodeAt(first) === 32 || block.charCodeAt(first) === 9) first++
  const c = block.charCodeAt(first)
  return (c === 60 /* < */ || c === 58 /* : */ || c === 33 /* ! */ || c === 63 /* ? */) && ATTACHED_LINES.test(block.trimEnd())
}

/** An attribute block at a heading's end (`{#install}`, `{#id .class}`, as Docusaurus and Pandoc write them). */
const HEADING_ATTRIBUTES = /\s*\{#[^{}]*\}\s*$/
/**
 * An MDX component with attributes or self-closing (`<ApiBadge method="POST" />`), not a
 * generic's parameter (`Promise<T>`, `Map<K, V>`).
 */
const JSX_COMPONENT = /<[A-Z][\w.]*(?:\s+[^<>]*|\s*\/)>/g

/**
 * A heading's text as its path and the title show it: white space collapsed, less its
 * attribute block and MDX components (`Bulk API {#bulk} <ApiBadge method="POST" />`: `Bulk
 * API`); a heading with code spans keeps its components (`` `<Tabs groupId="x">` ``).
 */
function headingLabel (content: string): string {
  let plain = content.includes('`') ? content : content.replace(JSX_COMPONENT, ' ')
  plain = plain.replace(HEADING_ATTRIBUTES, '').replace(/\s+/g, ' ').trim()
  return plain !== '' ? plain : content.replace(/\s+/g, ' ').trim()
}

const opensList = (behind: Queued[]): boolean => behind[0]?.type === 'enter' && behind[0].kind === 'list'

/**
 * Whether a paragraph that ends in a colon introduces what follows ("The options are:"): the
 * next block follows in the same container or in one that opens right after it (`behind`: the
 * container events before the next block), not under a new heading or after the paragraph's
 * container closes.
 */
function introduces (behind: Queued[], nextKind: string | undefined): boolean {
  const first = behind[0]
  if (first !== undefined) return first.type === 'enter' && first.kind !== 'section'
  return nextKind !== undefined && nextKind !== 'heading'
}

/** Blocks emitted per step of markdownSteps. */
const BLOCKS_PER_STEP = 64

/**
 * Parses a whole markdown document and hands its events, in order, to `emit`, as it parses:
 * a block goes out once the next one is found (where it ends), and the generator pauses after
 * every BLOCKS_PER_STEP blocks (the pipeline hands out the chunks made so far, and counts
 * blocks on other cores while the parse goes on).
 */
export function * markdownSteps (text: string, emit: (event: DocEvent) => void): Generator<void> {
  if (text.length === 0) return
  // The copy markdown-it reads: same length and line starts as `text`.
  let src = text
  if (src.charCodeAt(0) === 0xfeff) src = ' ' + src.slice(1)
  if (src.indexOf('\r') !== -1) src = src.replace(/\r\n?/g, (m) => m.length === 2 ? ' \n' : '\n')
  if (src.indexOf('\0') !== -1) src = src.replace(/\0/g, '\ufffd')

  const env: { references?: Record<string, Reference> } = {}
  const parser = markdownIt()
  // markdown-it's top-level loop (ParserBlock.tokenize at depth 0), run here so the tokens of
  // one top-level block are walked and dropped before the next: memory stays O(one block).
  const state = newState(parser, src, env)
  const rules = parser.block.ruler.getRules('')
  // Line starts: markdown-it has them (one more entry holds the length).
  const starts = state.bMarks
  const lineCount = state.lineMax
  const lineStart = (line: number): number => starts[line < lineCount ? line : lineCount] as number
  const fm = frontMatter(text, starts, lineCount)
  const fmEnd = fm.end
  const labels = labelsMaybeDefined(src, state)

  // Document information first: front matter, and its title over the first h1's.
  let title: string | undefined
  if (fmEnd > 0) {
    emit({ type: 'info', key: 'front_matter', value: fm.value })
    const fmTitle = fm.value !== null && typeof fm.value === 'object' ? (fm.value as Record<string, unknown>).title : undefined
    if (typeof fmTitle === 'string' || typeof fmTitle === 'number') {
      title = String(fmTitle)
      emit({ type: 'info', key: 'title', value: title })
    }
  }

  // Events out in order. A block waits (`held`) until the next block gives its end; the
  // containers opened or closed after it wait behind it.
  let pos = 0
  let held: PendingBlock | undefined
  let heldStart = 0
  let behind: Queued[] = []
  let blocksOut = 0
  const defined = new Set<string>()
  /** The header (and delimiter row) of the table whose rows come: a chunk starting at a row carries it as context. */
  let tableHeader: string | undefined
  /** `nextKind`: the kind of the block after the held one (none at the end). */
  const release = (end: number, nextKind?: string): void => {
    const p = held!
    const blockText = text.slice(heldStart, end)
    const event: BlockEvent = { type: 'block', kind: p.kind, start: heldStart, end, text: blockText }
    if (p.cut !== undefined) event.cut = p.cut
    // Lines that introduce what follows go with it, as a heading does: an item's lead line
    // followed at once by its nested list, and a paragraph that ends in a colon.
    if (p.attachNext || (p.leadsItem && opensList(behind)) || (p.endsInColon && introduces(behind, nextKind))) event.attachNext = true
    if (p.kind === 'table_header') tableHeader = blockText
    else if (p.kind === 'table_row' && tableHeader !== undefined) event.context = tableHeader
    if (p.refs && labels.size > 0) {
      const refs = findRefs(blockText, heldStart, labels)
      if (refs !== undefined) event.refs = refs
    }
    emit(event)
    blocksOut++
    pos = end
    if (p.kind === 'definitions' && env.references !== undefined) {
      const references = env.references
      DEF_LABEL.lastIndex = 0
      for (let m = DEF_LABEL.exec(blockText); m !== null; m = DEF_LABEL.exec(blockText)) {
        const key = referenceKey(m[1] as string)
        if (!defined.has(key) && Object.prototype.hasOwnProperty.call(references, key)) {
          defined.add(key)
          emitDefinition(emit, key, references[key] as Reference)
        }
      }
    }
    for (const e of behind) emitAt(e)
    behind = []
  }
  const emitAt = (e: Queued): void => {
    if (e.type === 'enter') emit({ type: 'enter', kind: e.kind, label: e.label, start: pos })
    else if (e.type === 'exit') emit({ type: 'exit', end: pos })
    else emit(e)
  }
  /** An event after the held block, if any: containers open and close where it ends. */
  const after = (e: Queued): void => {
    if (held !== undefined) behind.push(e)
    else emitAt(e)
  }
  const block = (p: PendingBlock): void => {
    // The first block starts at 0; each runs to the start of the next.
    const start = held === undefined && blocksOut === 0 ? 0 : lineStart(p.line)
    if (held !== undefined) release(start, p.kind)
    held = p
    heldStart = start
  }

  // Lay out blocks by their first line.
  const stack: Frame[] = []
  const sections: number[] = []
  let lastBlockLine = -1
  let claimed = 0 // lines before this are assigned to a block or scanned for definitions
  let containerStart = -1 // first line of the containers opened since the last block
  let inHead = false

  const pushBlock = (kind: string, line: number, endLine: number, cut: CutStyle | undefined, attachNext: boolean, refs: boolean): void => {
    let start = line
    if (containerStart !== -1 && containerStart < start) start = containerStart
    containerStart = -1
    if (endLine > claimed) claimed = endLine
    if (start <= lastBlockLine) return // shares a line with the block before: its text stays there
    const top = stack[stack.length - 1]
    const endsInColon = kind === 'paragraph' && lineEndsInColon(endLine - 1)
    block({ kind, line: start, cut, attachNext, refs, leadsItem: top?.kind === 'item' && !top.hasBlock, endsInColon })
    lastBlockLine = start
    if (top !== undefined) top.hasBlock = true
  }

  const bMarks = state.bMarks
  const eMarks = state.eMarks
  const tShift = state.tShift
  /** Whether the line's text, less trailing spaces and tabs, ends in a colon. */
  const lineEndsInColon = (line: number): boolean => {
    let last = eMarks[line]! - 1
    while (last >= bMarks[line]! && (src.charCodeAt(last) === 32 || src.charCodeAt(last) === 9)) last--
    // `:::` closes an admonition: it introduces nothing.
    return last > bMarks[line]! && src.charCodeAt(last) === 58 /* : */ && src.charCodeAt(last - 1) !== 58
  }
  const scanGap = (upTo: number): void => {
    if (env.references !== undefined) {
      for (let line = claimed; line < upTo; line++) {
        const first = bMarks[line]! + tShift[line]!
        if (first >= eMarks[line]!) continue // blank
        if (!mayOpenDefinition(src.charCodeAt(first))) continue
        const s = lineStart(line)
        if (DEF_LINE.test(src.slice(s, Math.min(lineStart(line + 1), s + 1024)))) {
          pushBlock('definitions', line, upTo, 'lines', false, false)
          break
        }
      }
    }
    if (upTo > claimed) claimed = upTo
  }

  if (fmEnd > 0) pushBlock('front_matter', 0, fmEnd, 'lines', false, false)

  const walk = (tokens: Token[]): void => {
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i] as Token
      const map = t.map
      switch (t.type) {
        case 'paragraph_open':
          if (map === null) break
          scanGap(map[0])
          pushBlock('paragraph', map[0], map[1], undefined, attachesToNext(text.slice(lineStart(map[0]), lineStart(map[1]))), true)
          break
        case 'heading_open': {
          if (map === null) break
          scanGap(map[0])
          const inline = tokens[i + 1]
          const label = inline?.type === 'inline' ? headingLabel(inline.content) : ''
          if (t.tag === 'h1' && title === undefined && label !== '') {
            title = label
            after({ type: 'info', key: 'title', value: title })
          }
          if (stack.length === 0) {
            const level = Number(t.tag.slice(1))
            while (sections.length > 0 && (sections[sections.length - 1] as number) >= level) {
              sections.pop()
              after({ type: 'exit' })
            }
            sections.push(level)
            after({ type: 'enter', kind: 'section', label })
          }
          pushBlock('heading', map[0], map[1], undefined, true, true)
          break
        }
        case 'fence':
        case 'code_block':
          if (map === null) break
          scanGap(map[0])
          pushBlock('code', map[0], map[1], 'lines', false, false)
          break
        case 'html_block':
          if (map === null) break
          scanGap(map[0])
          pushBlock('html', map[0], map[1], 'lines', attachesToNext(text.slice(lineStart(map[0]), lineStart(map[1]))), false)
          break
        case 'hr':
          if (map === null) break
          scanGap(map[0])
          pushBlock('hr', map[0], map[1], undefined, false, false)
          break
        case 'thead_open':
          inHead = true
          break
        case 'thead_close':
          inHead = false
          break
        case 'tr_open':
          if (map === null) break
          scanGap(map[0])
          pushBlock(inHead ? 'table_header' : 'table_row', map[0], map[1], 'lines', inHead, true)
          break
        default: {
          const kind = CONTAINER_OPEN[t.type]
          if (kind !== undefined && map !== null) {
            scanGap(map[0])
            if (containerStart === -1 || map[0] < containerStart) containerStart = map[0]
            stack.push({ startLine: map[0], endLine: map[1], hasBlock: false, kind })
            after({ type: 'enter', kind, label: '' })
          } else if (CONTAINER_CLOSE.has(t.type) && stack.length > 0) {
            const frame = stack[stack.length - 1] as Frame
            scanGap(frame.endLine)
            // An empty container (`>` alone, an empty list item) gets its lines as a block.
            if (!frame.hasBlock) pushBlock('paragraph', frame.startLine, frame.endLine, undefined, false, false)
            stack.pop()
            after({ type: 'exit' })
            const parent = stack[stack.length - 1]
            if (parent !== undefined && frame.hasBlock) parent.hasBlock = true
          }
        }
      }
    }
  }

  const endLine = state.lineMax
  let line = fmEnd // markdown-it never sees the front matter
  let stepAt = BLOCKS_PER_STEP
  while (line < endLine) {
    state.line = line = state.skipEmptyLines(line)
    if (line >= endLine) break
    let ok = false
    for (const rule of rules) {
      ok = rule(state, line, endLine, false)
      if (ok) break
    }
    if (!ok || state.line <= line) throw new Error('markdown block parser made no progress')
    walk(state.tokens)
    state.tokens.length = 0
    line = state.line
    if (blocksOut >= stepAt) {
      stepAt = blocksOut + BLOCKS_PER_STEP
      yield
    }
  }
  scanGap(lineCount)
  while (stack.length > 0) { stack.pop(); after({ type: 'exit' }) }
  if (lastBlockLine === -1) block({ kind: 'blank', line: 0, cut: undefined, attachNext: false, refs: false, leadsItem: false, endsInColon: false }) // only blank lines
  if (held !== undefined) release(text.length)
  for (const key of Object.keys(env.references ?? {})) {
    if (!defined.has(key)) emitDefinition(emit, key, env.references![key] as Reference)
  }
  for (let i = 0; i < sections.length; i++) emit({ type: 'exit', end: text.length })
}

function emitDefinition (emit: (event: DocEvent) => void, key: string, ref: Reference): void {
  emit(ref.title === ''
    ? { type: 'definition', label: eventLabel(key), url: ref.href }
    : { type: 'definition', label: eventLabel(key), url: ref.href, title: ref.title })
}

/** Block tokens of `src` as markdownSteps makes them (plain tokens), for tests. */
export function blockTokens (src: string): Token[] {
  const parser = markdownIt()
  const state = newState(parser, src, {})
  parser.block.tokenize(state, state.line, state.lineMax)
  return state.tokens
}
