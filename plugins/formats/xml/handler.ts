/**
 * XML parser (sax, strict mode). Records are the children of the root element, or, with the
 * `record_element` option, every element of that name that is not inside another record.
 * A record runs from its `<` to the start of the next record, so text, comments and closing
 * tags after it go with it (the spaces before the next record as markup, after a record that may
 * come near the budget); but after the last record of an element its end tags, and before
 * the first record of an element opened for being too long its start tag, are blocks of kind
 * `markup`, so that a record that fits is not pushed over the budget by the tags around it.
 * The document's header (the prolog, the root start tag and anything
 * else before the first record, such as an RSS channel's title and image) is a record of its
 * own, of kind `header`, as a CSV header row is: the packer puts it with the first records when
 * they fit, and alone when they do not (glued to the first record, a long channel header made
 * that record go over the budget). Ancestors of records are reported with enter/exit (the chunk
 * `path`), records are labelled XPath style (`item[3]`, 1-based among same-name siblings); the
 * records of an opened element carry its title-like first child as `context` (leadOf).
 * Names are compared as written (qualified, case-sensitive; namespace URIs are not resolved).
 * A `record_element` that names no element (but the root) is DOCSPLIT_INVALID_OPTION at the
 * end; its message gives counts only (element names are document content, never in messages).
 *
 * Safety: entities declared in a DOCTYPE are never expanded and nothing external is read; a
 * reference to an undeclared entity (`&lol9;`, `&xxe;`) stays literal text, which is all a
 * splitter needs since chunks are slices of the source. We never set sax's `unparsedEntities`,
 * and we only resume after that one error (see DEPENDENCIES §7). Memory: the current record.
 */
import type sax from 'sax'
import type { ParserContext, ParserHandler } from '../../../core/types.js'
import type { xmlOptions } from './options.js'

/** sax fields its typings leave out: the entity being read and the pending error. */
type SaxParser = Omit<sax.SAXParser, 'error'> & { entity: string, error: Error | null }

let saxLib: typeof sax | undefined

/** XML's white space: space, tab, line feed, carriage return. */
function isSpace (code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9
}

/** Whether markup holds words outside its tags: character data, not only tags and white space. */
function hasText (markup: string): boolean {
  return /[^\s<>][^<>]*\s[^\s<>]/.test(markup.replace(/<[^>]*>/g, '<>'))
}

/**
 * sax's states inside a processing instruction. sax 1.6 never ends one whose data ends in `?`
 * (`<?pi Really??>`, isaacs/sax-js#233): the document failed as unclosed. There, the run of `?`
 * before its `?>` is fed as spaces of the same length (so positions hold); anywhere else (text,
 * an attribute value, a comment) as it is, so a title's text keeps it.
 */
function instructionStates (lib: typeof sax): Set<number> {
  const { STATE } = lib as unknown as { STATE: Record<string, number> } // not in sax's types
  return new Set([STATE.PROC_INST!, STATE.PROC_INST_BODY!])
}

/** sax's buffers are checked where the text fed to it reaches a multiple of this many characters. */
const BLOCK = 65536
/** The longest name, attribute value, comment, declaration or processing instruction. */
const MAX_TOKEN = 4 * 1024 * 1024
/** sax's buffers other than text and CDATA (which a splitter never needs). */
const BUFFERS = ['comment', 'sgmlDecl', 'tagName', 'doctype', 'procInstName', 'procInstBody', 'entity', 'attribName', 'attribValue', 'script']

interface Open {
  name: string
  start: number
  /** Records seen among this element's children, by name (for `item[3]` labels). */
  counts?: Map<string, number>
  /** Its children are records (the root, or a record opened because it was too long). */
  opened?: boolean
  /** Its label among its siblings (`item[3]`), inside a record. */
  label?: string
  /**
   * Inside a record that may still be opened: its child elements (with theirs, once they have
   * ended), so that a child over the budget can be opened too when this element is.
   */
  kids?: Open[]
  /** Its length when it is estimated next: the length doubles between estimates, so each reads it about twice in all. */
  checkAt?: number
  /** Inside a record that may still be opened: its last child element, once that has ended. */
  lastKid?: Open
  /** Where it ended (just after its end tag), once it has, inside a record. */
  end?: number
  /** Opened: the `context` of the records in it (see leadOf). */
  context?: string
}

