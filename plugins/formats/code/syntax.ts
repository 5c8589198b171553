/**
 * Syntax-aware events from a tree-sitter tree.
 *
 * Each declaration with a non-empty body (class, function, impl, namespace, ...) is a container:
 *   enter {kind, label}
 *     comment/decorator blocks right above it (attachNext)
 *     signature block: from the declaration's start to its first member (attachNext)
 *     members: nested declarations (containers) and statements (blocks)
 *     close block: `}` / `end` and what follows up to the next sibling
 *   exit
 * A compound statement too big to fit (`if`, a loop, a switch, one of its cases, or one held by
 * a statement: `let y = match x {...}`, `obj.f = function () {...}`, `xs.map(|x| {...})`) is a
 * container the same way, its header as the signature. Everything else at a level is a block;
 * comments and decorators before something are blocks with attachNext. Spans are computed from
 * sibling start offsets only (each item runs to the next item's start: its line's start when it
 * is first on its line), so the blocks tile the text whatever the tree looks like, ERROR nodes
 * included. The walk keeps its own stack:
 * nesting depth never grows the JS stack.
 */
import type { Node } from 'web-tree-sitter'
import type { DocEvent } from '../../../core/events.js'
import type { Grammar } from './grammars.js'
import { DECORATIONS, TYPE_KINDS, type LanguageSpec } from './languages.js'

/** A named child of a list (top level or a body), with its node when the walk needs it. */
interface Child {
  type: string
  start: number
  end: number
  /** Where its span starts: `start`, or its line's start when only indentation is before it (setHeads). */
  head: number
  node: Node | null
  /** A statement with a body of its own (`if`, `for`, `try`, an `else` clause, a switch or one of its cases), too big to fit. */
  compound: boolean
  /** An expression statement that is only a string (a docstring, where the language has them). */
  doc: boolean
  /** A case with nothing after its label (`case A:` falling through to `case B:`): attached to the next. */
  bare: boolean
  /**
   * Where the `else` right before it starts, when no clause node holds them both: a body after
   * `else` is the else clause (Java's, Go's and C#'s `} else {`), an `if` after it an else-if
   * (Kotlin's, Java's `} else if`). Else -1.
   */
  elseAt: number
}

interface Decl {
  kind: string
  outer: Node
  inner: Node
  /** Node whose named children are the members; null: not a container. */
  body: Node | null
  /** The body is the declaration itself (skip its `name`/`condition` children). */
  self: boolean
  /** A compound statement: members are the statements of its bodies and its clauses. */
  compound: boolean
  /**
   * Where the body starts (a declaration's body, a compound's first body or case, the end of a
   * case's label): the label runs up to it. -1 while unknown: the label ends with its line.
   */
  open: number
  /** Where the label starts when no node starts there (an `else` before its body); else -1. */
  from: number
  /** Where a statement's label (`outer:`, perhaps on the line before) starts: the label reads from there; else -1. */
  labelAt: number
}

interface Item {
  /** Where the item's own text starts (its first attached comment, or its node). */
  start: number
  /** Start of the declaration node (after attached comments). */
  nodeStart: number
  kind: string
  attachNext: boolean
  decl?: Decl
  attached?: Child[]
}

interface Frame {
  items: Item[]
  index: number
  /** Span of the list: the first item starts at `lo`, the last ends at `hi`. */
  lo: number
  hi: number
  /** Kind of the enclosing container ('' at top level). */
  kind: string
  /** The enclosing container's close block [hi, end) and exit offset; -1 at top level. */
  end: number
}

const SKIP_FIELDS = new Set(['name', 'condition'])
/** Holders looked through from a statement (`await Promise.all(xs.map(async (x) => {...}))` takes 6). */
const HOLD_DEPTH = 8
const LABEL_MAX = 160
const LABEL_SCAN = 4 * LABEL_MAX

function isComment (type: string): boolean {
  return type.includes('comment')
}

/**
 * The first line break in text[from, to), or `to`. Read only there: indexOf would read on to the
 * next break, which in minified code is megabytes away, once per node (quadratic).
 */
function newlineIn (text: string, from: number, to: number): number {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === 10) return i
  return to
}

