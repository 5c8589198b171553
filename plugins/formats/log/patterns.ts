/**
 * Start-of-entry patterns for logs, and the heuristics that tell a continuation line.
 *
 * Every built-in regex is anchored at the line start and uses only bounded or single-level
 * quantifiers, and it is only ever run on the first HEAD characters of a line, so a hostile
 * line (1 MB of one character) costs a bounded number of steps per line.
 */

/** Characters of a line that start patterns and heuristics look at. */
export const HEAD = 1024

export const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)'
const WEEKDAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)'
export const LEVEL = '(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|CRIT|SEVERE|ALERT|EMERG|PANIC)'

export interface StartPattern {
  name: string
  regex: RegExp
  /** Counts for content sniffing (`detect`): false for shapes another format owns (JSON lines). */
  sniff: boolean
}

/**
 * Colour codes (ANSI SGR, `\x1b[32m`) that a terminal logger writes before the timestamp, as
 * many as a style takes (colour, bold, dim): every built-in pattern allows them first.
 */
export const SGR = '(?:\\x1b\\[[0-9;]{0,10}m){0,4}'
const SGR_RUN = new RegExp(`^${SGR}`)

function start (name: string, source: string, sniff = true): StartPattern {
  return { name, regex: new RegExp(`^${SGR}${source}`), sniff }
}

/** Most specific first: on equal counts the earlier pattern wins. */
export const START_PATTERNS: StartPattern[] = [
  // 2015-10-18 18:01:47,978 · [2024-01-01T10:00:00Z] · 2024-01-01 10:00
  start('iso-datetime', '\\[?\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}'),
  // 17/06/09 20:10:40 · 2019/01/01 10:00:00 (nginx)
  start('slash-datetime', '\\[?\\d{2,4}\\/\\d{2}\\/\\d{2}[ T]\\d{2}:\\d{2}'),
  // 14.06.2024 10:00 · 14/06/2024 10:00
  start('dmy-datetime', '\\[?\\d{2}[-/.]\\d{2}[-/.]\\d{4}[ T]\\d{2}:\\d{2}'),
  // 081109 203615 (HDFS)
  start('compact-datetime', '\\d{6} \\d{6} '),
  // 03-17 16:13:38.811 (Android logcat)
  start('logcat', '\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}'),
  // Jun 14 15:16:01 host ... (syslog, BSD)
  start('syslog', `${MONTH} [ \\d]\\d \\d{2}:\\d{2}:\\d{2}`),
  // <34>1 2003-10-11T22:14:15.003Z ... (syslog, RFC 5424)
  start('syslog-priority', '<\\d{1,3}>\\d{0,2} ?\\d{4}-\\d{2}-\\d{2}'),
  // [Sun Dec 04 04:47:44 2005] (Apache error log)
  start('bracket-weekday', `\\[${WEEKDAY} ${MONTH} [ \\d]\\d \\d{2}:\\d{2}:\\d{2}`),
  // [10/Oct/2000:13:55:36 -0700]
  start('bracket-clf', `\\[\\d{2}/${MONTH}/\\d{4}:\\d{2}:\\d{2}`),
  // I0101 12:00:00.000 (glog)
  start('glog', '[IWEF]\\d{4} \\d{2}:\\d{2}:\\d{2}'),
  // I, [2024-01-01T10:00:00.000 #1] (Ruby Logger)
  start('ruby-logger', '[DIWEFA], \\[\\d{4}-\\d{2}-\\d{2}'),
  // time="2024-01-01T10:00:00Z" level=info (logfmt)
  start('logfmt-time', '(?:time|ts|timestamp|t)="?\\d{4}-\\d{2}-\\d{2}'),
  // 10:00:00.123 ...
  start('time', '\\[?\\d{2}:\\d{2}:\\d{2}'),
  // 1117838570.123 ... (epoch seconds)
  start('epoch', '\\[?1\\d{9}(?:[.,]\\d{1,9})?[\\] ]'),
  // 10.1.2.3 - - [10/Oct/2000:13:55:36 -0700] "GET / ..." (access logs: the client address
  // first). Not for sniffing: a column of addresses is as likely a CSV.
  start('client-address', '(?:\\d{1,3}\\.){3}\\d{1,3} ', false),
  // ERROR: ... · [INFO] ... · WARN  ... (level first)
  start('level', `\\[?${LEVEL}\\b`),
  // error: ... · info: ... (winston's `simple` format, whose stack's `Error: ...` is no start;
  // .NET's console logger: `fail: App[0]`). Not for sniffing: prose and compiler output have such lines too.
  start('level-lower', '(?:error|warn|info|http|verbose|debug|silly|fail|crit|dbug|trce): ', false),
  // {"time": ...} (JSON lines, as Docker writes them)
  start('json', '\\{"', false),
  // 2024-01-01 ... (date without a time)
  start('iso-date', '\\[?\\d{4}-\\d{2}-\\d{2}\\b'),
]

