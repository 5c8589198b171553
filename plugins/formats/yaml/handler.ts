/**
 * YAML parser (yaml 2.x CST). Records:
 * - a stream of several documents: each document is a record (`doc[2]`); a document over the
 *   budget whose body is a block mapping or sequence is opened (enter/exit `doc[2]`, kind
 *   `document`) and its top-level items become the records;
 * - a single document: the items of its top-level block sequence (`[3]`) or the pairs of its
 *   top-level block mapping (the key: `server`), inside enter/exit `doc[0]`; any other body is one
 *   record.
 * A record over the budget (by the context's estimate) whose value is a block mapping or
 * sequence of two items or more is opened in turn, as JSON members and XML elements are:
 * enter/exit (kind `mapping` or `sequence`, labelled as the record was), and its items become
 * the records (`paths` > `/pets` > `get`), and so on down while a record is over the budget. A
 * mapping or sequence of one item is opened when that item opens (an envelope, `data:` >
 * `items:` > ...). Scalars and flow collections (`{...}`, `[...]`) are never opened: over the
 * budget, they are a record alone.
 * A record starts at the start of its line; comment lines right above an item or a `---` (not
 * more indented than the item) belong to it; blank lines and trailing comments go with the record
 * before (the blank lines as a block of kind `whitespace` after a record that may come near the
 * budget). Directives and `---` go with the first record; an opened record's key line (`paths:`)
 * is a block of kind `key` before its first item's record, so that a record that fits is not
 * pushed over the budget by the keys above it. The key lines of the records opened around a
 * record, with an opened mapping's first pairs of scalars (a Kubernetes document's `kind` and
 * `metadata.name`), are the `context` of its records (see pushLead).
 *
 * YAML does not stream: the text is buffered and parsed at the end. Aliases are never expanded
 * (nothing is converted to JS values), so an alias bomb costs no more than its own text.
 * Nesting too deep for the (recursive) composer is DOCSPLIT_LIMIT_EXCEEDED.
 */
import type { CST, LineCounter } from 'yaml'
import type { ParserContext, ParserHandler } from '../../../core/types.js'
import type { DocEvent } from '../../../core/events.js'
import { withoutStackTraces } from '../../../core/without-stacks.js'
import { walkObjects } from '../../../core/walk.js'

/** UTF-8 bytes of a UTF-16 code unit at most: a record of fewer bytes than the budget is under it (no encoding spends more tokens than bytes) and is not estimated. */
const MOST_BYTES_PER_UNIT = 3
/**
 * A record is estimated on its first (this many times max_tokens) characters, then on twice as
 * many, and so on to its end: the estimate never falls as text is added, so a prefix over the
 * budget decides. Dense text (YAML runs 3-4 characters a token) is decided on the first; sparse
 * text (deep indentation costs next to nothing) reads at most twice what decides it, and a
 * record that fits at most twice its length.
 */
const PREFIX_CHARS_PER_TOKEN = 8
/**
 * Characters estimated in all, per character of the text. A level of opened records may read
 * up to twice the text under it, so a document nested hundreds of levels deep and sparse (over
 * the budget only near its end, at every level) would be read hundreds of times: past this
 * allowance nothing more is opened (records left over the budget are protected). Real documents
 * open a few levels and read a small multiple of their text.
 */
const ESTIMATED_PER_CHARACTER = 16

/** Characters of an opened record's first items that lead its records, at most (see pushLead). */
const MAX_LEAD = 256

/** The yaml library loads with the first YAML document, not with docsplit (70 modules). */
let lib: typeof import('yaml') | undefined
/**
 * Nesting levels a document may have. yaml's composer recurses per level and reports a stack
 * overflow as RESOURCE_EXHAUSTION, but an overflow inside the regexp engine can leave V8 unable
 * to compile a regexp later, which kills the process (a service's next request): measured on a
 * 1 MB main-thread stack, it overflowed at 900-1000 levels. So the levels of each parsed token
 * are counted without recursion first, and a token deeper than this is refused before it is
 * composed. Flow brackets are also counted before parsing, as its CST parser slows down
 * quadratically on deep flow nesting; that count is naive (it counts brackets inside strings
 * too), which only matters for 500 unclosed brackets in text.
 */
