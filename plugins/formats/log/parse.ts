/**
 * The log parser: one `record` (kind `entry`) per log entry, that is a line that starts an
 * entry plus its continuation lines (stack traces, indented lines, `Caused by:` ...).
 *
 * Streaming: the parser holds the current entry and, until a start pattern is chosen, up to
 * two windows of lines to detect it from (each at most SAMPLE_LINES lines or SAMPLE_CHARS
 * characters).
 * Lines are found with indexOf('\n') and the start test runs once per line on its first HEAD
 * characters. Output does not depend on how the input is cut into pieces: windows are fixed
 * stretches of the document and a line is classified only once it is complete.
 */
import { LineEnds } from '../../../core/line-ends.js'
import { SampleBuffer, leadingLines } from '../../../core/structure.js'
import type { DocEvent } from '../../../core/events.js'
import type { ParserContext } from '../../../core/types.js'
import { HEAD, IndentClassifier, baseIndent, choosePattern, isBlankLine, looksLikeContinuation, startsIndented } from './patterns.js'
import { type LinePrefix, type PrefixState, TAIL_CHARS, choosePrefix, messageOf, onMessage } from './prefix.js'

export const SAMPLE_LINES = 50
export const SAMPLE_CHARS = 64 * 1024
/**
 * With detected patterns, an entry that holds this many lines that look like entry starts but
 * match no pattern (a service with another format concatenated after the first) has detection
 * run on them: a pattern that wins there is added, and the entry is read again with it.
 */
export const WINDOW_LINES = 50
/**
 * Without a pattern, detection is tried on every window at first; after this many windows
 * where none won, the text between tries doubles, up to MAX_GAP windows' worth (about 800
 * lines): a file with no pattern at all pays for detection on one window in 16, not on each.
 */
const EVERY_WINDOW = 4
const MAX_GAP = 16
/**
 * With a start pattern, an entry that has grown this many lines also ends before a line that
 * does not look like a continuation, so a file whose later lines stop matching the detected
 * pattern still streams in bounded memory.
 */
export const MAX_ENTRY_LINES = 1000
/**
 * An entry that has grown this many characters ends before its next line whatever that line
 * looks like (a file of indented lines, say), so memory stays bounded on any input. Each part is
 * far over any budget (about 250,000 tokens) either way; at 16 MiB, a crash loop's stack trace of
 * 105 MB (six parts) peaked at 372-407 MB through the CLI and 315 MB of it at 605 MB: V8 collects
 * such large strings late, up to about 4x what is live. At 1 MiB: 182-185 MB, flat.
 */
export const MAX_ENTRY_CHARS = 1 << 20
/** A line this long (no line break at all, most likely not a log) is refused: it cannot be cut. */
export const MAX_LINE_CHARS = 64 << 20

export interface LogParserOptions {
  /** A user start pattern (`log_start`); when absent the pattern is detected from a sample. */
  start?: RegExp
}

/**
 * The text a start test sees of the line [from, to) of `text`: the line without its line
 * ending, cut to HEAD characters, sliced once.
 */
function headAt (text: string, from: number, to: number): string {
  let end = to
  if (end > from && text.charCodeAt(end - 1) === 10) end--
  if (end > from && text.charCodeAt(end - 1) === 13) end--
  return text.slice(from, Math.min(end, from + HEAD))
}

/** headAt of a whole string: a line, or the start of one. */
function lineHead (line: string): string {
  return headAt(line, 0, line.length)
}

/**
 * Splits a sample into the lines a start pattern is chosen from, without their endings (the
 * last, possibly partial, line included). Where the sample has a `\n`, a lone `\r` does not end
 * a line here: it redraws the line (a progress bar, `Downloading 10%\r20%\r100%\r\n`), and the
 * pieces after it would outnumber the lines that start entries. Only in a file without `\n`
 * (old Mac) is it the line ending.
 */
export function sampleLines (sample: string): string[] {
  const out: string[] = []
  const ends = sample.includes('\n') ? undefined : new LineEnds(sample, true)
  let pos = 0
  while (pos < sample.length) {
    const next = ends !== undefined ? ends.after(pos) : sample.indexOf('\n', pos) + 1
    const end = next <= 0 ? sample.length : next
    out.push(headAt(sample, pos, end))
    pos = end
  }
  return out
}

