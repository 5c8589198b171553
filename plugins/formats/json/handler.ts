/**
 * JSON and JSONL (NDJSON) parsers.
 *
 * JSON: the elements of a top-level array are records (`$[12]`), the members of a top-level
 * object are records (`$.name`), a scalar is one record (`$`). A member of an object whose value
 * is a container longer than the budget is opened (past `max_tokens` by the context's estimate,
 * or past 4 characters per token of it; dense JSON runs 2-3 characters a token): its children
 * become the records (`$.items[3]`), with enter/exit around them, and so on down while objects
 * nest, so an envelope such as `{"data": {"items": [...]}}` streams element by element. An
 * array element that is an object is opened the same way when it is over the budget (its
 * members become the records, `$[3].name`): a collection of large objects (countries, API
 * resources) made chunks of 2-4 times the budget, protected. An element that is an array is
 * never opened.
 *
 * JSONL: one record per non-blank line (`[0]`, `[1]`, ...); blank lines stay with the record
 * before them. Every line is validated as one JSON text.
 *
 * Tiling: a record runs from its first character to the first character of the next record, so
 * a comma and spaces go with the record before them; after a record that may come near the budget
 * they are a block of kind `syntax`, as what opens a container before its first record (`[`,
 * `"data": {"items": [`) and what closes it after its last (`]}`) always is: a record that fits
 * is not pushed over the budget by its separator or its container's brackets. Memory: the
 * current record only.
 */
import type { ParserContext, ParserHandler } from '../../../core/types.js'
import { JsonScanner, MAX_DEPTH, type ScanSink } from './scanner.js'

const OPEN_BRACE = 123
const OPEN_BRACKET = 91

/** UTF-8 bytes of a UTF-16 code unit at most: a text of fewer bytes than the budget is under it (no encoding spends more tokens than bytes). */
const MOST_BYTES_PER_UNIT = 3

/**
 * Where the comma after a value, with the spaces around it, starts (the length if none ends
 * `text`). A value never ends with white space, so trimEnd stops at its last character.
 */
function separatorStart (text: string): number {
  const trimmed = text.trimEnd()
  return trimmed.endsWith(',') ? trimmed.slice(0, -1).trimEnd().length : text.length
}

