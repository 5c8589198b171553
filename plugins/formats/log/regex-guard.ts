/**
 * The guard on user start patterns (`log_start`): a pattern is parsed into terms (a character,
 * a group, a lookaround, an assertion, a back-reference, each with its repeat range) and given a
 * worst-case cost, the steps a backtracking matcher may take on one line of HEAD characters that
 * does not match; past MAX_STEPS it is refused. No library measures that: the ReDoS checkers
 * found refuse `.*x` (any backtracking at all) and took 4 s to judge one pattern.
 *
 * A part that can match in several lengths (`*`, `?`, `{0,1024}`, `{1,3}`, an alternation)
 * multiplies the paths the rest of the pattern is tried on by its number of lengths, unless
 * the characters it repeats cannot also start what follows it: `\S+ ` can only end before the
 * space, `\d{1,3}\.` before the dot, so they cost a scan and no extra paths. Lines are cut to
 * HEAD characters, so `{0,1024}`, `{2,}` and `*` are the same thing here: ranges count by
 * their number of lengths, capped at HEAD + 1. Lazy quantifiers try the same lengths in the
 * other order and cost the same. A lookaround is atomic but runs its whole body every time it
 * is reached. Without a leading `^` the pattern is tried at each of HEAD positions.
 */
import { HEAD } from './patterns.js'

/** Code points as sorted, disjoint, inclusive [from, to] ranges. END stands for the end of the line (`$`). */
type CharSet = Array<[number, number]>
const MAX_CP = 0x10ffff
const END = 0x110000
const ANY: CharSet = [[0, MAX_CP]]
const NONE: CharSet = []
const DIGIT: CharSet = [[48, 57]]
const WORD: CharSet = [[48, 57], [65, 90], [95, 95], [97, 122]]
const SPACE: CharSet = [[9, 13], [32, 32], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]]
const DOT: CharSet = [[0, 9], [11, 12], [14, 0x2027], [0x202a, MAX_CP]]

function union (...sets: CharSet[]): CharSet {
  const all = sets.flat().sort((a, b) => a[0] - b[0])
  const out: CharSet = []
  for (const [from, to] of all) {
    const last = out[out.length - 1]
    if (last !== undefined && from <= last[1] + 1) last[1] = Math.max(last[1], to)
    else out.push([from, to])
  }
  return out
}

function complement (set: CharSet): CharSet {
  const out: CharSet = []
  let next = 0
  for (const [from, to] of set) {
    if (from > next) out.push([next, from - 1])
    next = to + 1
  }
  if (next <= MAX_CP) out.push([next, MAX_CP])
  return out
}

function has (set: CharSet, c: number): boolean {
  for (const [from, to] of set) if (c >= from && c <= to) return true
  return false
}

function intersects (a: CharSet, b: CharSet): boolean {
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    if (a[i]![1] < b[j]![0]) i++
    else if (b[j]![1] < a[i]![0]) j++
    else return true
  }
  return false
}

/** Surrogate halves and astral characters are one thing or two depending on the `u` flag: any of them stands for all of them. */
function widenSurrogates (set: CharSet): CharSet {
  const odd: CharSet = [[0xd800, 0xdfff], [0x10000, MAX_CP]]
  return intersects(set, odd) ? union(set, odd) : set
}

interface Term {
  kind: 'char' | 'group' | 'look' | 'assert' | 'backref'
  /** char: what it matches; assert: NONE, or [END] for `$`. */
  set: CharSet
  alts: Term[][]
  min: number
  max: number
  /** Source text, quantifier included (for messages). */
  text: string
  /** Memos of nullable() and firstOf(): nested groups would otherwise be walked again at each level. */
  empty?: boolean
  first?: CharSet
}

const HEX = /^[0-9a-fA-F]+$/