export class LogParser {
  private readonly emit: (event: DocEvent) => void
  private readonly fail: ParserContext['fail']
  private readonly userStart: RegExp | undefined
  private isStart: ((head: string) => boolean) | undefined
  private patternMode = false
  /** Detected start patterns: a line that matches any of them starts an entry. */
  private patterns: RegExp[] = []
  /** Lines of the current entry that match no detected pattern and are not indented, not classified yet. */
  private unmatched: string[] = []
  /** Those of them that look like entry starts (their messages): where re-detection runs. */
  private window: string[] = []
  /**
   * With detected patterns: lines that look like entry starts by the fallback rules start
   * entries too. Set when a window of such lines in one entry matched no detected pattern and
   * no pattern won on them (another service's log, in a format no pattern knows, concatenated
   * after the first: its lines would otherwise make entries of MAX_ENTRY_LINES lines); cleared
   * by the next line that starts an entry by a pattern.
   */
  private foreign = false
  /** The fallback rules of the `foreign` stretch (new for each: a Python traceback has state). */
  private foreignRule = new IndentClassifier()
  /** The messages of the lines that started entries by the fallback rules in this stretch, where detection runs again. */
  private foreignWindow: string[] = []
  /** Whether the line the start test last read matched a detected pattern. */
  private matchedPattern = false
  /** The container prefix of every line (CRI, compose), when detection found one. */
  private prefix: LinePrefix | undefined
  private readonly prefixState: PrefixState = { partial: false }

  /** No start pattern chosen yet: the document is read a window at a time (see `detectIn`). */
  private detecting: boolean
  // While detecting: the window of lines held until detection runs on it.
  private sample = new SampleBuffer(SAMPLE_LINES, SAMPLE_CHARS)
  /** While detecting: the last window where no pattern won, not read yet. */
  private deferred = ''
  /** While detecting: windows where no pattern won, and the gap between tries in windows. */
  private failures = 0
  private gap = 1
  /** While detecting, between tries: the text up to the line that ends at or after this offset is read untried. */
  private skipTo = 0

  /** Offset of the next piece in the document. */
  private docPos = 0
  /** Offset where the current entry starts. */
  private recStart = 0
  /** Text of the current entry that came in earlier pieces (includes a partial line). */
  private pre = ''
  /** Offset where the current (incomplete) line starts. */
  private lineStart = 0
  /** First characters of the current line that came in earlier pieces (HEAD + 2 or a little more). */
  private head = ''
  /** 1-based line number of the current line, and of the current entry's first line. */
  private line = 1
  private recLine = 1
  /** The current line has met a `\r` that ended the last piece: a `\n` may follow. */
  private pendingCR = false
  /** Lines that started an entry so far: text before the first one belongs to it. */
  private started = 0

  constructor (emit: (event: DocEvent) => void, fail: ParserContext['fail'], options: LogParserOptions = {}) {
    this.emit = emit
    this.fail = fail
    this.userStart = options.start
    this.detecting = options.start === undefined
  }

  write (piece: string): void {
    if (piece.length === 0) return
    if (this.isStart === undefined && this.userStart !== undefined) this.decide()
    if (this.detecting) this.detectIn(piece)
    else this.scan(piece)
  }

  end (): void {
    if (this.detecting) {
      const held = this.sample.take()
      if (held.length === 0 && this.isStart === undefined) return // empty document: no events
      // Less than a window is left: it is one.
      if (held.length > 0) this.tryWindow(held, held)
      if (this.deferred.length > 0) this.scan(this.deferred)
      this.deferred = ''
    }
    const total = this.docPos
    if (this.lineStart < total) {
      // The last line, without a line ending.
      const head = lineHead(this.head)
      if (this.startsEntry(head)) {
        if (this.started++ > 0) {
          const cut = this.lineStart - this.recStart
          this.flush(this.pre.slice(0, cut), this.lineStart)
          this.pre = this.pre.slice(cut)
          this.recStart = this.lineStart
          this.recLine = this.line
        }
      } else if (this.patternAdded(head)) {
        this.resegment()
      }
    }
    if (total > this.recStart) this.flush(this.pre, total)
    this.pre = ''
    this.head = ''
    this.pendingCR = false
  }