function hasNewline (text: string, from: number, to: number): boolean {
  return newlineIn(text, from, to) < to
}

/** Where the line holding `pos` starts, not before `floor` (read back only to there). */
function lineStartAfter (text: string, floor: number, pos: number): number {
  for (let i = pos - 1; i >= floor; i--) if (text.charCodeAt(i) === 10) return i + 1
  return floor
}

/**
 * Whether comment `b` goes on the comment run of `a`: both comments, no blank line between. A
 * grammar makes each `#` or `//` line a node of its own; as blocks of their own, a run of them
 * that fits was cut between its lines, its last line a chunk alone.
 */
function continuesComment (text: string, a: Child, b: Child): boolean {
  return isComment(a.type) && isComment(b.type) && !blankBetween(text, a.end, b.start)
}

/** A blank line between two nodes (`from` is the end of the first, which may include its newline). */
function blankBetween (text: string, from: number, to: number): boolean {
  let newlines = from > 0 && text.charCodeAt(from - 1) === 10 ? 1 : 0
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i)
    if (c === 10) {
      if (++newlines >= 2) return true
    } else if (c !== 32 && c !== 9 && c !== 13) {
      newlines = 0
    }
  }
  return false
}

/** The first line break in text[from, to) outside brackets, or `to`. */
function headerEnd (text: string, from: number, to: number): number {
  let depth = 0
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i)
    if (c === 40 || c === 91 || c === 123) depth++ // ( [ {
    else if ((c === 41 || c === 93 || c === 125) && depth > 0) depth--
    else if (c === 10 && depth === 0) return i
  }
  return to
}

/** Words that may stand between a closing `}` and the clause it introduces (see lineHead). */
const CLAUSE_WORDS = ['else', 'while']

/** Back from `pos` over spaces and tabs. */
function skipBack (text: string, pos: number): number {
  let i = pos
  while (i > 0) {
    const c = text.charCodeAt(i - 1)
    if (c !== 32 && c !== 9) break
    i--
  }
  return i
}

function skipSpace (text: string, from: number, to: number): number {
  let i = from
  while (i < to) {
    const c = text.charCodeAt(i)
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 12) break
    i++
  }
  return i
}

export class SyntaxWalker {
  private readonly decls: Map<string, string | ((n: Node) => string)>
  private readonly wrappers: Map<string, (n: Node) => Node | null>
  private readonly bodies: Set<string>
  private readonly unwrap: Set<string>
  private readonly selfBodies: Set<string>
  private readonly cases: Map<string, Set<string>>
  private readonly holders: Map<string, (n: Node) => Node | null>
  private readonly params: Set<string>
  private readonly labels: Set<string>
  private readonly docstrings: boolean
  private readonly trailers: Set<string>

  /**
   * `fitsBytes`: a container whose UTF-8 size is at most this always fits the budget (a token
   * covers at least one byte), so the packer never opens it: it is emitted as one block, and its
   * members are not walked. 0 walks everything.
   */
  constructor (private readonly spec: LanguageSpec, private readonly text: string, private readonly emit: (e: DocEvent) => void, private readonly fitsBytes = 0) {
    this.decls = new Map(Object.entries(spec.declarations))
    this.wrappers = new Map(Object.entries(spec.wrappers ?? {}))
    this.bodies = new Set(spec.bodies)
    this.unwrap = new Set(spec.unwrap ?? [])
    this.selfBodies = new Set(spec.selfBodies ?? [])
    this.cases = new Map(Object.entries({ ...spec.cases, ...spec.clauses }).map(([k, v]) => [k, new Set(v)]))
    this.holders = new Map(Object.entries(spec.holders ?? {}))
    this.params = new Set(spec.params ?? [])
    this.labels = new Set(spec.labels ?? [])
    this.docstrings = spec.docstrings === true
    this.trailers = new Set(spec.trailers ?? [])
  }

  /** Whether text[start, end) certainly fits the budget (see the constructor). */
  private fits (start: number, end: number): boolean {
    const n = end - start
    const max = this.fitsBytes
    if (n > max) return false
    return n * 3 <= max || Buffer.byteLength(this.text.slice(start, end), 'utf8') <= max
  }