/** Parses `source` as V8 does with the `u` flag or without it; unknown constructs get the widest reading (ANY). */
function parseRegex (source: string, unicode: boolean): Term[][] {
  let i = 0
  let caseless = 0
  const named = /\(\?<[^=!]/.test(source)
  const at = (sticky: RegExp): RegExpExecArray | null => { sticky.lastIndex = i; return sticky.exec(source) }
  const charAt = (at: number): { code: number, length: number } => {
    const code = unicode ? source.codePointAt(at)! : source.charCodeAt(at)
    return { code, length: code > 0xffff ? 2 : 1 }
  }
  /** After a backslash at i: a single code point, a set, an assertion or a back-reference. */
  const escape = (inClass: boolean): { code?: number, set?: CharSet, assert?: boolean, backref?: boolean } => {
    const c = source[i + 1]
    i += 2
    switch (c) {
      case undefined: i--; return { code: 92 }
      case 'd': return { set: DIGIT }
      case 'D': return { set: complement(DIGIT) }
      case 'w': return { set: WORD }
      case 'W': return { set: complement(WORD) }
      case 's': return { set: SPACE }
      case 'S': return { set: complement(SPACE) }
      case 't': return { code: 9 }
      case 'n': return { code: 10 }
      case 'v': return { code: 11 }
      case 'f': return { code: 12 }
      case 'r': return { code: 13 }
      case 'b': return inClass ? { code: 8 } : { assert: true }
      case 'B': return inClass ? { code: 66 } : { assert: true }
      case 'x':
        if (HEX.test(source.slice(i, i + 2)) && i + 2 <= source.length) { i += 2; return { code: parseInt(source.slice(i - 2, i), 16) } }
        return { code: 120 }
      case 'u': {
        if (unicode && source[i] === '{') {
          const close = source.indexOf('}', i)
          if (close !== -1 && HEX.test(source.slice(i + 1, close))) { const code = parseInt(source.slice(i + 1, close), 16); i = close + 1; return { code } }
        }
        if (i + 4 <= source.length && HEX.test(source.slice(i, i + 4))) { i += 4; return { code: parseInt(source.slice(i - 4, i), 16) } }
        return { code: 117 }
      }
      case 'p': case 'P':
        if (unicode && source[i] === '{') {
          const close = source.indexOf('}', i)
          i = close === -1 ? source.length : close + 1
          return { set: ANY }
        }
        return { code: c.charCodeAt(0) }
      case 'k':
        if ((unicode || named) && source[i] === '<') {
          const close = source.indexOf('>', i)
          i = close === -1 ? source.length : close + 1
          return inClass ? { set: ANY } : { backref: true }
        }
        return { code: 107 }
      default:
        if (c >= '0' && c <= '9') {
          while (i < source.length && source[i]! >= '0' && source[i]! <= '9') i++
          // \0, octal or a back-reference: read widely.
          return inClass || c === '0' ? { set: ANY } : { backref: true }
        }
        if (c === 'c') {
          if (/[A-Za-z]/.test(source[i] ?? '')) i++
          return { set: ANY }
        }
        // An identity escape (`\.`, `\[`): the character itself.
        i--
        { const { code, length } = charAt(i); i += length; return { code } }
    }
  }
  const charClass = (): CharSet => {
    i++
    const negate = source[i] === '^'
    if (negate) i++
    const parts: CharSet[] = []
    const item = (): { code?: number, set?: CharSet } => {
      if (source[i] === '\\') {
        const e = escape(true)
        return e.code !== undefined ? { code: e.code } : { set: e.set ?? ANY }
      }
      const { code, length } = charAt(i)
      i += length
      return { code }
    }
    // In JavaScript `]` right after `[` or `[^` closes the class: `[]` matches nothing, `[^]` anything.
    while (i < source.length && source[i] !== ']') {
      const a = item()
      if (source[i] === '-' && i + 1 < source.length && source[i + 1] !== ']') {
        i++
        const b = item()
        if (a.code !== undefined && b.code !== undefined) parts.push([[Math.min(a.code, b.code), Math.max(a.code, b.code)]])
        else parts.push(a.set ?? [[a.code!, a.code!]], b.set ?? [[b.code!, b.code!]], [[45, 45]])
      } else parts.push(a.set ?? [[a.code!, a.code!]])
    }
    i++
    // An escape read widely (`\p{L}`) must not turn into nothing under `^`.
    if (parts.includes(ANY)) return ANY
    const set = union(...parts)
    return negate ? complement(set) : set
  }
  const quantify = (term: Term, from: number): void => {
    const c = source[i]
    if (c === '*') { term.min = 0; term.max = Infinity; i++ } else if (c === '+') { term.min = 1; term.max = Infinity; i++ } else if (c === '?') { term.min = 0; term.max = 1; i++ } else if (c === '{') {
      const m = at(/\{(\d+)(,(\d*))?\}/y) // on the whole source: `{0,000…0001024}` is a quantifier too
      if (m === null) { term.text = source.slice(from, i); return }
      term.min = Number(m[1])
      term.max = m[2] === undefined ? term.min : m[3] === '' ? Infinity : Number(m[3])
      i += m[0].length
    } else { term.text = source.slice(from, i); return }
    if (source[i] === '?') i++ // lazy: the same lengths, tried shortest first
    term.text = source.slice(from, i)
  }
  const make = (kind: Term['kind'], set: CharSet = NONE, alts: Term[][] = []): Term => {
    if (kind === 'char') set = caseless > 0 ? ANY : widenSurrogates(set)
    return { kind, set, alts, min: 1, max: 1, text: '' }
  }
  const alternatives = (): Term[][] => {
    const alts: Term[][] = [[]]
    while (i < source.length && source[i] !== ')') {
      const from = i
      const c = source[i]!
      let term: Term | undefined
      if (c === '|') { alts.push([]); i++; continue }
      if (c === '^') { term = make('assert'); i++ } else if (c === '$') { term = make('assert', [[END, END]]); i++ } else if (c === '.') { term = make('char', DOT); i++ } else if (c === '[') term = make('char', charClass())
      else if (c === '\\') {
        const e = escape(false)
        term = e.assert === true ? make('assert') : e.backref === true ? make('backref') : make('char', e.set ?? [[e.code!, e.code!]])
      } else if (c === '(') {
        i++
        let kind: Term['kind'] = 'group'
        let flags = ''
        if (source[i] === '?') {
          const m = at(/\?(?:(<?[=!])|<[^>]*>|([a-z]*)(?:-[a-z]*)?:)/y)
          if (m?.[1] !== undefined) kind = 'look'
          flags = m?.[2] ?? ''
          i += m === null ? 1 : m[0].length
        }
        if (flags.includes('i')) caseless++
        const alts = alternatives()
        if (flags.includes('i')) caseless--
        i++ // )
        term = make(kind, NONE, alts)
      } else if (c === '*' || c === '+' || c === '?') { i++; continue } // a syntax error anyway
      else {
        const { code, length } = charAt(i)
        i += length
        term = make('char', [[code, code]])
      }
      quantify(term, from)
      alts[alts.length - 1]!.push(term)
    }
    return alts
  }
  const top: Term[][] = []
  while (i < source.length) { top.push(...alternatives()); i++ } // a stray `)` (invalid anyway)
  return top
}

/** Whether a term can match the empty string, and the characters it can start with. */
function nullable (t: Term): boolean {
  if (t.empty !== undefined) return t.empty
  // `^`, `\b` match no character; `$` is taken as the END character.
  t.empty = t.min === 0 || (t.kind === 'assert' && t.set === NONE) || t.kind === 'look' || t.kind === 'backref' ||
    (t.kind === 'group' && t.alts.some((a) => a.every(nullable)))
  return t.empty
}

function firstOf (t: Term): CharSet {
  if (t.first !== undefined) return t.first
  // A lookaround runs its whole body before anything after it can fail: at each length of a
  // quantifier before it (`\w*?(?![^ ]{0,1024})$`: 0.16 s a line), so it starts on anything.
  t.first = t.max === 0 ? NONE : t.kind === 'look' || t.kind === 'backref' ? ANY : t.kind === 'group' ? union(...t.alts.map((a) => firstOfSeq(a, NONE))) : t.set
  return t.first
}

/** The characters a sequence can start with, then `follow` if it can match the empty string. */
function firstOfSeq (seq: Term[], follow: CharSet): CharSet {
  const sets: CharSet[] = []
  for (const t of seq) {
    sets.push(firstOf(t))
    if (!nullable(t)) return union(...sets)
  }
  sets.push(follow)
  return union(...sets)
}

interface Cost {
  /** Paths that leave the part to try what follows. */
  ways: number
  /** Steps spent inside the part, over all its paths. */
  steps: number
}

/** The part of the pattern that makes the paths: the terms with several ways, most first. */
interface Analysis { parts: Array<{ text: string, ways: number }> }

function costOfSeq (seq: Term[], follow: CharSet, an: Analysis): Cost {
  const follows: CharSet[] = new Array<CharSet>(seq.length)
  let f = follow
  for (let k = seq.length - 1; k >= 0; k--) {
    follows[k] = f
    const t = seq[k]!
    f = nullable(t) ? union(firstOf(t), f) : firstOf(t)
  }
  let ways = 1
  let steps = 0
  for (let k = 0; k < seq.length; k++) {
    const c = costOfTerm(seq[k]!, follows[k]!, an)
    steps += ways * c.steps
    ways *= c.ways
  }
  return { ways, steps }
}

/** Alternatives: their steps add up; the paths that leave are those of the alternatives that can start on one same character. */
function costOfAlts (alts: Term[][], follow: CharSet, an: Analysis): Cost {
  const costs = alts.map((a) => costOfSeq(a, follow, an))
  const firsts = alts.map((a) => firstOfSeq(a, follow))
  let ways = Math.max(1, ...costs.map((c) => c.ways).filter((_, k) => firsts[k]!.length === 0))
  const points = new Set<number>()
  for (const set of firsts) for (const [from] of set) points.add(from)
  for (const set of firsts) for (const [, to] of set) points.add(to)
  for (const p of points) {
    let sum = 0
    for (let k = 0; k < alts.length; k++) if (has(firsts[k]!, p)) sum += costs[k]!.ways
    ways = Math.max(ways, sum)
  }
  return { ways, steps: Math.max(1, costs.reduce((s, c) => s + c.steps, 0)) }
}

function costOfTerm (t: Term, follow: CharSet, an: Analysis): Cost {
  const max = Math.min(t.max, HEAD)
  const min = Math.min(t.min, max)
  const lengths = max - min + 1
  if (t.kind === 'assert') return { ways: 1, steps: 1 }
  // Atomic: one way out, its body's steps each time it is tried (a quantified lookahead, legacy syntax, may be tried each round).
  if (t.kind === 'look') return { ways: 1, steps: Math.max(1, max) * costOfAlts(t.alts, NONE, an).steps }
  if (t.kind === 'char' || t.kind === 'backref') {
    const ways = lengths > 1 && intersects(t.kind === 'char' ? t.set : ANY, follow) ? lengths : 1
    if (ways > 1) an.parts.push({ text: t.text, ways })
    return { ways, steps: t.kind === 'backref' ? HEAD : Math.max(1, max) }
  }
  if (max === 0) return { ways: 1, steps: 1 }
  const first = firstOf(t)
  // Another round can follow a round, so the body is costed with that in its follow.
  const body = costOfAlts(t.alts, max > 1 ? union(first, follow) : follow, an)
  const stop = lengths > 1 && intersects(first, follow) ? lengths : 1
  const ways = body.ways ** max * stop
  const steps = body.ways === 1 ? max * body.steps : (body.ways ** max - 1) / (body.ways - 1) * body.steps
  if (ways > 1) an.parts.push({ text: t.text, ways })
  return { ways, steps }
}

/** Whether a sequence can only match at the start of a line (`^…`, `(?:^a|^b)`). */
function anchored (seq: Term[]): boolean {
  const t = seq[0]
  if (t === undefined) return false
  if (t.kind === 'assert') return t.set === NONE && t.text === '^'
  return t.kind === 'group' && t.min >= 1 && t.alts.every(anchored)
}

/**
 * A range counts as "many lengths" (like `*`) above this: `{0,1024}`, `{1,500}`, `{2,}`. Up to
 * 16 lengths covers what record starts count (`\d{1,9}` fractions, `\d{1,3}` octets,
 * `[a-z]{3,9}` month names); beyond that a range on a line of HEAD characters is as good as
 * `*`. Used by the nesting rule below; the cost counts every range by its real width.
 */
const WIDE = 16

/**
 * Steps a pattern may take on one line: 3·HEAD², half again the count of `^.*.*x`, `.*x` or
 * `ERROR.*:` (2.1e6: two overlapping unbounded parts anchored, or one unanchored, which the
 * guard has always allowed; 0.5 ms a line of 1024 characters). The worst accepted patterns
 * take about 5 ms a line. Refused: `^.{0,1024}.{0,1024}.{0,1024}x`, 2.2e9, 0.37 s a line.
 */
const MAX_STEPS = 3 * HEAD * HEAD

const isWide = (t: Term): boolean => Math.min(t.max, HEAD) - t.min + 1 > WIDE

/** A group repeated many times holding a part repeated many times: `(a+)+`, `(\w+\s?)*`, `(a{1,100}){2,}`. */
function nestedWide (alts: Term[][], insideWide: boolean): string | undefined {
  for (const seq of alts) {
    for (const t of seq) {
      if (insideWide && t.kind !== 'assert' && isWide(t)) return t.text
      if (t.kind === 'group' || t.kind === 'look') {
        const found = nestedWide(t.alts, insideWide || (t.kind === 'group' && isWide(t)))
        if (found !== undefined) return found
      }
    }
  }
  return undefined
}

const rough = (n: number): string => Number.isFinite(n) ? n.toExponential(1).replace('e+', 'e') : 'unboundedly many'

/**
 * Rejects user regexes that can take exponential or polynomial time on a line (see the cost
 * above): more than MAX_STEPS steps on a line of HEAD characters, or a group repeated more
 * than WIDE times that holds a part repeated more than WIDE times (`(a+)+`). Returns a
 * reason, or undefined when the pattern is acceptable.
 */
export function unsafeRegexReason (source: string): string | undefined {
  let unicode = true
  try { RegExp(source, 'u') } catch { unicode = false }
  const top = parseRegex(source, unicode)
  const nested = nestedWide(top, false)
  if (nested !== undefined) return `a group repeated many times holds a part repeated many times (${nested}; such as (a+)+ or (a{1,100}){2,})`
  const an: Analysis = { parts: [] }
  let steps = 0
  let unanchored = false
  for (const seq of top) {
    const positions = anchored(seq) ? 1 : HEAD
    if (positions > 1) unanchored = true
    steps += positions * costOfSeq(seq, NONE, an).steps
  }
  if (steps <= MAX_STEPS) return undefined
  const parts: string[] = []
  for (const p of an.parts.sort((a, b) => b.ways - a.ways)) {
    if (parts.length < 3 && !parts.some((q) => q.includes(p.text))) parts.push(p.text)
  }
  const reasons = parts.length > 0 ? [`${parts.join(' and ')} can match the same characters in many ways`] : unanchored ? [] : ['its parts each scan the line']
  if (unanchored) reasons.push('without a leading ^ it is tried at every position of a line (start it with ^ if entries start at the line start)')
  return `${reasons.join(', and ')} (${rough(steps)} steps on a line of ${HEAD} characters that does not match, at most ${rough(MAX_STEPS)})`
}