/** `line` without the colour codes it starts with (most lines have none: returned as is). */
export function withoutSgr (line: string): string {
  if (line.charCodeAt(0) !== 27) return line
  const m = SGR_RUN.exec(line)
  return m === null ? line : line.slice(m[0].length)
}

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

/** Spaces and tabs at the start of `line`. */
function indentOf (line: string): number {
  let i = 0
  for (; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (c !== 32 && c !== 9) break
  }
  return i
}

/** The least indentation of the lines that are not blank: where entries start in a log indented as a whole. */
export function baseIndent (lines: string[]): number {
  let base = Infinity
  for (const line of lines) if (!isBlankLine(line)) base = Math.min(base, indentOf(line))
  return base === Infinity ? 0 : base
}

/** A whitespace-only line never starts an entry: it belongs to the entry before it. */
export function isBlankLine (line: string): boolean {
  return line.length === 0 || isBlank(line)
}

const JAVA_CONT = /^(?:Caused by|Suppressed|Wrapped by)[: ]|^\.\.\. \d{1,9} (?:more|common frames omitted)/
const PY_TRACEBACK = /^Traceback \(most recent call last\):/
const PY_CHAIN = /^(?:During handling of the above exception|The above exception was the direct cause)/
const GO_CONT = /^(?:goroutine \d{1,12} \[|created by |\[signal |exit status \d)/
/**
 * A Rust panic's first line; `stack backtrace:` and `note: ...` lines follow unindented, and
 * since Rust 1.73 (the location then ends with `:`) the message on the line after it.
 */
const RUST_PANIC = /^thread '[^']{0,300}' panicked at /
const RUST_CONT = /^(?:stack backtrace:|note: )/
/**
 * Where a Node.js process crashed (`/app/server.js:42`, `node:internal/modules/cjs/loader:1080`):
 * the source line and a `^` under it follow, then the error, its frames and `Node.js v20.11.1`.
 */
const NODE_CRASH_AT = /^(?:node:[\w/.-]{1,300}|(?:file:\/\/)?[\w./@:\\-]{1,1000}\.(?:[cm]?js|[cm]?ts|jsx|tsx)):\d{1,9}$/
/** The `^` under the source line of a Node.js crash. */
const NODE_CARET = /^\s*\^+\s*$/
const NODE_VERSION = /^Node\.js v\d{1,4}\.\d{1,4}\.\d{1,4}$/
/** An error's first line as Node.js prints it: `Error: boom`, `TypeError [ERR_X]: ...`. */
const NODE_ERROR = /^(?:[A-Z][\w$]{0,100})?(?:Error|Exception)\b/
/** After the error: `Require stack:` and its `- /app/index.js` lines (MODULE_NOT_FOUND), the `}` of its fields. */
const NODE_ERROR_CONT = /^(?:Require stack:|- |\}$)/
const EXCEPTION_LINE = /^[A-Za-z_$][\w$.]{0,300}(?:Exception|Error|Throwable|Warning)(?::|$)/
/**
 * A Java thread dump (jstack, `kill -3`) logged as one entry: its header, each thread's first
 * line (`"http-nio-8080-exec-1" #31 daemon prio=5 ...`) and its footer.
 */
const JAVA_THREAD_DUMP = /^(?:"[^"]{0,300}" (?:#\d{1,9} )?(?:daemon )?(?:prio|os_prio|tid)=|Full thread dump |JNI global ref)/

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
 * `Caused by:` and exception lines, thread dumps, Python tracebacks, Go panics. Used by detection to decide
 * whether the lines that do not match a start pattern are continuations.
 */