const MAX_DEPTH = 500
/** Objects of yaml's CST per nesting level: two (a collection and its item). */
const CST_PER_LEVEL = 2

/** Offset where naive `[`/`{` nesting first passes MAX_DEPTH, or -1. */
function tooDeep (src: string): number {
  let depth = 0
  for (let i = 0; i < src.length; i++) {
    const c = src.charCodeAt(i)
    if (c === 91 || c === 123) {
      if (++depth > MAX_DEPTH) return i
    } else if ((c === 93 || c === 125) && depth > 0) {
      depth--
    }
  }
  return -1
}

type Item = CST.CollectionItem
type Body = CST.BlockMap | CST.BlockSequence

interface Span {
  start: number
  label: string
  /** The item's value when it is a block collection, which the record may be opened into; none when two items share the span. */
  body?: Body
}

/** Opened records whose records are being emitted: their spans, the next one, and their own span. */
interface Frame {
  spans: Span[]
  next: number
  start: number
  end: number
  /** Known to be over the budget (a single item spanning all of it is too). */
  over: boolean
  /** Its lead (see pushLead) is in `leads` while its records are emitted. */
  lead: boolean
}

/** The block collection a value is, or undefined: scalars and flow collections are never opened. */
function collection (value: CST.Token | null | undefined): Body | undefined {
  return value?.type === 'block-map' || value?.type === 'block-seq' ? value : undefined
}

/**
 * An item of comment lines only: yaml's CST ends a nested collection followed by comment lines
 * with one (`  x: 1\n  # trailing\n`). No item: its lines stay with the record before.
 */
function commentsOnly (item: Item): boolean {
  return (item.key === undefined || item.key === null) && item.sep === undefined && (item.value === undefined || item.value === null) &&
    item.start.every((t) => t.type === 'comment' || t.type === 'newline' || t.type === 'space')
}

/** The items of a collection, the trailing comment lines aside (they can only come last). */
function itemCount (body: Body): number {
  const n = body.items.length
  return n > 0 && commentsOnly(body.items[n - 1]!) ? n - 1 : n
}

/**
 * Whether opening a record into `body` gives more than one record, or one that opens in turn
 * (a mapping of one key over a larger one: `data:` > `items:`). A lone scalar is not worth a
 * level of path: opened, it would be the same text under a longer label. Follows a chain of
 * lone items down, without recursion.
 */
function opens (body: Body | undefined): boolean {
  for (let b = body; b !== undefined; b = collection(b.items[0]?.value)) {
    const n = itemCount(b)
    if (n !== 1) return n > 1
  }
  return false
}

/** `opens` for spans already cut: two items in one span count as one, never opened. */
const opensInto = (spans: Span[]): boolean => spans.length > 1 || (spans.length === 1 && opens(spans[0]!.body))

/**
 * Adds the comment tokens in `token` that are the first thing on their line (line start →
 * column) to `out`. Returns where its objects first nest deeper than `limit` (the offset of a
 * token seen last before, near there), or -1.
 */
function scanToken (src: string, token: CST.Token, out: Map<number, number>, limit: number): number {
  let at = token.offset
  const deep = !walkObjects(token, (node, depth) => {
    const t = node as { type?: unknown, offset?: unknown }
    if (typeof t.offset === 'number') at = t.offset
    if (depth > limit) return false
    if (t.type === 'comment' && typeof t.offset === 'number') {
      const ls = src.lastIndexOf('\n', t.offset - 1) + 1
      if (/^[ \t]*$/.test(src.slice(ls, t.offset))) out.set(ls, t.offset - ls)
    }
  })
  return deep ? at : -1
}

/**
 * Characters a document may have. yaml's parser holds the whole document as a token tree of
 * about 125 bytes a character (and composing it about 40 more): 5 MB took 950 MB; 31 MB ran the
 * process out of memory. Past this, the split is refused before parsing.
 */
export const MAX_DOCUMENT = 4 * 1024 * 1024

/** The longest span between document markers (`---`, `...` at the start of a line). */
function largestDocument (src: string): { start: number, length: number } {
  const marker = /^(?:---|\.\.\.)(?=[ \t\r\n]|$)/gm
  let best = { start: 0, length: 0 }
  let from = 0
  for (let m = marker.exec(src); ; m = marker.exec(src)) {
    const at = m === null ? src.length : m.index
    if (at - from > best.length) best = { start: from, length: at - from }
    if (m === null) return best
    from = at
  }
}


