/**
 * Start-of-entry patterns for logs, and the heuristics that tell a continuation line.
 *
 * Every built-in regex is anchored at the line start and uses only bounded or single-level
 * quantifiers, and it is only ever run on the first HEAD characters of a line, so a hostile
 * line (1 MB of one character) costs a bounded number of steps per line.
 */

/** Characters of a line that start patterns and heuristics look at. */
export const HEAD = 1024

const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)'
const WEEKDAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)'
const LEVEL = '(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|CRIT|SEVERE|ALERT|EMERG|PANIC)'

export interface StartPattern {
  name: string
  regex: RegExp
  /** Counts for content sniffing (`detect`): false for shapes another format owns (JSON lines). */
  sniff: boolean
}

/** Most specific first: on equal counts the earlier pattern wins. */
export const START_PATTERNS: StartPattern[] = [
  // 2015-10-18 18:01:47,978 · [2024-01-01T10:00:00Z] · 2024-01-01 10:00
  { name: 'iso-datetime', regex: /^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/, sniff: true },
  // 17/06/09 20:10:40 · 2019/01/01 10:00:00 (nginx)
  { name: 'slash-datetime', regex: /^\[?\d{2,4}\/\d{2}\/\d{2}[ T]\d{2}:\d{2}/, sniff: true },
  // 14.06.2024 10:00 · 14/06/2024 10:00
  { name: 'dmy-datetime', regex: /^\[?\d{2}[-/.]\d{2}[-/.]\d{4}[ T]\d{2}:\d{2}/, sniff: true },
  // 081109 203615 (HDFS)
  { name: 'compact-datetime', regex: /^\d{6} \d{6} /, sniff: true },
  // 03-17 16:13:38.811 (Android logcat)
  { name: 'logcat', regex: /^\d{2}-\d{2} \d{2}:\d{2}:\d{2}/, sniff: true },
  // Jun 14 15:16:01 host ... (syslog, BSD)
  { name: 'syslog', regex: new RegExp(`^${MONTH} [ \\d]\\d \\d{2}:\\d{2}:\\d{2}`), sniff: true },
  // <34>1 2003-10-11T22:14:15.003Z ... (syslog, RFC 5424)
  { name: 'syslog-priority', regex: /^<\d{1,3}>\d{0,2} ?\d{4}-\d{2}-\d{2}/, sniff: true },
  // [Sun Dec 04 04:47:44 2005] (Apache error log)
  { name: 'bracket-weekday', regex: new RegExp(`^\\[${WEEKDAY} ${MONTH} [ \\d]\\d \\d{2}:\\d{2}:\\d{2}`), sniff: true },
  // [10/Oct/2000:13:55:36 -0700]
  { name: 'bracket-clf', regex: new RegExp(`^\\[\\d{2}/${MONTH}/\\d{4}:\\d{2}:\\d{2}`), sniff: true },
  // I0101 12:00:00.000 (glog)
  { name: 'glog', regex: /^[IWEF]\d{4} \d{2}:\d{2}:\d{2}/, sniff: true },
  // I, [2024-01-01T10:00:00.000 #1] (Ruby Logger)
  { name: 'ruby-logger', regex: /^[DIWEFA], \[\d{4}-\d{2}-\d{2}/, sniff: true },
  // time="2024-01-01T10:00:00Z" level=info (logfmt)
  { name: 'logfmt-time', regex: /^(?:time|ts|timestamp|t)="?\d{4}-\d{2}-\d{2}/, sniff: true },
  // 10:00:00.123 ...
  { name: 'time', regex: /^\[?\d{2}:\d{2}:\d{2}/, sniff: true },
  // 1117838570.123 ... (epoch seconds)
  { name: 'epoch', regex: /^\[?1\d{9}(?:[.,]\d{1,9})?[\] ]/, sniff: true },
  // ERROR: ... · [INFO] ... · WARN  ... (level first)
  { name: 'level', regex: new RegExp(`^\\[?${LEVEL}\\b`), sniff: true },
  // {"time": ...} (JSON lines, as Docker writes them)
  { name: 'json', regex: /^\{"/, sniff: false },
  // 2024-01-01 ... (date without a time)
  { name: 'iso-date', regex: /^\[?\d{4}-\d{2}-\d{2}\b/, sniff: true },
]

function isBlank (line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (c !== 32 && c !== 9 && c !== 13 && c !== 12 && c !== 11) return false
  }
  return true
}

export function startsIndented (line: string): boolean {
  const c = line.charCodeAt(0)
  return c === 32 || c === 9
}

/** A whitespace-only line never starts an entry: it belongs to the entry before it. */
export function isBlankLine (line: string): boolean {
  return line.length === 0 || isBlank(line)
}

const JAVA_CONT = /^(?:Caused by|Suppressed|Wrapped by)[: ]|^\.\.\. \d{1,9} (?:more|common frames omitted)/
const PY_TRACEBACK = /^Traceback \(most recent call last\):/
const PY_CHAIN = /^(?:During handling of the above exception|The above exception was the direct cause)/
const GO_CONT = /^(?:goroutine \d{1,12} \[|created by |\[signal |exit status \d)/
const EXCEPTION_LINE = /^[A-Za-z_$][\w$.]{0,300}(?:Exception|Error|Throwable|Warning)(?::|$)/

/** `main.main()`, `runtime.gopark(0x4739b8, ...)`, `panic(0x45cb40, 0x47ad70)`: a Go stack frame. */
function isGoFrame (line: string): boolean {
  if (line.charCodeAt(line.length - 1) !== 41 /* ) */) return false
  const open = line.indexOf('(')
  if (open <= 0) return false
  const space = line.indexOf(' ')
  return space === -1 || space > open
}

/**
 * Lines that usually continue an entry even when they do not start with whitespace: Java
 * `Caused by:` and exception lines, Python tracebacks, Go panics. Used by detection to decide
 * whether the lines that do not match a start pattern are continuations.
 */
export function looksLikeContinuation (line: string): boolean {
  return isBlankLine(line) || startsIndented(line) || JAVA_CONT.test(line) || PY_TRACEBACK.test(line) ||
    PY_CHAIN.test(line) || GO_CONT.test(line) || line.startsWith('panic: ') || isGoFrame(line) ||
    EXCEPTION_LINE.test(line) || line === '}' || line === ']'
}

/**
 * Without a start pattern, a non-indented line starts an entry, except the lines that continue
 * a stack trace. Python tracebacks need a little state: the exception line that ends one is
 * not indented, and a chained traceback follows "During handling ...".
 */
export class IndentClassifier {
  private inTraceback = false
  private chained = false

  isStart (line: string): boolean {
    if (isBlankLine(line)) return false
    if (startsIndented(line)) return false
    if (PY_TRACEBACK.test(line)) {
      const start = !this.chained
      this.inTraceback = true
      this.chained = false
      return start
    }
    if (PY_CHAIN.test(line)) {
      this.chained = true
      this.inTraceback = false
      return false
    }
    if (this.inTraceback) {
      // `ValueError: bad input`: the last line of the traceback
      this.inTraceback = false
      return false
    }
    this.chained = false
    if (JAVA_CONT.test(line) || GO_CONT.test(line) || isGoFrame(line) || line === '}' || line === ']' || line === ')') return false
    return true
  }
}

/**
 * The start pattern that matches the most sample lines, if it matches at least half of the
 * lines that could start an entry (those that do not look like continuations); else undefined.
 */
export function choosePattern (lines: string[], forSniffing = false): { pattern: StartPattern, matched: number, candidates: number } | undefined {
  let best: StartPattern | undefined
  let bestCount = 0
  const counts = new Array<number>(START_PATTERNS.length).fill(0)
  const content: string[] = []
  for (const line of lines) if (!isBlankLine(line)) content.push(line)
  for (let p = 0; p < START_PATTERNS.length; p++) {
    const pattern = START_PATTERNS[p]!
    if (forSniffing && !pattern.sniff) continue
    let n = 0
    for (const line of content) if (pattern.regex.test(line)) n++
    counts[p] = n
    if (n > bestCount) { best = pattern; bestCount = n }
  }
  if (best === undefined) return undefined
  let candidates = 0
  for (const line of content) if (best.regex.test(line) || !looksLikeContinuation(line)) candidates++
  if (bestCount * 2 < candidates) return undefined
  return { pattern: best, matched: bestCount, candidates: content.length }
}

/**
 * Unbounded repetitions (`*`, `+`, `{n,}`) outside classes and escapes. Three in a row over
 * overlapping characters (`^a*a*a*b`, `.*.*.*=`) backtrack polynomially on a long line, and
 * telling overlap apart is hard, so more than two is refused; without a leading `^` the match
 * is tried at every position, one more factor of the line's length (`\s*\s*x` on lines of
 * 1,000 spaces: 27 s for 200 lines), so there only one.
 */
const MAX_UNBOUNDED = 2
const MAX_UNBOUNDED_UNANCHORED = 1

function unboundedRepetitions (source: string): number {
  const bare = source.replace(/\\./g, 'x').replace(/\[(?:\\.|[^\]])*\]/g, 'x')
  return (bare.match(/[*+]|\{\d+,\}/g) ?? []).length
}

/**
 * Parts that match in more than one length (`?`, `{1,3}`, an alternation), counted with the
 * repeats of the groups around them. Each doubles the ways a failing line can be tried:
 * `a?a?…a?a…a` with thirty of each takes minutes on one line. Timestamp patterns have a few.
 */
const MAX_VARIABLE = 12
/** A group that matches in more than one length may repeat this often at most (`(\d{1,3}\.){3}`). */
const MAX_VARIABLE_REPEAT = 4

/**
 * Rejects user regexes that can take exponential time: a repeated group holding an unbounded
 * quantifier (`(a+)+`, `(\w+\s?)*`, `(a+){2,9}`), an unboundedly repeated alternation
 * (`(a|ab)*`), a group that matches in several lengths repeated more than MAX_VARIABLE_REPEAT
 * times (`(.?){30}`, `(a|a){1,30}`), or more than MAX_VARIABLE such parts in all. Returns a
 * reason, or undefined when the pattern is acceptable.
 */
export function unsafeRegexReason (source: string): string | undefined {
  const unbounded = unboundedRepetitions(source)
  if (unbounded > MAX_UNBOUNDED) {
    return `it has more than ${MAX_UNBOUNDED} unbounded repetitions (*, +), which can take polynomial time on long lines`
  }
  if (unbounded > MAX_UNBOUNDED_UNANCHORED && !source.startsWith('^')) {
    return `without a leading ^ it may have only ${MAX_UNBOUNDED_UNANCHORED} unbounded repetition (*, +): it is tried at every position of a line`
  }
  /** `variable`: parts of the group that match in more than one length, repeats counted. */
  interface Group { unbounded: boolean, alternation: boolean, variable: number }
  const newGroup = (): Group => ({ unbounded: false, alternation: false, variable: 0 })
  const stack: Group[] = [newGroup()]
  let i = 0
  // What the last atom was: a closed group (with its flags) or a plain atom.
  let lastGroup: Group | undefined
  let lastWasAtom = false
  const readQuantifier = (at: number): { length: number, repeats: boolean, unbounded: boolean, min: number, max: number } | undefined => {
    const c = source[at]
    let length = 0
    let min = 0
    let max = 1
    if (c === '*' || c === '+') { length = 1; min = c === '+' ? 1 : 0; max = Infinity } else if (c === '?') { length = 1 } else if (c === '{') {
      const m = /^\{(\d{1,9})(,(\d{0,9}))?\}/.exec(source.slice(at, at + 24))
      if (m === null) return undefined
      length = m[0].length
      min = Number(m[1])
      max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3])
    } else return undefined
    if (source[at + length] === '?') length++ // lazy
    return { length, repeats: max > 1, unbounded: max === Infinity, min, max }
  }
  while (i < source.length) {
    const c = source[i]!
    const top = stack[stack.length - 1]!
    if (c === '\\') {
      i += 2
      lastGroup = undefined
      lastWasAtom = true
    } else if (c === '[') {
      i++
      if (source[i] === '^') i++
      if (source[i] === ']') i++
      while (i < source.length && source[i] !== ']') i += source[i] === '\\' ? 2 : 1
      i++
      lastGroup = undefined
      lastWasAtom = true
    } else if (c === '(') {
      stack.push(newGroup())
      i++
      if (source[i] === '?') {
        // (?: (?= (?! (?<= (?<! (?<name>
        i++
        if (source[i] === '<' && source[i + 1] !== '=' && source[i + 1] !== '!') {
          const close = source.indexOf('>', i)
          i = close === -1 ? source.length : close + 1
        } else if (source[i] === '<') i += 2
        else i++
      }
      lastGroup = undefined
      lastWasAtom = false
    } else if (c === ')') {
      const group = stack.length > 1 ? stack.pop()! : newGroup()
      if (group.alternation) group.variable++
      i++
      lastGroup = group
      lastWasAtom = true
    } else if (c === '|') {
      top.alternation = true
      i++
      lastGroup = undefined
      lastWasAtom = false
    } else if (lastWasAtom && (c === '*' || c === '+' || c === '?' || c === '{')) {
      const q = readQuantifier(i)
      if (q === undefined) { i++; lastGroup = undefined; continue }
      if (lastGroup !== undefined && q.repeats) {
        if (lastGroup.unbounded) return 'a repeated group contains an unbounded quantifier (such as (a+)+)'
        if (q.unbounded && lastGroup.alternation) return 'an unboundedly repeated group contains an alternation (such as (a|ab)*)'
        if (lastGroup.variable > 0 && q.max > MAX_VARIABLE_REPEAT) return `a group that matches in several lengths repeats more than ${MAX_VARIABLE_REPEAT} times (such as (a?){30})`
      }
      const parent = stack[stack.length - 1]!
      if (q.unbounded) parent.unbounded = true
      if (lastGroup !== undefined) {
        parent.unbounded ||= lastGroup.unbounded
        parent.variable += lastGroup.variable * (q.unbounded ? 1 : q.max)
      }
      if (q.min !== q.max) parent.variable++
      i += q.length
      lastGroup = undefined
      lastWasAtom = false
    } else {
      i++
      lastGroup = undefined
      lastWasAtom = true
    }
    // A group closed without a quantifier passes its flags up.
    if (lastGroup !== undefined && !(source[i] === '*' || source[i] === '+' || source[i] === '?' || source[i] === '{')) {
      const parent = stack[stack.length - 1]!
      parent.unbounded ||= lastGroup.unbounded
      parent.variable += lastGroup.variable
    }
  }
  const total = stack.reduce((sum, g) => sum + g.variable, 0)
  if (total > MAX_VARIABLE) return `it has more than ${MAX_VARIABLE} parts that match in several lengths (?, {1,3}, |), which can take exponential time on a line that does not match`
  return undefined
}