/** `$.name` for identifiers, `$["a key"]` otherwise. */
function memberLabel (path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

/** Characters per token used to decide when a member is too long to stay one record. */
const CHARS_PER_TOKEN = 4

interface Frame {
  /** Depth of the container's own value (0 for the root). */
  depth: number
  array: boolean
  path: string
  /** Children seen so far. */
  count: number
}

/** A container inside the current record that may still be opened. */
interface Spine {
  depth: number
  array: boolean
  path: string
  /** An array element: opened by its estimate alone (elements are the records a reader wants whole). */
  element?: boolean
  /**
   * Where its children start, and their labels; a member's label is made from its key (which
   * ends at `keyEnd`) only when it is needed, as most records are never opened.
   */
  kids: Array<{ start: number, label: string, keyEnd?: number }>
}

/**
 * Base for both parsers: the text from the current record start (flattened only when a record
 * or key is sliced, so tiny pieces cost no copying), and emitting.
 */
abstract class RecordBuffer {
  /** Text from `bufStart`, plus pieces not yet joined to it. */
  private buf = ''
  private readonly pending: string[] = []
  private bufStart = 0
  protected recStart = 0
  /** The current record's label; none while the root container has no child (`[]`: path `$` alone). */
  protected label: string | undefined = '$'
  protected total = 0
  protected scanner!: JsonScanner

  constructor (protected readonly ctx: ParserContext) {}

  protected slice (start: number, end: number): string {
    if (this.pending.length > 0) {
      // drop what is before the current record while joining
      const drop = this.recStart - this.bufStart
      this.buf = (drop > 0 ? this.buf.slice(drop) : this.buf) + this.pending.join('')
      if (drop > 0) this.bufStart = this.recStart
      this.pending.length = 0
    }
    return this.buf.slice(start - this.bufStart, end - this.bufStart)
  }

  protected record (end: number, label = this.label): void {
    this.emitRecord(this.recStart, end, this.slice(this.recStart, end), label)
  }

  protected emitRecord (start: number, end: number, text: string, label: string | undefined): void {
    this.ctx.emit({ type: 'record', start, end, text, label })
    this.recStart = end
  }

  error (reason: string, _offset: number, line: number, column: number, limit: boolean): never {
    return this.ctx.fail(limit ? 'DOCSPLIT_LIMIT_EXCEEDED' : 'DOCSPLIT_PARSE_ERROR',
      limit ? `JSON nesting deeper than ${MAX_DEPTH} levels at line ${line}, column ${column}`
        : `invalid JSON at line ${line}, column ${column}: ${reason}`)
  }

  write (piece: string): void {
    if (piece.length === 0) return
    const base = this.total
    this.pending.push(piece)
    this.total += piece.length
    this.scanner.scan(piece, 0, piece.length, base)
    if (this.pending.length === 0 && this.recStart > this.bufStart) {
      // a record was emitted: forget the text before the current one
      this.buf = this.buf.slice(this.recStart - this.bufStart)
      this.bufStart = this.recStart
    }
  }
}

/**
 * Levels of two children or more opened at a record's end: each costs a count of its last
 * child, so a deep nest of them is bounded to this many counts of the record.
 */
const MAX_OPENED_AT_END = 16

class JsonHandler extends RecordBuffer implements ScanSink, ParserHandler<string> {
  watch = 0
  /** Opened containers: their children are records. */
  private readonly frames: Frame[] = []
  /**
   * Containers inside the current record that may still be opened: the record's own value (when
   * the record is an object member), then its current member's value (an object's) or its
   * current element (an array's, when that is an object), and so on. Each holds where its
   * children start, until the record is opened or ends.
   */
  private spine: Spine[] = []
  /**
   * Containers of the spine that ended inside the record, innermost first, each the value of the
   * last child of the one after it (a child that starts empties it): at the record's end, if too
   * long, the record is opened down this chain (`{"data": {"items": [...]}}`, `[{"id": 1, "payload":
   * {"rows": [...]}}]`).
   */
  private closedTail: Spine[] = []
  private pendingExits = 0
  /**
   * The text from recStart is syntax, not a record: the brackets and spaces after the last child
   * of a container that closed, up to the next record. It goes as a block of its own, so that
   * a record that fits is not pushed over the budget by the brackets around it.
   */
  private syntax = false
  private readonly maxTokens: number
  private readonly threshold: number
  /** The estimate of the current record's text up to `estimatedTo` (from `estimatedFrom`, its start). */
  private estimated = 0
  private estimatedFrom = -1
  private estimatedTo = 0
  /** The length of the record when it was last counted whole. */
  private countedLength = 0

  constructor (ctx: ParserContext) {
    super(ctx)
    this.scanner = new JsonScanner(this)
    this.maxTokens = ctx.options.max_tokens
    this.threshold = this.maxTokens * CHARS_PER_TOKEN
  }

  /**
   * Whether the current record, up to `end`, is over the budget. Estimated piece by piece as it
   * grows (each character once), only past max_tokens characters. The pieces' sum errs high
   * (approx counts a whole at less than its pieces), so a sum over the budget is confirmed by a
   * count of the whole: at the member's end, or while it streams once it has grown by a quarter
   * since its last count (at most 5 counts of its length in all), so that it opens into its
   * children while they stream rather than at its end (see `closedTail` for what is left then).
   */
  private overBudget (end: number, ended: boolean): boolean {
    const length = end - this.recStart
    if (length > this.threshold && this.spine[0]?.element !== true) return true
    if (length <= this.maxTokens) return false
    if (this.estimatedFrom !== this.recStart) {
      this.estimatedFrom = this.estimatedTo = this.recStart
      this.estimated = this.countedLength = 0
    }
    if (end > this.estimatedTo) {
      this.estimated += this.ctx.estimate(this.slice(this.estimatedTo, end))
      this.estimatedTo = end
    }
    if (this.estimated <= this.maxTokens) return false
    if (!ended && 4 * length < 5 * this.countedLength) return false
    const text = this.slice(this.recStart, end)
    this.estimated = this.ctx.estimate(text)
    this.countedLength = length
    return this.estimated > this.maxTokens && this.ctx.confirmOver(text, this.estimated)
  }

  private get top (): Frame {
    return this.frames[this.frames.length - 1]!
  }

  private setWatch (): void {
    const last = this.spine[this.spine.length - 1]
    this.watch = last !== undefined ? last.depth + 1 : this.frames.length > 0 ? this.top.depth + 1 : 0
  }

  /** A child of the innermost opened container starts at `offset`. */
  private childStart (frame: Frame, offset: number): void {
    // what runs up to it: the record before, or (first child) the container's opening
    if (frame.count > 0 || this.pendingExits > 0) this.next(offset)
    else if (offset > this.recStart) this.emitSyntax(offset)
    this.flushExits()
    this.label = frame.array ? `${frame.path}[${frame.count}]` : frame.path
    frame.count++
    if (this.spine.length > 0) {
      this.spine = []
      if (this.closedTail.length > 0) this.closedTail = []
      this.setWatch()
    }
  }

  private flushExits (): void {
    for (; this.pendingExits > 0; this.pendingExits--) this.ctx.emit({ type: 'exit', end: this.recStart })
  }

  /**
   * Ends what runs from recStart at `end`: the current record, or the syntax after the
   * containers that closed (emitted after their exits: it is outside them).
   */
  private next (end: number): void {
    if (!this.syntax) return this.record(end)
    this.syntax = false
    this.flushExits()
    if (end > this.recStart) this.emitSyntax(end)
  }

  /**
   * Ends the current record at `end`, the next one's start: the comma and spaces before it are
   * syntax, so that a record that fits alone is not pushed over the budget by its separator.
   * Only for a record that may come near the budget: a block per record costs 60% more on an
   * array of small numbers.
   */
  protected override record (end: number, label = this.label): void {
    const start = this.recStart
    if (MOST_BYTES_PER_UNIT * (end - start) <= this.maxTokens) return super.record(end, label)
    const text = this.slice(start, end)
    const last = separatorStart(text)
    if (last === text.length) return this.emitRecord(start, end, text, label)
    this.emitRecord(start, start + last, text.slice(0, last), label)
    this.emitSyntax(end)
  }

  private emitSyntax (end: number): void {
    const start = this.recStart
    this.ctx.emit({ type: 'block', kind: 'syntax', start, end, text: this.slice(start, end), cut: 'lines' })
    this.recStart = end
  }

  /**
   * `closers` containers close, the last at `end` (just after its bracket), with the current
   * record as their last child: it ends at its last character (only spaces come between a value
   * and the bracket that closes its container), and the brackets and spaces are syntax.
   */
  private closeRecord (end: number, closers: number): void {
    if (this.syntax) return
    const text = this.slice(this.recStart, end)
    let last = text.length
    for (let k = 0; k < closers; k++) last = Math.max(0, text.slice(0, last).trimEnd().length - 1)
    last = text.slice(0, last).trimEnd().length
    if (last > 0) this.record(this.recStart + last)
    this.syntax = true
  }

  /**
   * Opens the current record's value: its children so far become records (the text before the
   * first is syntax) and the last one becomes the current record.
   */
  private openRecord (closed: boolean): void {
    const c = this.spine.shift()!
    this.ctx.emit({ type: 'enter', kind: c.array ? 'array' : 'object', label: c.path, start: this.recStart })
    const n = c.kids.length
    // its opening (`"data": {"items": [`) goes with its first child as syntax, not as part of it
    if (n > 0 && c.kids[0]!.start > this.recStart) this.emitSyntax(c.kids[0]!.start)
    for (let k = 1; k < n; k++) this.record(c.kids[k]!.start, this.kidLabel(c, k - 1))
    this.label = n > 0 ? this.kidLabel(c, n - 1) : c.path
    if (closed) this.pendingExits++
    else this.frames.push({ depth: c.depth, array: c.array, path: c.path, count: n })
    this.setWatch()
  }

  /** The label of kid `k` of `c`: `$.items[3]`, or made now from its key (`$.data.name`). */
  private kidLabel (c: Spine, k: number): string {
    const kid = c.kids[k]!
    if (kid.keyEnd !== undefined) {
      kid.label = memberLabel(c.path, JSON.parse(this.slice(kid.start, kid.keyEnd)) as string)
      kid.keyEnd = undefined
    }
    return kid.label
  }

  /** A child of the deepest spine container starts: remember it, open the record while too long. */
  private kidStart (last: Spine, offset: number, label: string): void {
    last.kids.push({ start: offset, label })
    if (this.closedTail.length > 0) this.closedTail = []
    while (this.spine.length > 0 && this.overBudget(offset, false)) this.openRecord(false)
  }

  valueStart (depth: number, offset: number, code: number): void {
    const container = code === OPEN_BRACE || code === OPEN_BRACKET
    if (depth === 0) {
      if (container) {
        this.ctx.emit({ type: 'enter', kind: code === OPEN_BRACKET ? 'array' : 'object', label: '$', start: 0 })
        this.frames.push({ depth: 0, array: code === OPEN_BRACKET, path: '$', count: 0 })
        this.label = undefined
      }
      this.setWatch()
      return
    }
    const top = this.top
    if (depth === top.depth + 1) {
      if (top.array) {
        this.childStart(top, offset)
        // an element that is an object: it may be opened into its members if it grows too long
        if (code === OPEN_BRACE) {
          this.spine = [{ depth, array: false, path: this.label!, kids: [], element: true }]
          this.setWatch()
        }
      } else if (container) {
        // a member's value that is a container: it may be opened if the member grows too long
        this.spine = [{ depth, array: code === OPEN_BRACKET, path: this.label ?? top.path, kids: [] }]
        this.setWatch()
      }
      return
    }
    const last = this.spine[this.spine.length - 1]
    if (last === undefined || depth !== last.depth + 1) return
    if (last.array) {
      this.kidStart(last, offset, `${last.path}[${last.kids.length}]`)
      // an element that is an object: its members are followed too, so that it can be opened
      // if it ends too long (the array may have become a frame, the element the record)
      if (code === OPEN_BRACE) {
        const path = this.spine.length > 0 ? this.kidLabel(last, last.kids.length - 1) : this.label!
        this.spine.push({ depth, array: false, path, kids: [], element: true })
        this.setWatch()
      }
    } else if (container) {
      this.spine.push({ depth, array: code === OPEN_BRACKET, path: this.kidLabel(last, last.kids.length - 1), kids: [] })
      this.setWatch()
    }
  }

  /**
   * Opens the current record, whose value is `root` (or the outermost container that ended), down
   * the containers that ended (each the value of the last child of the one before) while it is
   * too long: through containers of one child to one of more, whose last child becomes current,
   * and again. Then the record has no containers left to open.
   */
  private openEnded (root: Spine | undefined, end: number): void {
    const exits = this.pendingExits
    if (end - this.recStart > this.maxTokens) {
      const chain = this.closedTail.reverse()
      if (root !== undefined) chain.unshift(root)
      for (let at = 0, opened = 0; opened < MAX_OPENED_AT_END; opened++) {
        const splits = chain.findIndex((c, k) => k >= at && c.kids.length >= 2)
        if (splits === -1 || !this.overBudget(end, true)) break
        this.spine = chain.slice(at, splits + 1)
        while (this.spine.length > 0) this.openRecord(true)
        at = splits + 1
      }
    }
    // what was opened has closed: its last child ends before the brackets
    if (this.pendingExits > exits) this.closeRecord(end, this.pendingExits - exits)
    this.spine = []
    if (this.closedTail.length > 0) this.closedTail = []
  }

  keyStart (depth: number, offset: number): void {
    const top = this.top
    if (depth === top.depth + 1) {
      this.childStart(top, offset)
      return
    }
    const last = this.spine[this.spine.length - 1]
    if (last !== undefined && !last.array && depth === last.depth + 1) this.kidStart(last, offset, last.path)
  }

  keyEnd (depth: number, start: number, end: number): void {
    const top = this.top
    const key = (): string => JSON.parse(this.slice(start, end)) as string
    if (depth === top.depth + 1) {
      this.label = memberLabel(top.path, key())
      return
    }
    const last = this.spine[this.spine.length - 1]
    if (last !== undefined && !last.array && depth === last.depth + 1) {
      const kid = last.kids[last.kids.length - 1]
      if (kid !== undefined && kid.start === start) kid.keyEnd = end
    }
  }

  containerEnd (depth: number, end: number): void {
    const last = this.spine[this.spine.length - 1]
    if (last !== undefined && depth === last.depth) {
      if (this.spine.length === 1) {
        // the record's own value ends: open it down the containers that ended, if too long
        this.openEnded(last, end)
      } else {
        this.spine.pop()
        this.closedTail.push(last)
        // a container inside the record ends: if the record is too long now, open it down to
        // this container, and this one too (an envelope's first element, before the next starts).
        // Counted now, not only once it has grown by a quarter: when the next member starts, the
        // one that ended here could no longer be opened (a country's `name` went whole, protected).
        while (this.spine.length > 0 && this.overBudget(end, true)) this.openRecord(false)
        if (this.spine.length === 0) this.openEnded(undefined, end)
      }
      this.setWatch()
      return
    }
    const top = this.top
    if (this.frames.length > 0 && depth === top.depth) {
      this.frames.pop()
      if (top.count > 0) this.closeRecord(end, 1)
      this.pendingExits++
      this.setWatch()
    }
  }

  end (): void {
    this.scanner.finish(this.total)
    if (this.total > 0) this.next(this.total)
    this.flushExits()
  }
}

class JsonlHandler extends RecordBuffer implements ScanSink, ParserHandler<string> {
  watch = 0
  private count = 0

  constructor (ctx: ParserContext) {
    super(ctx)
    this.scanner = new JsonScanner(this, true)
  }

  valueStart (depth: number): void {
    if (depth !== 0) return
    const lineStart = this.scanner.lineStart
    if (this.count > 0) this.record(lineStart)
    this.label = `[${this.count++}]`
  }

  keyStart (): void {}
  keyEnd (): void {}
  containerEnd (): void {}

  end (): void {
    this.scanner.finish(this.total)
    if (this.total === 0) return
    if (this.count === 0) {
      this.ctx.emit({ type: 'block', kind: 'whitespace', start: 0, end: this.total, text: this.slice(0, this.total) })
      return
    }
    this.record(this.total)
  }
}

/** The handler as plain functions, so callers may pass `write` around unbound. */
function handler (h: ParserHandler<string>): ParserHandler<string> {
  return { write: (piece) => { h.write(piece) }, end: () => { h.end() } }
}

export const createJsonHandler = (ctx: ParserContext): ParserHandler<string> => handler(new JsonHandler(ctx))
export const createJsonlHandler = (ctx: ParserContext): ParserHandler<string> => handler(new JsonlHandler(ctx))