  /**
   * Until a start pattern is chosen, the document is read in windows of SAMPLE_LINES lines (or
   * SAMPLE_CHARS characters) and detection runs on each, so a long preamble, or a file that
   * starts inside a stack trace, does not decide for the whole file. A window where no pattern
   * wins is held back until the next one is tried: when a pattern wins there, it reads the
   * held window too (a format that starts mid-window is read whole by its pattern); else the
   * held window goes by the fallback rules. After EVERY_WINDOW windows where none won, tries
   * grow further apart (MAX_GAP). Windows are fixed stretches of the document, whatever the
   * pieces.
   */
  private detectIn (piece: string): void {
    let rest = piece
    for (;;) {
      if (this.skipTo > 0) {
        // Between tries: read by the fallback rules, without counting lines.
        const nl = rest.indexOf('\n', Math.max(0, this.skipTo - this.docPos))
        if (nl === -1) {
          this.scan(rest)
          return
        }
        this.skipTo = 0
        this.scan(rest.slice(0, nl + 1))
        rest = rest.slice(nl + 1)
      }
      if (rest.length === 0 || !this.sample.add(rest)) return
      const held = this.sample.take()
      this.sample = new SampleBuffer(SAMPLE_LINES, SAMPLE_CHARS) // counts the lines of the next window from 0
      const window = leadingLines(held, SAMPLE_LINES, SAMPLE_CHARS)
      if (!this.tryWindow(window, held)) return
      rest = held.slice(window.length)
    }
  }

  /**
   * Runs detection on `window`, the start of `held`. A pattern that wins reads the window held
   * back and all of `held` (false: detection is over); else the window held back goes by the
   * fallback rules and this one is held back instead (true).
   */
  private tryWindow (window: string, held: string): boolean {
    this.decide(window)
    const deferred = this.deferred
    if (!this.detecting) {
      this.deferred = ''
      this.scan(deferred + held)
      return false
    }
    if (deferred.length > 0) this.scan(deferred)
    if (++this.failures > EVERY_WINDOW) this.gap = Math.min(this.gap * 2, MAX_GAP)
    if (this.gap === 1) {
      this.deferred = window
    } else {
      // The next try is further on: nothing to hold back for it.
      this.deferred = ''
      this.scan(window)
      this.skipTo = this.docPos + (this.gap - 1) * window.length
    }
    return true
  }

  /** Chooses how entries start, from a window of lines (none for `log_start`). */
  private decide (sample = ''): void {
    if (this.userStart !== undefined) {
      const re = this.userStart
      this.patternMode = true
      this.isStart = (head) => !isBlankLine(head) && re.test(head)
      this.emit({ type: 'info', key: 'start_pattern', value: re.source })
      return
    }
    let lines = sampleLines(sample)
    const prefix = choosePrefix(lines)
    if (prefix !== undefined) lines = lines.map((line) => messageOf(prefix, line))
    const chosen = choosePattern(lines)
    if (chosen !== undefined) {
      this.detecting = false
      this.patternMode = true
      this.usePrefix(prefix)
      this.addPattern(chosen.pattern.regex)
    } else if (this.isStart === undefined) {
      const indent = new IndentClassifier(baseIndent(lines))
      this.usePrefix(prefix)
      this.isStart = this.onMessage((message) => indent.isStart(message))
      this.emit({ type: 'info', key: 'start_pattern', value: null })
    }
  }

  /** Start tests from now on read the message after `prefix`; reported as `line_prefix`. */
  private usePrefix (prefix: LinePrefix | undefined): void {
    if (prefix !== this.prefix) this.emit({ type: 'info', key: 'line_prefix', value: prefix?.name ?? null })
    this.prefix = prefix
  }

  /** `test` on the message of a line, after the line prefix if there is one. */
  private onMessage (test: (message: string) => boolean): (head: string) => boolean {
    return this.prefix === undefined ? test : onMessage(this.prefix, this.prefixState, test)
  }

  /** From now on a line that matches `re` starts an entry too. */
  private addPattern (re: RegExp): void {
    const patterns = this.patterns
    patterns.push(re)
    const first = patterns[0]!
    const matches = patterns.length === 1
      ? (message: string) => first.test(message)
      : (message: string) => {
          for (const p of patterns) if (p.test(message)) return true
          return false
        }
    this.isStart = this.onMessage((message) => {
      this.matchedPattern = matches(message)
      return this.matchedPattern || (this.foreign && this.foreignRule.isStart(message))
    })
    this.emit({ type: 'info', key: 'start_pattern', value: patterns.map((p) => p.source).join('|') })
  }

  /**
   * A line of the current entry that started no entry, `head` its start: with detected
   * patterns, a line that is not indented is kept for re-detection. True when that added a
   * pattern, so the entry held must be read again.
   */
  private patternAdded (head: string): boolean {
    // Batches of what the window still lacks: lines that look like continuations (a stack
    // trace) do not join it, and a batch of WINDOW_LINES every time made a block of another
    // format with a trace in it wait for a second batch (about 100 lines, not 50).
    return this.patterns.length > 0 && !startsIndented(head) && this.unmatched.push(head) >= WINDOW_LINES - this.window.length && this.redetect()
  }