export class YamlHandler implements ParserHandler<string> {
  /** The text as given: the events' text. */
  private text = ''
  /** The copy that is parsed and searched: a lone CR (a line end in YAML) is a LF, as yaml reads only LF and CRLF; same length, so the same offsets. */
  private src = ''
  private comments = new Map<number, number>()
  /** Offsets of the block scalar headers that keep their final line breaks, found when first needed. */
  private keeps: number[] | undefined
  private readonly maxTokens: number
  /** Characters that may still be estimated (see ESTIMATED_PER_CHARACTER); -1 once spent. */
  private allowance = 0
  /** The leads of the records opened around the records being emitted, outermost first. */
  private readonly leads: string[] = []

  constructor (private readonly ctx: ParserContext) {
    this.maxTokens = ctx.options.max_tokens
  }

  write (all: string): void {
    this.text += all
  }

  /**
   * Moves a boundary at `offset` (an item's first token, at column `column`) to the start of its
   * line, then up over the comment lines right above it, never to or before `floor`.
   */
  private boundary (offset: number, column: number, floor: number): number {
    const src = this.src
    let b = src.lastIndexOf('\n', offset - 1) + 1
    if (!/^[ \t]*$/.test(src.slice(b, offset))) b = offset
    while (b > 0) {
      const prev = src.lastIndexOf('\n', b - 2) + 1
      const col = this.comments.get(prev)
      if (prev <= floor || col === undefined || col > column) break
      b = prev
    }
    return Math.max(b, floor)
  }

  /** Offset and column of an item's first token. */
  private itemStart (item: Item): number | undefined {
    for (const t of item.start) if (t.type !== 'newline' && t.type !== 'space') return t.offset
    if (item.key !== undefined && item.key !== null) return item.key.offset
    const sep = item.sep?.find((t) => t.type !== 'newline' && t.type !== 'space')
    if (sep !== undefined) return sep.offset
    return item.value?.offset
  }

  private itemLabel (body: CST.BlockMap | CST.BlockSequence, item: Item, k: number): string {
    if (body.type === 'block-seq') return `[${k}]`
    const key = item.key
    if (key === undefined || key === null) return `[${k}]`
    if (key.type === 'scalar' || key.type === 'single-quoted-scalar' || key.type === 'double-quoted-scalar' || key.type === 'block-scalar') {
      const r = lib!.CST.resolveAsScalar(key)
      if (r !== null) return r.value.length > 80 ? `${r.value.slice(0, 80)}…` : r.value
    }
    return `[${k}]`
  }

  /**
   * The records of the items of `body`, in [start, end): the first starts at `start` (with the
   * text before it: directives, `---`, the key line of the record opened), the others at the
   * start of their line or above their comments.
   */
  private spans (body: Body, start: number, end: number): Span[] {
    const out: Span[] = []
    let floor = start
    body.items.forEach((item, k) => {
      if (commentsOnly(item)) return
      const span: Span = { start, label: this.itemLabel(body, item, k), body: collection(item.value) }
      if (k > 0) {
        const at = this.itemStart(item)
        if (at === undefined || at <= floor || at >= end) {
          // nothing to cut on: the item stays with the one before, which then is never opened
          out[out.length - 1]!.body = undefined
          return
        }
        const col = at - (this.src.lastIndexOf('\n', at - 1) + 1)
        span.start = floor = this.boundary(at, Math.min(col, body.indent), floor)
      }
      out.push(span)
    })
    return out
  }

  /**
   * Where the first item of `body` starts on its own (its line, or the comments above it), after
   * the key line of the record that holds it, which starts at `start`; `start` when it does not
   * start its line (`- name: x`: a record starts at the start of a line).
   */
  private firstItemStart (body: Body, start: number, end: number): number {
    const item = body.items.find((i) => !commentsOnly(i))
    const at = item === undefined ? undefined : this.itemStart(item)
    if (at === undefined || at <= start || at >= end) return start
    const lineStart = this.src.lastIndexOf('\n', at - 1) + 1
    if (!/^[ \t]*$/.test(this.src.slice(lineStart, at))) return start
    return this.boundary(at, Math.min(at - lineStart, body.indent), start)
  }