export function looksLikeContinuation (line: string): boolean {
  line = withoutSgr(line)
  return isBlankLine(line) || startsIndented(line) || JAVA_CONT.test(line) || PY_TRACEBACK.test(line) ||
    PY_CHAIN.test(line) || GO_CONT.test(line) || line.startsWith('panic: ') || isGoFrame(line) ||
    EXCEPTION_LINE.test(line) || JAVA_THREAD_DUMP.test(line) || line === '}' || line === ']'
}

/**
 * Without a start pattern, a non-indented line starts an entry, except the lines that continue
 * a stack trace. Python tracebacks need a little state: the exception line that ends one is
 * not indented, and a chained traceback follows "During handling ...". In a log whose lines are
 * all indented (`base`, the sample's least indentation), a line indented `base` counts as not
 * indented.
 */
/** IndentClassifier.nodeCrash once the crash's error line was read. */
const ERROR_SEEN = 100

export class IndentClassifier {
  private inTraceback = false
  private chained = false
  /** After a Rust panic's first line: 1 while its message may follow, then 2. */
  private panic = 0
  /**
   * After the line that says where a Node.js process crashed: 0, then 1 after its source line,
   * 2 after the `^` line, ERROR_SEEN after the error's first line; -1 outside a crash.
   */
  private nodeCrash = -1

  constructor (private readonly base = 0) {}

  isStart (line: string): boolean {
    line = withoutSgr(line)
    if (isBlankLine(line)) return false
    const indent = indentOf(line)
    if (indent > this.base) return false
    if (indent > 0) line = line.slice(indent)
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
    if (this.panic > 0) {
      // Its first line after it, whatever it says (the message since Rust 1.73), then its notes.
      const first = this.panic === 1
      this.panic = 2
      if (first || RUST_CONT.test(line)) return false
      this.panic = 0
    }
    if (this.nodeCrash >= 0) {
      if (this.nodeCrash < ERROR_SEEN && NODE_ERROR.test(line)) {
        this.nodeCrash = ERROR_SEEN
        return false
      }
      if (this.nodeCrash === 0 || (this.nodeCrash === 1 && NODE_CARET.test(line))) {
        this.nodeCrash++
        return false
      }
      if (this.nodeCrash === ERROR_SEEN && NODE_ERROR_CONT.test(line)) return false
      this.nodeCrash = -1
      if (NODE_VERSION.test(line)) return false
    }
    if (RUST_PANIC.test(line)) {
      this.panic = line.trimEnd().endsWith(':') ? 1 : 2
      return true
    }
    if (NODE_CRASH_AT.test(line)) {
      this.nodeCrash = 0
      return true
    }
    if (JAVA_CONT.test(line) || GO_CONT.test(line) || isGoFrame(line) || line === '}' || line === ']' || line === ')') return false
    return true
  }
}

/**
 * Matches the lines that some built-in pattern matches, in one test: detection runs again on
 * later windows, and most lines of a log without a pattern match none.
 */
const ANY_START = new RegExp(START_PATTERNS.map((p) => `(?:${p.regex.source})`).join('|'))

/**
 * The start pattern that matches the most sample lines, if it matches at least half of the
 * lines that could start an entry (those that do not look like continuations); else undefined.
 */
export function choosePattern (lines: string[], forSniffing = false): { pattern: StartPattern, matched: number, candidates: number } | undefined {
  let best: StartPattern | undefined
  let bestCount = 0
  const content: string[] = []
  const matching: string[] = []
  for (const line of lines) {
    if (isBlankLine(line)) continue
    content.push(line)
    if (ANY_START.test(line)) matching.push(line)
  }
  for (const pattern of START_PATTERNS) {
    if (forSniffing && !pattern.sniff) continue
    let n = 0
    for (const line of matching) if (pattern.regex.test(line)) n++
    if (n > bestCount) { best = pattern; bestCount = n }
  }
  if (best === undefined) return undefined
  let candidates = 0
  for (const line of content) if (best.regex.test(line) || !looksLikeContinuation(line)) candidates++
  if (bestCount * 2 < candidates) return undefined
  return { pattern: best, matched: bestCount, candidates: content.length }
}