  /**
   * Whether a node at [start, end) certainly fits once it is an item: its span also takes in the
   * indentation before it and the `;`, `,` and white space after it.
   */
  private spanFits (start: number, end: number): boolean {
    const text = this.text
    let to = end
    for (; to < text.length; to++) {
      const c = text.charCodeAt(to)
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13 && c !== 59 && c !== 44) break
    }
    return this.fits(skipBack(text, start), to)
  }

  /** Named, non-empty children of `parent`, in order (`self`: skip `name`/`condition` fields). */
  private children (parent: Node, self: boolean): Child[] {
    for (;;) {
      const out = this.namedChildren(parent, self)
      const only = out.length === 1 ? out[0] : undefined
      if (only === undefined || only.node === null || !this.unwrap.has(only.type)) return out
      parent = only.node // look through a wrapper such as Go's `statement_list`
      self = false
    }
  }

  private namedChildren (parent: Node, self: boolean): Child[] {
    const out: Child[] = []
    const c = parent.walk()
    let elseAt = -1
    let labelAt = -1
    let sawBody = false
    try {
      if (c.gotoFirstChild()) {
        do {
          // An `else` before a body, with no clause node around them: the body is the clause
          // (Swift names the keyword, which then is no child: it heads the clause).
          if (c.nodeType === 'else' && !this.cases.has('else')) {
            elseAt = c.startIndex
            continue
          }
          const after = elseAt
          if (c.nodeType !== '{') elseAt = -1
          if (!c.nodeIsNamed || this.params.has(c.nodeType)) continue
          // A label standing before its statement (Swift's `outer: for`): the statement starts there.
          if (this.labels.has(c.nodeType) && !this.holders.has(c.nodeType)) {
            if (labelAt < 0) labelAt = c.startIndex
            continue
          }
          const start = labelAt >= 0 ? labelAt : c.startIndex
          labelAt = -1
          const end = c.endIndex
          if (start === end) continue
          if (self && SKIP_FIELDS.has(c.currentFieldName ?? '')) continue
          // A do-while's condition after its body goes with the body's closing line (`} while (x)`).
          if (sawBody && c.currentFieldName === 'condition') continue
          const type = c.nodeType
          sawBody ||= this.bodies.has(type)
          const big = !this.spanFits(start, end)
          // A case, or a body standing as a statement (a bare `{ ... }`, Bash's `( ... )`).
          let compound = big && (this.cases.has(type) || this.bodies.has(type))
          let doc = false
          const docCandidate = this.docstrings && type === 'expression_statement'
          if ((docCandidate || big) && c.gotoFirstChild()) {
            let named = 0
            do {
              const t = c.nodeType
              if (this.bodies.has(t) || this.cases.has(t)) compound = true
              if (c.nodeIsNamed) doc = ++named === 1 && (t === 'string' || t === 'concatenated_string')
            } while (c.gotoNextSibling())
            c.gotoParent()
            doc &&= docCandidate && named === 1
          }
          const ends = this.cases.get(type)
          let bare = false
          if (ends !== undefined && ends.size > 0 && c.gotoFirstChild()) {
            do bare = ends.has(c.nodeType)
            while (c.gotoNextSibling())
            c.gotoParent()
          }
          const wanted = compound || this.bodies.has(type) || this.decls.has(type) || this.wrappers.has(type) || this.unwrap.has(type) || (big && this.holders.has(type))
          out.push({ type, start, end, head: start, node: wanted ? c.currentNode : null, compound, doc, bare, elseAt: after })
        } while (c.gotoNextSibling())
      }
    } finally {
      c.delete()
    }
    return out
  }

  /** The members of a container. */
  private members (d: Decl): Child[] {
    if (d.body === null) return []
    if (!d.compound) {
      const members = this.children(d.body, d.self)
      if (d.self || members.length === 0) return members
      // Comments on their own lines between the signature and the body (Ruby's `class A` then
      // `# doc` then the body) belong to the first member, not to the signature.
      const before: Child[] = []
      let prevEnd = -1
      for (const ch of this.namedChildren(d.inner, false)) {
        if (ch.start >= d.body.startIndex) break
        if (prevEnd >= 0 && isComment(ch.type) && hasNewline(this.text, prevEnd, ch.start)) before.push(ch)
        else before.length = 0
        prevEnd = ch.end
      }
      return before.length > 0 ? [...before, ...members] : members
    }
    // An else clause made of a body (`} else {` in Java): its statements.
    if (this.bodies.has(d.body.type)) return this.children(d.body, false)
    // A compound statement: the statements of each body, and the clauses after the first body;
    // a switch: its cases; a case: what follows its label (see LanguageSpec.cases).
    const out: Child[] = []
    // Its own children, never looked through: a do-while's only one is its body.
    const list = this.namedChildren(d.body, false)
    const [labelEnd, membersFrom] = this.caseLabelEnd(d.body)
    d.open = labelEnd
    let on = false
    for (const ch of list) {
      if (labelEnd >= 0) {
        if (ch.start < membersFrom) continue
        if (ch.node !== null && (this.bodies.has(ch.type) || this.unwrap.has(ch.type))) for (const m of this.children(ch.node, false)) out.push(m)
        else out.push(ch)
        continue
      }
      const body = this.bodies.has(ch.type)
      if (on && body && ch.elseAt >= 0) {
        // A body after the first one that follows `else`: one member, the clause, from `else` on.
        out.push({ ...ch, start: ch.elseAt, head: ch.elseAt, compound: !this.spanFits(ch.elseAt, ch.end) })
        continue
      }
      if (!on && (body || this.cases.has(ch.type))) {
        on = true
        // A closure with parameters (`val f = { x: Int ->`): its label reads on past them.
        d.open = body && this.params.has(ch.node?.firstNamedChild?.type ?? '') ? -1 : ch.start
      }
      if (body) {
        if (ch.node !== null) for (const m of this.children(ch.node, false)) out.push(m)
      } else if (on) {
        out.push(ch)
      }
    }
    return out
  }

  /**
   * Where the label of a case ends (after its last `:`, `=>`, ...) and where what it holds starts
   * (after a node listed with its tokens, such as Zig's payload `|v|`, which is no part of the
   * label); -1 for both: not a case, or none found.
   */
  private caseLabelEnd (n: Node): [label: number, members: number] {
    const ends = this.cases.get(n.type)
    if (ends === undefined || ends.size === 0) return [-1, -1]
    let label = -1
    let members = -1
    const c = n.walk()
    try {
      if (c.gotoFirstChild()) {
        do {
          if (!ends.has(c.nodeType)) continue
          members = c.endIndex
          if (!c.nodeIsNamed) label = members
        } while (c.gotoNextSibling())
      }
    } finally {
      c.delete()
    }
    return label < 0 ? [members, members] : [label, members]
  }

  /** Whether `n` is a compound statement: a body or a case among its children, or a case or a body itself. */
  private isCompound (n: Node): boolean {
    if (this.cases.has(n.type) || this.bodies.has(n.type)) return true
    const c = n.walk()
    try {
      if (c.gotoFirstChild()) {
        do {
          if (this.bodies.has(c.nodeType) || this.cases.has(c.nodeType)) return true
        } while (c.gotoNextSibling())
      }
    } finally {
      c.delete()
    }
    return false
  }

  /**
   * A statement that is not a declaration, as a compound statement (too big to fit): itself, or
   * the switch, match, `if` or loop that it holds (`let y = match x {...};`); else null.
   */
  private compound (child: Child): Decl | null {
    const outer = child.node
    if (outer === null) return null
    if (child.compound) {
      // After `else`, the label is read from `else`: an else clause made of a body ends it there.
      // After a label that is its sibling (Swift's `outer: for`), from the label.
      const clause = child.elseAt >= 0 && this.bodies.has(child.type)
      const labelAt = child.start < outer.startIndex ? child.start : -1
      return { kind: 'statement', outer, inner: outer, body: outer, self: false, compound: true, open: clause ? outer.startIndex : -1, from: child.elseAt, labelAt }
    }
    if (!this.holders.has(child.type) || this.spanFits(child.start, child.end)) return null
    let n: Node | null = outer
    // A labelled statement's label is read from its label (`outer:` may stand on the line before).
    let labelAt = -1
    for (let hops = 0; hops < HOLD_DEPTH && n !== null; hops++) {
      const hold = this.holders.get(n.type)
      if (hold === undefined) break
      if (labelAt < 0 && this.labels.has(n.type)) labelAt = n.startIndex
      n = hold(n)
      if (n !== null && this.isCompound(n)) return { kind: 'statement', outer, inner: n, body: n, self: false, compound: true, open: -1, from: -1, labelAt }
      // A container that is its own body, held (Zig's generic type: `return struct { ... };`).
      const k = n === null || !this.selfBodies.has(n.type) ? undefined : this.decls.get(n.type)
      if (k !== undefined) return { kind: typeof k === 'function' ? k(n!) : k, outer, inner: n!, body: n!, self: true, compound: false, open: -1, from: -1, labelAt }
    }
    return null
  }

  private describe (child: Child): Decl | null {
    let inner = child.node
    if (inner === null) return null
    const outer = inner
    for (let hops = 0; hops < 4 && inner !== null; hops++) {
      const wrap = this.wrappers.get(inner.type)
      if (wrap === undefined) break
      const next: Node | null = wrap(inner)
      if (next === null) return this.compound(child)
      inner = next
    }
    if (inner === null) return null
    const k = this.decls.get(inner.type)
    // A wrapper around no declaration may still be or hold a compound (`export default {...}`).
    if (k === undefined) return this.compound(child)
    const kind = typeof k === 'function' ? k(inner) : k
    if (this.selfBodies.has(inner.type)) return { kind, outer, inner, body: inner, self: true, compound: false, open: -1, from: -1, labelAt: -1 }
    let body = inner.childForFieldName('body')
    if (body !== null && !this.bodies.has(body.type)) body = null
    if (body === null) {
      for (let i = 0; i < inner.namedChildCount; i++) {
        const c = inner.namedChild(i)
        if (c !== null && this.bodies.has(c.type)) {
          body = c
          break
        }
      }
    }
    // A wrapper around something that is not a container (`struct s x;`) is a plain statement.
    if (body === null && outer !== inner) return null
    return { kind, outer, inner, body, self: false, compound: false, open: body === null ? -1 : body.startIndex, from: -1, labelAt: -1 }
  }

  /** Groups a list of children into items (see the file comment). */
  private items (list: Child[], parentKind: string): Item[] {
    const text = this.text
    const items: Item[] = []
    let pending: Child[] = []
    let prevEnd = -1
    const flush = (attachNext: boolean): void => {
      for (let i = 0; i < pending.length; i++) {
        const p = pending[i] as Child
        // A run of comment lines is one block (an item runs to the next item's start).
        if (i > 0 && continuesComment(text, pending[i - 1] as Child, p)) continue
        items.push({ start: p.head, nodeStart: p.head, kind: isComment(p.type) ? 'comment' : 'decorator', attachNext })
      }
      pending = []
    }
    for (let k = 0; k < list.length; k++) {
      const ch = list[k] as Child
      const comment = isComment(ch.type)
      if (comment && pending.length === 0 && items.length > 0 && !hasNewline(text, prevEnd, ch.start)) {
        prevEnd = ch.end // a comment at the end of the previous item's line belongs to it
        continue
      }
      if (this.trailers.has(ch.type) && pending.length === 0 && items.length > 0) {
        prevEnd = ch.end // `x = <<EOF` goes on to its heredoc's end
        continue
      }
      if (comment || DECORATIONS.has(ch.type)) {
        pending.push(ch)
        prevEnd = ch.end
        continue
      }
      const decl = this.describe(ch)
      let kind = decl?.kind ?? (ch.type === 'ERROR' ? 'error' : 'statement')
      if (kind === 'function' && TYPE_KINDS.has(parentKind)) kind = 'method'
      if (decl !== null && decl.body !== null) {
        let a = pending.length
        while (a > 0) {
          const p = pending[a - 1] as Child
          const next = a === pending.length ? ch.start : (pending[a] as Child).start
          if (blankBetween(text, p.end, next) || /^(?:\/\/!|\/\*!|#!)/.test(text.slice(p.start, p.start + 3))) break
          a--
        }
        const attached = pending.slice(a)
        pending = pending.slice(0, a)
        flush(true)
        items.push({ start: attached[0]?.head ?? ch.head, nodeStart: ch.head, kind, attachNext: false, decl, attached })
      } else {
        flush(true)
        const doc = k === 0 && ch.doc
        items.push({ start: ch.head, nodeStart: ch.head, kind: doc ? 'docstring' : kind, attachNext: doc || (ch.bare && k + 1 < list.length) })
      }
      prevEnd = ch.end
    }
    flush(false)
    return items
  }

  private label (d: Decl): string {
    const text = this.text
    const name = d.inner.childForFieldName('name')
    let pos = d.inner.startIndex
    if (name !== null) {
      pos = name.startIndex
    } else {
      for (let i = 0; i < d.inner.childCount; i++) {
        const c = d.inner.child(i)
        if (c !== null && !isComment(c.type) && !DECORATIONS.has(c.type)) {
          pos = c.startIndex
          break
        }
      }
    }
    if (d.from >= 0) pos = d.from
    // From a statement's label, the header still ends with its own first line (`outer:\n for (...) {`).
    let from = d.from >= 0 ? d.from : d.labelAt >= 0 ? Math.min(d.labelAt, pos) : lineStartAfter(text, d.outer.startIndex, pos)
    // The body's start (else the line's end), looked for only as far as a label is read (see
    // LABEL_SCAN below).
    const reach = Math.min(d.outer.endIndex, Math.max(pos, from + LABEL_SCAN + 1))
    let to = d.open > pos ? Math.min(d.open, reach) : newlineIn(text, pos, reach)
    // A literal held on a line of its own (`f('x',` then `[`): its line says only how it opens,
    // so the label is what holds it, from the statement's start to the bracket.
    const bodyAt = d.open >= 0 ? d.open : d.compound && this.bodies.has(d.inner.type) ? d.inner.startIndex : -1
    if (bodyAt === pos && from > d.outer.startIndex && d.from < 0 && d.labelAt < 0) {
      from = d.outer.startIndex
      to = pos
    }
    // A compound statement's header ends with its first line but for brackets (`if (a &&\n b)`):
    // a body found further on may be any block among its statements (C's `#else`).
    if (d.compound) to = headerEnd(text, pos, to)
    // A label is read from at most LABEL_SCAN characters: a line may be megabytes long (minified
    // code, `{{{{…`), and every definition on it would read it again.
    let long = to - from > LABEL_SCAN
    const sig = this.signature(d, from, long ? from + LABEL_SCAN : to)
    long &&= !sig.stopped
    let label = sig.text.trim()
    // A bare block's label is its brace (`{`), not nothing.
    if (!long) label = label.replace(/[\s{:=,;]+$/, '') || label.replace(/\s+/g, ' ')
    // A statement's header reads without the keyword that opens its body (`if [ -f x ]; then`).
    if (!long && d.compound) label = label.replace(/(\S)[\s;]*\b(?:then|do)$/, '$1')
    // A signature over several lines reads as one: `def f(\n    a,\n    b,\n):` is `def f(a, b)`.
    label = label.replace(/,?\s*\n\s*(?=[)\]}])/g, '').replace(/([([{])\s*\n\s*/g, '$1').replace(/\s+/g, ' ')
    if (long || label.length > LABEL_MAX) {
      const cut = (label.charCodeAt(LABEL_MAX - 2) & 0xfc00) === 0xd800 ? LABEL_MAX - 2 : LABEL_MAX - 1 // not inside a surrogate pair
      label = label.slice(0, cut) + '…'
    }
    return label === '' ? d.kind : label
  }

  /**
   * The text of a declaration's signature, text[from, to): a comment of the declaration itself
   * (`def f():  # note`, then comments above its first statement) ends it; one inside it (in
   * its parameters) is replaced by a space.
   */
  private signature (d: Decl, from: number, to: number): { text: string, stopped: boolean } {
    const text = this.text
    const slice = text.slice(from, to)
    if (!this.spec.lineComments.some((m) => slice.includes(m)) && !(this.spec.blockComments && slice.includes('/*'))) return { text: slice, stopped: false }
    let out = ''
    let at = from
    const c = d.outer.walk()
    try {
      let depth = 0
      for (;;) {
        const s = c.startIndex
        if (s < to && c.endIndex > from) {
          if (isComment(c.nodeType)) {
            const parent = c.currentNode.parent
            if (s >= at && parent !== null && (parent.id === d.inner.id || parent.id === d.outer.id)) return { text: out + text.slice(at, s), stopped: true }
            out += text.slice(at, Math.max(at, s)) + ' '
            at = Math.min(to, c.endIndex)
          } else if (c.gotoFirstChild()) {
            depth++
            continue
          }
        }
        // On to the next sibling while they may still overlap, else up a level.
        let moved = false
        while (depth > 0) {
          if (c.startIndex < to && c.gotoNextSibling()) {
            moved = true
            break
          }
          c.gotoParent()
          depth--
        }
        if (!moved) break
      }
    } finally {
      c.delete()
    }
    return { text: at >= to ? out : out + text.slice(at, to), stopped: false }
  }

  /**
   * Where an item whose node starts at `pos` starts: at the start of its line when only
   * indentation is before it there, so a chunk starts with the item's whole first line and the
   * previous one does not end with the next line's indentation. With `clause`, also when the
   * line starts with the `}` that ends the item before, or `else` or `while`, or both (`} else {`,
   * `} catch (e) {`, the `if` of Java's `} else if` or C#'s `else if` on a line of its own,
   * `} while (x);`): the line goes whole with the clause instead of being cut after `} `.
   */
  private lineHead (pos: number, clause: boolean): number {
    const text = this.text
    let i = skipBack(text, pos)
    if (clause && i > 0 && text.charCodeAt(i - 1) !== 10) {
      for (const word of CLAUSE_WORDS) {
        const w = i - word.length
        if (w >= 0 && text.startsWith(word, w) && (w === 0 || text.charCodeAt(w - 1) <= 32 || text.charCodeAt(w - 1) === 125)) {
          i = skipBack(text, w)
          break
        }
      }
      while (i > 0 && text.charCodeAt(i - 1) === 125) i = skipBack(text, i - 1) // `}`
    }
    return i === 0 || text.charCodeAt(i - 1) === 10 ? i : pos
  }

  /** Sets the heads of a list's children (lineHead), each above `floor` and the one before. */
  private setHeads (list: Child[], floor: number): void {
    let prev = floor
    for (let k = 0; k < list.length; k++) {
      const ch = list[k] as Child
      const h = this.lineHead(ch.start, k > 0)
      ch.head = h > prev ? h : ch.start
      prev = ch.head
    }
  }

  private block (start: number, end: number, kind: string, attachNext: boolean): void {
    if (end <= start) return
    const e: DocEvent = { type: 'block', kind, start, end, text: this.text.slice(start, end), cut: 'lines' }
    if (attachNext) e.attachNext = true
    this.emit(e)
  }

  /** Emits the events for the children of `root` (the tree's root node). */
  walk (root: Node): void {
    const text = this.text
    const top = this.children(root, false)
    if (top.length === 0) {
      this.block(0, text.length, 'statement', false)
      return
    }
    this.setHeads(top, -1)
    const stack: Frame[] = [{ items: this.items(top, ''), index: 0, lo: 0, hi: text.length, kind: '', end: -1 }]
    while (stack.length > 0) {
      const f = stack[stack.length - 1] as Frame
      if (f.index >= f.items.length) {
        stack.pop()
        if (f.end >= 0) {
          this.block(f.hi, f.end, 'close', false)
          this.emit({ type: 'exit', end: f.end })
        }
        continue
      }
      const k = f.index++
      const item = f.items[k] as Item
      const start = k === 0 ? f.lo : item.start
      const end = k + 1 < f.items.length ? (f.items[k + 1] as Item).start : f.hi
      const d = item.decl
      if (d !== undefined && this.fits(start, end)) {
        // Never opened by the packer: one block, members not walked.
        if (d.compound) {
          this.block(start, end, 'statement', item.attachNext)
        } else {
          this.emit({ type: 'enter', kind: item.kind, label: this.label(d), start })
          this.block(start, end, item.kind, false)
          this.emit({ type: 'exit', end })
        }
        continue
      }
      const members = d === undefined ? [] : this.members(d)
      if (d === undefined || members.length === 0) {
        this.block(start, end, item.kind, item.attachNext)
        continue
      }
      this.emit({ type: 'enter', kind: item.kind, label: this.label(d), start })
      const attached = item.attached ?? []
      for (let j = 0; j < attached.length; j++) {
        const c = attached[j] as Child
        if (j > 0 && continuesComment(text, attached[j - 1] as Child, c)) continue
        let n = j + 1
        while (n < attached.length && continuesComment(text, attached[n - 1] as Child, attached[n] as Child)) n++
        const next = n < attached.length ? (attached[n] as Child).head : item.nodeStart
        this.block(j === 0 ? start : c.head, next, isComment(c.type) ? 'comment' : 'decorator', true)
      }
      this.setHeads(members, item.nodeStart)
      const first = (members[0] as Child).head
      this.block(attached.length > 0 ? item.nodeStart : start, first, d.compound ? 'statement' : 'signature', true)
      const last = members[members.length - 1] as Child
      let close = skipSpace(text, Math.min(last.end, end), end)
      while (close < end && (text.charCodeAt(close) === 59 || text.charCodeAt(close) === 44)) close = skipSpace(text, close + 1, end) // `;` `,`
      if (close < end) {
        const h = this.lineHead(close, false) // a `}` on its own line closes with its indentation
        if (h > last.head) close = h
      }
      stack.push({ items: this.items(members, item.kind), index: 0, lo: first, hi: close, kind: item.kind, end })
    }
  }
}

/**
 * Parser work a parse may do in `auto` mode before the fallback takes over, counted in calls of
 * tree-sitter's progress callback (one per 100 parser operations: a count of work, not of time,
 * so the same text gets the same decision on an idle and on a busy machine; a clock made it
 * depend on the CPU load). It is there so that a parse whose error recovery explodes (stack
 * versions multiplying: operations without end) gives up instead of stalling the split.
 * Measured (calls per MB of text): ordinary code 2,700-5,300 (lib.dom.d.ts, typescript.js,
 * react-dom, Python's stdlib, a 10 MB concatenation of .ts/.d.ts files: 4,600, 48,614 calls),
 * minified bundles 15,000-17,400 (swagger-ui-bundle.js 1.7 MB: 25,665 calls, xlsx.full.min.js).
 * The budget, 20,000 calls plus 50 per 1,000 characters (50,000 per MB), is about 3 times the
 * densest of those. What it does not bound is a parse whose operations get slower rather than
 * more numerous: TypeScript read with the JavaScript grammar (10.6 MB) makes 4,500 calls per MB
 * like ordinary code, but at 1.8 calls per ms instead of 15-60 (27 s); no count of calls tells it
 * from a minified bundle, so a time limit for that belongs to the caller (the service's split
 * time limit), not to this decision.
 */
export function parseBudget (text: string): number {
  return 20_000 + Math.ceil(text.length / 20)
}

/**
 * Parses `text` and emits its events; false when the parser gave no tree or did more than
 * `budget` units of work (progress callbacks; see parseBudget) (the caller falls back).
 */
export function emitSyntax (text: string, spec: LanguageSpec, grammar: Grammar, emit: (e: DocEvent) => void, fitsBytes = 0, budget = Infinity): boolean {
  const parser = grammar.newParser()
  try {
    let work = 0
    const tree = Number.isFinite(budget)
      ? parser.parse(text, null, { progressCallback: () => ++work > budget })
      : parser.parse(text)
    if (tree === null) return false
    try {
      new SyntaxWalker(spec, text, emit, fitsBytes).walk(tree.rootNode)
    } finally {
      tree.delete()
    }
    return true
  } finally {
    parser.delete()
  }
}