  /**
   * Whether the text in [start, end) is over the budget by the context's estimate (and the
   * request's tokenizer: ParserContext.confirmOver): on prefixes
   * that double (PREFIX_CHARS_PER_TOKEN), within the allowance (else false).
   */
  private over (start: number, end: number): boolean {
    const length = end - start
    if (length * MOST_BYTES_PER_UNIT <= this.maxTokens) return false
    for (let prefix = Math.min(length, PREFIX_CHARS_PER_TOKEN * this.maxTokens); ; prefix = Math.min(length, 2 * prefix)) {
      if (!this.spend(prefix)) return false
      const text = this.src.slice(start, start + prefix)
      const estimated = this.ctx.estimate(text)
      if (estimated > this.maxTokens && this.ctx.confirmOver(text, estimated)) return true
      if (prefix === length) return false
    }
  }

  private spend (characters: number): boolean {
    if (characters > this.allowance) this.allowance = -1
    if (this.allowance < 0) return false
    this.allowance -= characters
    return true
  }

  /**
   * Emits the records of `spans` (the last ends at `end`), opening a record over the budget
   * whose value opens: enter, its items' records, exit, and so on down. An explicit stack, not
   * recursion: nesting goes to MAX_DEPTH levels. `over`: [start, end) is known over the budget.
   */
  private emitSpans (spans: Span[], start: number, end: number, over: boolean, lead: boolean): void {
    const stack: Frame[] = [{ spans, next: 0, start, end, over, lead: this.pushLead(spans, end, lead) }]
    while (stack.length > 0) {
      const f = stack[stack.length - 1]!
      if (f.next === f.spans.length) {
        stack.pop()
        if (f.lead) this.leads.pop()
        if (stack.length > 0) this.ctx.emit({ type: 'exit', end: f.end })
        continue
      }
      const s = f.spans[f.next++]!
      const e = f.next < f.spans.length ? f.spans[f.next]!.start : f.end
      const body = s.body
      // a lone item spanning all of an opened record is over the budget as that record is
      const kids = body !== undefined && opens(body) && ((f.over && s.start === f.start && e === f.end) || this.over(s.start, this.contentEnd(s.start, e)))
        ? this.spans(body, s.start, e)
        : undefined
      if (body !== undefined && kids !== undefined && opensInto(kids)) {
        this.ctx.emit({ type: 'enter', kind: body.type === 'block-map' ? 'mapping' : 'sequence', label: s.label, start: s.start })
        // the key line (`jobs:`) goes as a block, with the first record when both fit: a record
        // that fits is not pushed over the budget by the keys of the records opened above it
        const own = this.firstItemStart(body, s.start, e)
        if (own > s.start) {
          this.ctx.emit({ type: 'block', kind: 'key', start: s.start, end: own, text: this.text.slice(s.start, own) })
          kids[0]!.start = own
        }
        stack.push({ spans: kids, next: 0, start: s.start, end: e, over: true, lead: this.pushLead(kids, e, body.type === 'block-map', this.text.slice(s.start, own)) })
      } else {
        this.emitRecord(s.start, e, s.label)
      }
    }
  }

  /**
   * An opened record's lead: its key line (`spec:`, `- `), then, for a mapping, its first pairs of
   * scalars while they come to at most MAX_LEAD characters and leave one pair or more after them
   * (a Kubernetes document's `apiVersion` and `kind`; a step's `name:`), as the source has them;
   * the `context` of its records, with the leads of the records opened around it, so that the
   * context reads as the YAML around the chunk (`spec:` / `template:` / `spec:` under the
   * document's `kind`). Not a pair whose value is a mapping or sequence (in a map of named
   * entries, the first entry is no context for the others), nor a sequence's first items, nor
   * the pairs of a file's single document (its first settings). Pushed on `leads` when there is one.
   */
  private pushLead (spans: Span[], end: number, wanted: boolean, keyLine = ''): boolean {
    const key = keyLine.replace(/^(?:[ \t]*\r?\n)+/, '').trimEnd()
    const pairs = wanted && spans.length >= 2 ? this.leadPairs(spans, end) : ''
    const lead = key === '' ? pairs : pairs === '' ? key : `${key}\n${pairs}`
    if (lead === '') return false
    this.leads.push(lead)
    return true
  }