  /**
   * Called when as many lines of the current entry as the window lacks matched no detected
   * pattern (and were not indented): those that look like entry starts join the window (continuation lines,
   * stack traces and goroutine dumps, never do). Once the window holds WINDOW_LINES lines,
   * detection runs on it: true when a pattern won there and was added, and the entry held must
   * be read again, or when none won and the lines are read again as `foreign`. Lines are
   * classified here, in batches: one by one in the loop of `scan`, it cost the parser about 10%
   * on the bench log (measured).
   */
  private redetect (): boolean {
    const window = this.window
    for (const head of this.unmatched) {
      const message = this.prefix === undefined ? head : messageOf(this.prefix, head)
      if (!looksLikeContinuation(message)) window.push(message)
    }
    this.unmatched = []
    if (window.length < WINDOW_LINES) return false
    this.window = []
    const chosen = choosePattern(window)
    if (chosen === undefined) {
      // Already read by the fallback rules: nothing to read again.
      if (this.foreign) return false
      this.foreign = true
      this.foreignRule = new IndentClassifier()
      this.foreignWindow = []
      return true
    }
    this.addPattern(chosen.pattern.regex)
    return true
  }

  /**
   * A line started an entry; `head` when it passed the start test (not only the length cap).
   * By a pattern, it ends a stretch of `foreign` lines; by the fallback rules, it joins the
   * window that detection runs on again, so that a known format after the stretch (a third
   * service's log) gets its pattern.
   */
  private entryStarted (head: string | undefined): void {
    if (this.matchedPattern) {
      this.foreign = false
      this.foreignWindow = []
    } else if (this.foreign && head !== undefined) {
      const window = this.foreignWindow
      window.push(this.prefix === undefined ? head : messageOf(this.prefix, head))
      if (window.length < WINDOW_LINES) return
      this.foreignWindow = []
      const chosen = choosePattern(window)
      if (chosen !== undefined) this.addPattern(chosen.pattern.regex)
    }
  }

  /**
   * Reads the current entry (all of it in `pre`, up to the end of the current line) again
   * after a pattern was added (or `foreign` set): the lines that start an entry now end the
   * entries before them.
   * The entry held is not emitted yet, so nothing emitted changes.
   */
  private resegment (): void {
    const text = this.pre
    this.prefixState.partial = false // the entry's first line started it (or the document): it continues no partial line
    const ends = new LineEnds(text, true)
    const cutAtEnd = this.prefix?.cutAtEnd
    let cut = 0
    let line = this.recLine
    for (let from = 0; from < text.length; line++) {
      const next = ends.after(from)
      const to = next === -1 ? text.length : next
      const head = headAt(text, from, to)
      // (this.isStart: a pattern may be added as lines start entries)
      const starts = this.isStart!(head)
      if (cutAtEnd !== undefined) this.readCut(text, from, to)
      if (starts && this.started++ > 0 && from > cut) {
        this.entryStarted(head)
        this.flush(text.slice(cut, from), this.recStart + from - cut)
        this.recStart += from - cut
        this.recLine = line
        cut = from
      }
      from = to
    }
    this.pre = text.slice(cut)
  }

  private startsEntry (head: string): boolean {
    return this.isStart!(head) || this.overlong(head, this.lineStart)
  }

  /**
   * The current entry, which would end at `lineStart`, is too long to grow: MAX_ENTRY_CHARS, or
   * MAX_ENTRY_LINES and `head` does not look like it continues it.
   */
  private overlong (head: string, lineStart: number): boolean {
    if (lineStart - this.recStart >= MAX_ENTRY_CHARS) return true
    return this.patternMode && this.line - this.recLine >= MAX_ENTRY_LINES && !looksLikeContinuation(head)
  }

  /** Emits the current entry, which ends at `end`; `text` is its full text. */
  private flush (text: string, end: number): void {
    this.emit({ type: 'record', kind: 'entry', start: this.recStart, end, text, label: `line ${this.recLine}` })
  }