/** Whether opening `el` splits it, now or further down its only children: some element there has two children or more. */
function splitsBelow (el: Open): boolean {
  let e: Open | undefined = el
  while (e !== undefined && e.kids?.length === 1) e = e.kids[0]
  return (e?.kids?.length ?? 0) >= 2
}

/**
 * Levels opened at a record's end, or below a child of an opened element: each costs an
 * estimate of the element opened, so a deep nest of them is bounded to this many estimates.
 */
const MAX_OPENED_AT_END = 16

/** UTF-8 bytes of a UTF-16 code unit at most: an element under the budget divided by this is under it in bytes. */
const MOST_BYTES_PER_UNIT = 3

/**
 * Elements open at once, at most (libxml2 stops at 256 unless told otherwise). Each chunk's
 * path holds the open elements: 50 MB of tags never closed made chunks of paths 700,000 deep,
 * 1.3 GB of memory and a minute before the parse error at the end.
 */
const MAX_DEPTH = 1000

/** Characters of a first child that is an opened element's `context` (a title), at most. */
const MAX_CONTEXT = 256

/** Characters of a title kept (as markdown's title is a heading, not a page). */
const MAX_TITLE = 1024
/** Elements under the root whose `title` child is the document's. */
const TITLE_PARENTS = new Set(['channel', 'head'])

/** Distinct child names of the root counted for the `record_element` error (a few short ones). */
const MAX_NAMES = 64
const MAX_NAME_LENGTH = 256

/**
 * What the `record_element` error reports, counted while no record has been found: counts and
 * a few short names (kept only to count them distinct, never shown), not the document.
 */
interface Tally {
  elements: number
  children: number
  names: Set<string>
  /** Some child names were not kept (too many or too long): `names.size` is a lower bound. */
  more: boolean
  /** Elements with the same local name but another prefix (or none). */
  prefixed: number
  /** Elements with the same name in another letter case. */
  cased: number
}