  /** The first pairs of an opened mapping that lead its context (see pushLead), or ''. */
  private leadPairs (spans: Span[], end: number): string {
    const from = spans[0]!.start
    let i = 1
    while (i < spans.length && spans[i]!.start - from <= MAX_LEAD && spans[i - 1]!.body === undefined) i++
    let lead = this.text.slice(from, spans[i - 1]!.start).trimEnd()
    // The first pair that did not fit, when it is a mapping with a `name` (Kubernetes' `metadata`):
    // its key line and that name.
    const over = spans[i - 1]!
    const overEnd = i < spans.length ? spans[i]!.start : end
    if (over.body?.type === 'block-map' && i - 1 > 0) {
      const own = this.firstItemStart(over.body, over.start, overEnd)
      const pairs = this.spans(over.body, own, overEnd)
      const k = pairs.findIndex((p) => p.label === 'name' && p.body === undefined)
      if (own > over.start && k !== -1) {
        const name = this.text.slice(pairs[k]!.start, k + 1 < pairs.length ? pairs[k + 1]!.start : overEnd).trimEnd()
        if (name.length <= MAX_LEAD) lead = `${lead}\n${this.text.slice(over.start, own).trimEnd()}\n${name.replace(/^\n+/, '')}`
      }
    }
    return lead
  }

  /**
   * Where the record in [start, end) ends without the blank lines after it (with the line break
   * of its last line), when it may come near the budget; else `end`.
   */
  private contentEnd (start: number, end: number): number {
    if (MOST_BYTES_PER_UNIT * (end - start) <= this.maxTokens) return end
    const src = this.src
    let content = end
    while (content > start && isBlank(src.charCodeAt(content - 1))) content--
    const lineEnd = src.indexOf('\n', content)
    if (content === start || lineEnd === -1 || lineEnd + 1 >= end) return end
    // a block scalar that keeps its final line breaks (`|+`) may end with them
    return this.keepsIn(start, end) ? end : lineEnd + 1
  }