  private scan (piece: string): void {
    const base = this.docPos
    /** Index in `piece` where the part of the current entry not yet in `pre` starts. */
    let seg = 0
    let from = 0
    const ends = new LineEnds(piece, false)
    let isStart = this.isStart!
    const cutAtEnd = this.prefix?.cutAtEnd
    /** Index in `piece` just past the line ending of the line at `lineStart`; -1: not found yet. */
    let to = -1
    if (this.pendingCR) {
      // The previous piece ended with `\r`: its line ends there, or after a `\n` here.
      this.pendingCR = false
      to = piece.charCodeAt(0) === 10 ? 1 : 0
    }
    for (;;) {
      if (to === -1) to = ends.after(from)
      if (to === -1) break
      const start = this.lineStart
      let head: string
      if (this.head.length > 0 || start < base) {
        const tail = piece.slice(0, Math.min(to, HEAD + 2))
        head = lineHead(this.head.length > HEAD + 2 ? this.head : this.head + tail)
        this.head = ''
      } else {
        head = headAt(piece, from, to)
      }
      if (base + to - start > MAX_LINE_CHARS) this.refuseLongLine(head, (this.pre + piece.slice(seg, Math.max(seg, start - base))).slice(0, start - this.recStart))
      const passed = isStart(head)
      if (cutAtEnd !== undefined) this.readCut(piece, start >= base ? from : -1, to)
      if (passed || this.overlong(head, start)) {
        this.entryStarted(passed ? head : undefined)
        isStart = this.isStart!
        if (this.unmatched.length > 0) this.unmatched = []
        if (this.window.length > 0) this.window = []
        if (this.started++ > 0) {
          // The entry before this line ends where the line starts.
          const cut = start - this.recStart
          let text: string
          if (cut <= this.pre.length) {
            text = this.pre.length === cut ? this.pre : this.pre.slice(0, cut)
            this.pre = this.pre.length === cut ? '' : this.pre.slice(cut)
          } else {
            const upTo = start - base
            text = this.pre.length > 0 ? this.pre + piece.slice(seg, upTo) : piece.slice(seg, upTo)
            this.pre = ''
            seg = upTo
          }
          this.flush(text, start)
          this.recStart = start
          this.recLine = this.line
        }
      } else if (this.patternAdded(head)) {
        // A pattern was added: the entry up to the end of this line is read again.
        this.pre += piece.slice(seg, to)
        seg = to
        this.resegment()
        isStart = this.isStart!
      }
      this.line++
      from = to
      to = -1
      this.lineStart = base + from
    }
    // The rest of the piece: a partial line; ending with `\r`, it may be the first half of a CRLF.
    this.pendingCR = from < piece.length && piece.charCodeAt(piece.length - 1) === 13
    if (from < piece.length && this.head.length <= HEAD + 2) {
      this.head += piece.slice(from, from + HEAD + 2)
    }
    this.pre += seg === 0 ? piece : piece.slice(seg)
    this.docPos = base + piece.length
    if (this.docPos - this.lineStart > MAX_LINE_CHARS) this.refuseLongLine(lineHead(this.head), this.pre.slice(0, this.lineStart - this.recStart))
  }

  /**
   * After a line's start test, for a prefix that marks a cut line at its end (docker): whether
   * the line from `from` to `to` in `text` is cut, so that the next line continues it. `from` is
   * -1 for the current line of `scan` when it started in an earlier piece: its start is then at
   * the end of `pre`, and its last TAIL_CHARS characters are read from both.
   */
  private readCut (text: string, from: number, to: number): void {
    const cutAtEnd = this.prefix!.cutAtEnd!
    if (from >= 0 || to >= TAIL_CHARS) {
      this.prefixState.partial = cutAtEnd(text, Math.max(from, 0), to)
      return
    }
    const pre = this.pre
    const tail = pre.slice(Math.max(this.lineStart - this.recStart, pre.length - (TAIL_CHARS - to))) + text.slice(0, to)
    this.prefixState.partial = cutAtEnd(tail, 0, tail.length)
  }

  /**
   * A line over MAX_LINE_CHARS (however the input was cut into pieces) is refused. When it
   * starts an entry, the entry before it is complete: it goes out first, so that what comes
   * before the error is all there.
   */
  private refuseLongLine (head: string, before: string): never {
    if (this.started > 0 && before.length > 0 && this.isStart!(head)) this.flush(before, this.lineStart)
    return this.fail('DOCSPLIT_LIMIT_EXCEEDED', `line ${this.line} of the log is longer than ${MAX_LINE_CHARS / (1 << 20)} MiB characters without a line break: a log entry is kept whole, so a line this long is refused`)
  }
}