const localName = (name: string): string => name.slice(name.indexOf(':') + 1)
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`
const quote = (s: string, max = 64): string => JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s)

export class XmlHandler implements ParserHandler<string> {
  private readonly parser: SaxParser
  private readonly recordElement: string | undefined
  private readonly stack: Open[] = []
  /** Ancestor elements entered (enter emitted) for the current record. */
  private readonly entered: Open[] = []
  /** Children of opened elements opened in turn (emitChild), outermost first: inside `entered`. */
  private readonly inner: Open[] = []
  /** Text from `bufStart`, plus pieces not yet joined to it. */
  private buf = ''
  private readonly pending: string[] = []
  private bufStart = 0
  /** How much sax has been given. */
  private fed = 0
  private readonly instructionStates: Set<number>
  /** How many `?` end what came so far, not given to sax until what follows them is known (feedEndingInstructions). */
  private marks = 0
  private recStart = 0
  private label = ''
  private records = 0
  /** Depth of the open record element, or -1 outside records. */
  private recordDepth = -1
  /** Where the last record element ended (just after its end tag). */
  private recordEnd = -1
  /**
   * The text from recStart is markup between records, not a record: the end tags (and spaces)
   * after the last record of an element that closed, up to the next record. It goes as a block
   * of its own, so that a record that fits is not pushed over the budget by the tags around it.
   */
  private markup = false
  private total = 0
  private rootName: string | undefined
  private readonly maxTokens: number
  /** The document's title element (see readTitle): its depth while it is read, and its text. */
  private titleDepth = -1
  private titleText: string | undefined
  private readonly tally: Tally = { elements: 0, children: 0, names: new Set(), more: false, prefixed: 0, cased: 0 }

  constructor (private readonly ctx: ParserContext<typeof xmlOptions>, lib: typeof sax) {
    this.maxTokens = ctx.options.max_tokens
    const option = ctx.options.record_element
    this.recordElement = typeof option === 'string' && option !== '' ? option : undefined
    this.instructionStates = instructionStates(lib)
    const p = this.parser = lib.parser(true, { position: true }) as SaxParser
    ;(p as unknown as { bufferCheckPosition: number }).bufferCheckPosition = Number.MAX_SAFE_INTEGER
    p.onopentag = (tag) => { this.open(tag.name) }
    p.onclosetag = () => { this.close() }
    p.onerror = (err) => { this.error(err) }
  }

  private error (err: Error): void {
    const p = this.parser
    const first = (err.message.split('\n')[0] ?? '').replace(/:.*$/s, '').replace(/\.$/, '')
    // an undeclared entity stays literal text (no expansion, nothing fetched)
    if (first === 'Invalid character entity' && !p.entity.startsWith('#') && /^[A-Za-z_:][\w.:-]*$/.test(p.entity)) {
      p.error = null
      return
    }
    const where = `line ${p.line + 1}, column ${p.column + 1}`
    this.ctx.fail('DOCSPLIT_PARSE_ERROR', `invalid XML at ${where}: ${first.charAt(0).toLowerCase()}${first.slice(1)}`)
  }

  private open (name: string): void {
    const p = this.parser
    const start = p.startTagPosition - 1
    const depth = this.stack.length
    const parent = this.stack[depth - 1]
    if (depth >= MAX_DEPTH) this.ctx.fail('DOCSPLIT_LIMIT_EXCEEDED', `XML nested too deep: more than ${MAX_DEPTH} elements open at once at line ${p.line + 1}, column ${p.column + 1}`)
    if (depth === 0) {
      if (this.rootName !== undefined) {
        this.ctx.fail('DOCSPLIT_PARSE_ERROR', `invalid XML at line ${p.line + 1}, column ${p.column + 1}: more than one root element`)
      }
      this.rootName = name
    }
    if (this.recordElement !== undefined && this.records === 0) this.count(name, depth, this.recordElement)
    const el: Open = { name, start, opened: depth === 0 && this.recordElement === undefined }
    this.stack.push(el)
    if (this.titleText === undefined && localName(name) === 'title' && (depth === 1 || (depth === 2 && TITLE_PARENTS.has(localName(parent!.name))))) this.readTitle(depth)
    if (parent === undefined) return
    if (this.recordDepth !== -1) {
      if (this.recordElement !== undefined) return
      // inside a record that may be opened: remember where each element starts in its parent
      el.label = this.childLabel(parent, name)
      ;(parent.kids ??= []).push(el)
      // too long: open the record, then its current child, ... while still too long (the
      // element's own length: not the text before it, which is not part of what is opened).
      // Not a record whose only child is the element starting: opened, it would be the same
      // text under that child's label (`<item>text <b>bold</b> text</item>` as `b[1]`).
      while (this.recordDepth < depth && this.opens(this.stack[this.recordDepth]!, depth) && this.tooLong(this.stack[this.recordDepth]!, start, false)) this.openRecord()
      return
    }
    if (this.recordElement !== undefined ? name !== this.recordElement : parent.opened !== true) return
    // the record before this one ends here (or the markup after it: outside the elements that
    // closed, with this record's); before the first, the header, inside its path
    if (this.markup) {
      this.syncPath(depth)
      this.emitMarkup(start)
    } else {
      if (this.records > 0) this.emitRecord(start)
      this.syncPath(depth)
    }
    if (this.records === 0 && start > 0) this.emitRecord(start, 'header')
    this.recordDepth = depth
    this.label = this.childLabel(parent, name)
    this.records++
  }

  /** Whether opening `record` while an element starts at `depth` splits it, or leads to one deeper that may. */
  private opens (record: Open, depth: number): boolean {
    return (record.kids?.length ?? 0) >= 2 || this.recordDepth + 1 < depth
  }

  /** Counts an element for the `record_element` error, while no record has been found. */
  private count (name: string, depth: number, wanted: string): void {
    const t = this.tally
    t.elements++
    if (depth === 1) {
      t.children++
      if (t.names.size < MAX_NAMES && name.length <= MAX_NAME_LENGTH) t.names.add(name)
      else if (!t.names.has(name)) t.more = true
    }
    if (name === wanted) return
    if (localName(name) === localName(wanted)) t.prefixed++
    else if (name.toLowerCase() === wanted.toLowerCase()) t.cased++
  }

  /** `record_element` names no element (the root aside): say so, with counts that help. */
  private noRecordElement (wanted: string): never {
    const t = this.tally
    const others = t.elements - 1
    let message = `record_element ${quote(wanted)}: no element of the document has this name ` +
      `(names are compared as written: case-sensitive, with their namespace prefix if any); `
    message += t.children === 0
      ? `the root element has no child elements`
      : `the root element has ${plural(t.children, 'child element')} with ${t.more ? 'more than ' : ''}${plural(t.names.size, 'distinct name')}` +
        (others > t.children ? `, ${plural(others, 'element')} under it in all` : '')
    if (t.prefixed > 0) {
      message += `; ${plural(t.prefixed, 'element')} ${t.prefixed === 1 ? 'has' : 'have'} the local name ${quote(localName(wanted))} ` +
        `with a different prefix or none: write the name with the prefix the document uses (the namespace URI is not compared)`
    }
    if (t.cased > 0) message += `; ${plural(t.cased, 'element')} ${t.cased === 1 ? 'has' : 'have'} this name in another letter case`
    message += '. Check the spelling, or leave record_element out to make the children of the root the records'
    return this.ctx.fail('DOCSPLIT_INVALID_OPTION', message)
  }

  /** `item[3]`: the element's 1-based index among the children of that name in `parent`. */
  private childLabel (parent: Open, name: string): string {
    parent.counts ??= new Map()
    const n = (parent.counts.get(name) ?? 0) + 1
    parent.counts.set(name, n)
    return `${name}[${n}]`
  }

  /**
   * The current record is too long: it becomes a container (enter) and its children so far
   * become records (the text before its first child goes with that child); its last child so
   * far becomes the current record.
   */
  private openRecord (): void {
    const el = this.stack[this.recordDepth]!
    const kids = el.kids ?? []
    // Labelled as the record was (`e[1]`), as its siblings are.
    this.ctx.emit({ type: 'enter', kind: 'element', label: this.label, start: el.start })
    this.entered.push(el)
    el.opened = true
    el.context = this.leadOf(el)
    // its start tag (and what comes before its first child) is markup, not part of that child
    if (kids.length > 0 && kids[0]!.start > this.recStart) this.emitMarkup(kids[0]!.start)
    for (let k = 1; k < kids.length; k++) this.emitChild(kids[k - 1]!, kids[k]!.start, 0)
    this.label = kids[kids.length - 1]?.label ?? this.label
    el.kids = undefined
    this.records += kids.length
    this.recordDepth++
  }

  /**
   * A child of an element opened, which ended before it was opened, as the record that runs to
   * `next`; opened in turn when it is over the budget, down its children of one child to one of
   * more (as openAtEnd opens the last), at most MAX_OPENED_AT_END levels below the record:
   * without this a `<section>` of nested sections that ended before its parent was found too
   * long went whole, over the budget.
   */
  private emitChild (child: Open, next: number, levels: number): void {
    const kids = child.kids
    if (child.end === undefined || kids === undefined || !splitsBelow(child) || levels >= MAX_OPENED_AT_END || !this.tooLong(child, child.end, true)) {
      this.label = child.label!
      this.emitRecord(next, undefined, child.end ?? -1)
      return
    }
    this.ctx.emit({ type: 'enter', kind: 'element', label: child.label!, start: child.start })
    child.context = this.leadOf(child)
    this.inner.push(child)
    this.emitMarkup(kids[0]!.start)
    for (let k = 1; k < kids.length; k++) this.emitChild(kids[k - 1]!, kids[k]!.start, levels + 1)
    const last = kids[kids.length - 1]!
    this.emitChild(last, last.end!, levels + 1)
    this.records += kids.length
    // its end tag (and any text after its last child), then what comes before `next`
    this.emitMarkup(child.end)
    this.inner.pop()
    this.ctx.emit({ type: 'exit', end: this.recStart })
    this.emitMarkup(next)
  }

  /**
   * What the records of an opened element are read with: its first child, when that has ended
   * and is a short leaf (RSS's, Atom's, DocBook's `<title>`, TEI's `<head>`, a pom's `<groupId>`),
   * as the source has it. A chunk of an item's description then names the item.
   */
  private leadOf (el: Open): string | undefined {
    const first = el.kids?.[0]
    if (first?.end === undefined || (first.kids?.length ?? 0) > 0 || first.end - first.start > MAX_CONTEXT) return undefined
    return this.textOf(first.start, first.end)
  }

  /** The leads of the opened elements around the current record, outermost first, one a line. */
  private recordContext (): string | undefined {
    let context: string | undefined
    for (const list of [this.entered, this.inner]) {
      for (const e of list) if (e.context !== undefined) context = context === undefined ? e.context : `${context}\n${e.context}`
    }
    return context
  }

  /**
   * The first `title` element of the root, or of an RSS `channel` or XHTML `head` under it, is
   * the document's title (an Atom feed's and an SVG's are the root's): its text is gathered (sax
   * decodes entities and CDATA) until it closes.
   */
  private readTitle (depth: number): void {
    this.titleDepth = depth
    this.titleText = ''
    const p = this.parser
    p.ontext = p.oncdata = (text: string) => { if (this.titleText!.length < MAX_TITLE) this.titleText += text }
  }

  private endTitle (): void {
    const p = this.parser
    p.ontext = p.oncdata = () => {}
    this.titleDepth = -1
    const title = this.titleText!.replace(/\s+/g, ' ').trim()
    if (title !== '') this.ctx.emit({ type: 'info', key: 'title', value: title.slice(0, MAX_TITLE) })
  }

  private close (): void {
    const depth = this.stack.length - 1
    if (depth === this.titleDepth) this.endTitle()
    const el = this.stack.pop()!
    const opening = this.recordElement === undefined
    if (opening && depth > this.recordDepth && this.recordDepth !== -1) {
      el.end = this.parser.position
      this.stack[depth - 1]!.lastKid = el
    }
    if (depth === this.recordDepth) {
      this.recordEnd = opening ? this.openAtEnd(el) : this.parser.position
      this.recordDepth = -1
      // opened at its end: its last child is the record, and the end tags after it are markup
      if (this.recordEnd < this.parser.position) this.endTags(el)
    } else if (this.entered.includes(el)) {
      // an element whose children are records ends: so does its last record, before the end tags
      this.endTags(el)
    }
  }

  /**
   * An element whose children are records has ended: its last record ends, and the markup after
   * it up to the element's end tag goes now, inside the element (but the root's), apart from the
   * spaces before the next record (an item that fit with its `</item>` but not with the
   * indentation after it was cut before its end tag).
   */
  private endTags (el: Open): void {
    this.endRecord()
    if (this.stack.length === 0) return // the root: what follows is all markup
    // the elements opened inside it at its end have ended too, each at its end tag
    const at = this.entered.lastIndexOf(el)
    while (this.entered.length > at) {
      const inner = this.entered.pop()!
      this.emitMarkup(inner === el ? this.parser.position : inner.end ?? this.recStart)
      this.ctx.emit({ type: 'exit', end: this.recStart })
    }
    this.markup = true
  }

  /** The current record ends at recordEnd; what follows, up to the next record, is markup. */
  private endRecord (): void {
    if (!this.markup && this.records > 0 && this.recordEnd > this.recStart) this.emitRecord(this.recordEnd)
    this.markup = true
  }

  /**
   * The record ends: while what is current is too long, it is opened down its last children,
   * through elements of one child, to one of more whose children become records and whose
   * last child becomes current (`<channel>`'s `<items><rdf:Seq><rdf:li/>...`).
   */
  private openAtEnd (record: Open): number {
    const end = this.parser.position
    const depth = this.stack.length
    let current: Open | undefined = record
    /** Where the record current at the end ends: the record, or the last child opened into. */
    let currentEnd = end
    // A level at a time, so that an only child that fits is the record (its parent was over
    // for the text or tags around it).
    for (let opened = 0; current !== undefined && opened < MAX_OPENED_AT_END; opened++) {
      if (!splitsBelow(current) || !this.tooLong(current, currentEnd, true)) break
      this.stack.push(current)
      this.openRecord()
      current = current.lastKid
      currentEnd = current?.end ?? currentEnd
    }
    if (this.stack.length > depth) this.stack.length = depth
    return currentEnd
  }

  /**
   * Whether the element, from its start to `end`, is over the budget by the token estimate (not
   * its length: forty paragraphs of CJK text are twice the budget in half its characters) and
   * the request's tokenizer (ParserContext.confirmOver). No
   * encoding spends more tokens than bytes, so an element of fewer bytes than the budget is not
   * estimated. Before the element ends (`final` false) it is looked at each time its length doubles.
   */
  private tooLong (el: Open, end: number, final: boolean): boolean {
    const length = end - el.start
    if (length * MOST_BYTES_PER_UNIT <= this.maxTokens) return false
    if (!final && length < (el.checkAt ?? 0)) return false
    el.checkAt = length * 2
    const text = this.textOf(el.start, end)
    if (Buffer.byteLength(text, 'utf8') <= this.maxTokens) return false
    const estimated = this.ctx.estimate(text)
    return estimated > this.maxTokens && this.ctx.confirmOver(text, estimated)
  }

  /** The document's text from `start` (not before the current record) to `end` (read already). */
  private textOf (start: number, end: number): string {
    this.joinPending()
    return this.buf.slice(start - this.bufStart, end - this.bufStart)
  }

  /** Joins the pieces written since to the buffer, dropping the text before the current record. */
  private joinPending (): void {
    if (this.pending.length === 0) return
    const drop = this.recStart - this.bufStart
    this.buf = (drop > 0 ? this.buf.slice(drop) : this.buf) + this.pending.join('')
    if (drop > 0) this.bufStart = this.recStart
    this.pending.length = 0
  }

  /** Emits exit/enter so the entered ancestors are stack[0, depth). */
  private syncPath (depth: number): void {
    let same = 0
    while (same < this.entered.length && same < depth && this.entered[same] === this.stack[same]) same++
    while (this.entered.length > same) {
      this.entered.pop()
      this.ctx.emit({ type: 'exit', end: this.recStart })
    }
    for (let i = same; i < depth; i++) {
      const el = this.stack[i]!
      this.entered.push(el)
      this.ctx.emit({ type: 'enter', kind: 'element', label: el.name, start: el.start })
    }
  }

  private emitMarkup (end: number): void {
    this.markup = false
    if (end <= this.recStart) return
    const start = this.recStart
    const text = this.textOf(start, end)
    // Mixed content (a TEI paragraph's text around its inline elements) is cut at sentences.
    this.ctx.emit({ type: 'block', kind: 'markup', start, end, text, cut: MOST_BYTES_PER_UNIT * text.length > this.maxTokens && hasText(text) ? 'prose' : 'lines' })
    this.recStart = end
  }

  /** The record from recStart to `end`, its element ending at `elementEnd` (the text after it is its tail). */
  private emitRecord (end: number, kind?: 'header', elementEnd = this.recordEnd): void {
    const start = this.recStart
    // The pieces are joined only when a record is cut (or estimated).
    const text = this.textOf(start, end)
    if (kind !== undefined) {
      this.ctx.emit({ type: 'record', start, end, text, kind })
      this.recStart = end
      return
    }
    // The spaces before the next record are markup, so that a record that fits alone is not
    // pushed over the budget by them; only for a record that may come near the budget: a
    // block per record costs time.
    let last = text.length
    let tail = false
    if (MOST_BYTES_PER_UNIT * last > this.maxTokens) {
      while (last > 1 && isSpace(text.charCodeAt(last - 1))) last--
      // Mixed content: text after the element, before the next (prose after a TEI `<pb/>`), is
      // no part of it: as the record's tail it was packed whole, and an empty element's
      // record went over the budget, protected, with a page of prose.
      const own = elementEnd - start
      tail = own > 0 && own < last && hasText(text.slice(own, last))
      if (tail) last = own
    }
    const context = this.recordContext()
    this.ctx.emit({ type: 'record', start, end: start + last, text: last === text.length ? text : text.slice(0, last), label: this.label, ...(context !== undefined ? { context } : {}) })
    this.recStart = start + last
    if (tail) {
      this.ctx.emit({ type: 'block', kind: 'text', start: this.recStart, end, text: text.slice(last), cut: 'prose' })
      this.recStart = end
    } else if (last < text.length) {
      this.emitMarkup(end)
    }
  }

  write (piece: string): void {
    if (piece.length === 0) return
    this.pending.push(piece)
    this.total += piece.length
    let text = piece
    if (this.marks > 0) {
      // The run held goes on into this piece: it ends a processing instruction if `>` follows.
      let j = 0
      while (j < piece.length && piece.charCodeAt(j) === 63 /* ? */) j++
      const run = this.marks + j
      if (j === piece.length) {
        this.marks = run
        return
      }
      text = '?'.repeat(run) + piece.slice(j)
    }
    // Read back only as far as this piece's own run of `?`: a run held over many pieces is
    // counted, not copied and read again at each (that was quadratic in the run).
    let kept = text.length
    while (kept > 0 && text.charCodeAt(kept - 1) === 63 /* ? */) kept--
    this.marks = text.length - kept
    this.feedEndingInstructions(kept === text.length ? text : text.slice(0, kept))
    if (this.pending.length === 0 && this.recStart > this.bufStart) {
      this.buf = this.buf.slice(this.recStart - this.bufStart)
      this.bufStart = this.recStart
    }
  }

  private nextBlock (): number {
    return (Math.floor(this.fed / BLOCK) + 1) * BLOCK
  }

  /**
   * Feeds text with each run of `?` before `?>` inside a processing instruction as spaces (see
   * instructionStates). Linear: each `??>` is found once, and the run before it is read back
   * no further than the one before.
   */
  private feedEndingInstructions (text: string): void {
    let at = text.indexOf('??>')
    let from = 0
    while (at !== -1) {
      let run = at
      while (run > from && text.charCodeAt(run - 1) === 63 /* ? */) run--
      this.feed(text.slice(from, run))
      const state = (this.parser as unknown as { state: number }).state
      this.feed(this.instructionStates.has(state) ? ' '.repeat(at + 1 - run) : text.slice(run, at + 1))
      from = at + 1
      at = text.indexOf('??>', from)
    }
    this.feed(from === 0 ? text : text.slice(from))
  }

  /**
   * Feeds sax a piece as it comes (a record goes out as soon as it ends: a slow stream is not
   * held), cut where it crosses a multiple of BLOCK from the document start: buffers are checked
   * there and only there, so at the same places for any piece size.
   */
  private feed (piece: string): void {
    let rest = piece
    while (rest.length > 0) {
      const n = this.nextBlock() - this.fed
      const block = rest.length <= n ? rest : rest.slice(0, n)
      rest = rest.length <= n ? '' : rest.slice(n)
      this.parser.write(block)
      this.fed += block.length
      if (block.length === n) this.checkBuffers()
    }
  }

  /**
   * sax's own buffer check runs at piece ends (so it would depend on piece size) and limits
   * names, attribute values and comments to 64 KiB. It is switched off; text is never used, so
   * it is dropped, and any other token longer than MAX_TOKEN is DOCSPLIT_LIMIT_EXCEEDED.
   */
  private checkBuffers (): void {
    const p = this.parser as unknown as Record<string, unknown>
    p.bufferCheckPosition = Number.MAX_SAFE_INTEGER
    if ((p.textNode as string).length > BLOCK) p.textNode = ''
    if ((p.cdata as string).length > BLOCK) p.cdata = ''
    for (const key of BUFFERS) {
      const v = p[key]
      if (typeof v === 'string' && v.length > MAX_TOKEN) {
        this.ctx.fail('DOCSPLIT_LIMIT_EXCEEDED', `an XML name, attribute value, comment or declaration is longer than ${MAX_TOKEN} characters (line ${this.parser.line + 1})`)
      }
    }
  }

  end (): void {
    this.feed('?'.repeat(this.marks))
    if (this.fed % BLOCK !== 0) this.checkBuffers()
    this.parser.close()
    if (this.rootName === undefined) {
      this.ctx.fail('DOCSPLIT_PARSE_ERROR', `invalid XML at line ${this.parser.line + 1}, column ${this.parser.column + 1}: no root element`)
    }
    if (this.records === 0 && this.recordElement !== undefined && this.recordElement !== this.rootName) this.noRecordElement(this.recordElement)
    if (this.records === 0) this.label = this.rootName
    if (this.markup) this.emitMarkup(this.total)
    else this.emitRecord(this.total)
    while (this.entered.length > 0) {
      this.entered.pop()
      this.ctx.emit({ type: 'exit', end: this.total })
    }
  }
}

/** A handler for one document; sax loads with the first (it costs every other start of docsplit ~14 ms). */
export async function createXmlHandler (ctx: ParserContext<typeof xmlOptions>): Promise<ParserHandler<string>> {
  saxLib ??= (await import('sax')).default
  const h = new XmlHandler(ctx, saxLib)
  return { write: (piece: string) => { h.write(piece) }, end: () => { h.end() } }
}