  /**
   * Whether a block scalar header that keeps its final line breaks is in [start, end): found
   * once in the whole text, as records nested many levels deep share their ends.
   */
  private keepsIn (start: number, end: number): boolean {
    const keeps = this.keeps ??= Array.from(this.src.matchAll(KEEP_CHOMPING), (m) => m.index)
    let lo = 0
    let hi = keeps.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (keeps[mid]! < start) lo = mid + 1
      else hi = mid
    }
    return lo < keeps.length && keeps[lo]! < end
  }

  /**
   * A record, and the blank lines after it as a block of their own, so that a record that fits
   * is not pushed over the budget by them; only for a record that may come near the budget: a
   * block per record costs time.
   */
  private emitRecord (start: number, end: number, label: string): void {
    const last = this.contentEnd(start, end)
    const context = this.leads.length === 0 ? undefined : this.leads.join('\n')
    this.ctx.emit({ type: 'record', start, end: last, text: this.text.slice(start, last), label, ...(context !== undefined ? { context } : {}) })
    if (last < end) this.ctx.emit({ type: 'block', kind: 'whitespace', start: last, end, text: this.text.slice(last, end) })
  }

  private fail (offset: number, lineCounter: LineCounter, code: string, limit = false): never {
    const { line, col } = lineCounter.linePos(offset)
    const where = `line ${Math.max(1, line)}, column ${Math.max(1, col)}`
    if (limit) return this.ctx.fail('DOCSPLIT_LIMIT_EXCEEDED', `YAML nesting too deep for the parser (the limit is ${MAX_DEPTH} levels) at ${where}`)
    return this.ctx.fail('DOCSPLIT_PARSE_ERROR', `invalid YAML at ${where}: ${code.toLowerCase().replace(/_/g, ' ')}`)
  }

  end (): void {
    const text = this.text
    if (text.length === 0) return
    const src = this.src = text.indexOf('\r') === -1 ? text : text.replace(/\r(?!\n)/g, '\n')
    const { LineCounter, Parser, Composer } = lib!
    const lineCounter = new LineCounter()
    const countLinesTo = (offset: number): void => {
      lineCounter.addNewLine(0)
      for (let at = src.indexOf('\n'); at !== -1 && at < offset; at = src.indexOf('\n', at + 1)) lineCounter.addNewLine(at + 1)
    }
    const deep = tooDeep(src)
    if (deep !== -1) {
      countLinesTo(deep)
      this.fail(deep, lineCounter, '', true)
    }
    const big = largestDocument(src)
    if (big.length > MAX_DOCUMENT) {
      countLinesTo(big.start)
      const { line } = lineCounter.linePos(big.start)
      this.ctx.fail('DOCSPLIT_LIMIT_EXCEEDED', `the YAML document at line ${Math.max(1, line)} has ${big.length} characters; a document is split up to ${MAX_DOCUMENT} (YAML does not stream: its parser holds about 150 bytes a character). Split it into documents (---) or smaller files`)
    }
    // Documents one at a time: a long stream of small documents never holds more than one parsed.
    const composer = new Composer({ keepSourceTokens: false, uniqueKeys: false })
    const check = (docs: Iterable<{ errors: Array<{ pos: [number, number], code: string }> }>): void => {
      for (const doc of docs) {
        const err = doc.errors[0]
        if (err !== undefined) this.fail(err.pos[0], lineCounter, err.code, err.code === 'RESOURCE_EXHAUSTION')
      }
    }
    this.allowance = ESTIMATED_PER_CHARACTER * src.length
    const emit = (e: DocEvent): void => { this.ctx.emit(e) }
    /** The document read last, waiting for the start of the next (or the end) to know its end. */
    let held: { doc: CST.Document, start: number } | undefined
    let index = 0
    let count = 0
    let pending: number | undefined
    const emitDocument = (doc: CST.Document, start: number, end: number, single: boolean): void => {
      const label = `doc[${index++}]`
      const body = collection(doc.value)
      // a single document is always opened; one of a stream when it is over the budget
      const over = !single && opens(body) && this.over(start, this.contentEnd(start, end))
      const spans = body !== undefined && itemCount(body) > 0 && (single || over) ? this.spans(body, start, end) : undefined
      if (spans === undefined || (!single && !opensInto(spans))) {
        this.emitRecord(start, end, label)
        return
      }
      emit({ type: 'enter', kind: 'document', label, start })
      // a stream's document opened: its first lines (`kind`, `metadata.name`) lead its records
      this.emitSpans(spans, start, end, over, !single && body!.type === 'block-map')
      emit({ type: 'exit', end })
    }
    try {
      for (const t of new Parser(lineCounter.addNewLine).parse(src)) {
        const deep = scanToken(src, t, this.comments, MAX_DEPTH * CST_PER_LEVEL + 10)
        if (deep !== -1) this.fail(deep, lineCounter, '', true)
        check(withoutStackTraces(() => [...composer.next(t)]))
        if (t.type === 'document') {
          // Leading top-level comments and directives go with the document after them.
          const start = held === undefined ? 0 : this.boundary(pending ?? t.offset, 0, held.start)
          if (held !== undefined) emitDocument(held.doc, held.start, start, false)
          held = { doc: t, start }
          count++
          pending = undefined
        } else if (t.type === 'doc-end') {
          pending = undefined
        } else if ((t.type === 'comment' || t.type === 'directive') && pending === undefined) {
          pending = t.offset
        }
      }
      check(withoutStackTraces(() => [...composer.end()]))
    } catch (e) {
      if (e instanceof RangeError) this.fail(0, lineCounter, '', true)
      throw e
    }
    if (held === undefined) {
      emit({ type: 'block', kind: 'comment', start: 0, end: text.length, text })
      return
    }
    emitDocument(held.doc, held.start, src.length, count === 1)
  }
}

/** A block scalar's header that keeps the line breaks at its end (`|+`, `>2+`), anywhere in a text. */
const KEEP_CHOMPING = /[|>][1-9]?\+/g

/** Space, tab, line feed, carriage return: what blank lines are made of. */
function isBlank (code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9
}

/** A handler for one document; the yaml library loads with the first. */
export async function createYamlHandler (ctx: ParserContext): Promise<ParserHandler<string>> {
  lib ??= await import('yaml')
  const h = new YamlHandler(ctx)
  return { write: (piece: string) => { h.write(piece) }, end: () => { h.end() } }
}
