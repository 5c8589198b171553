/**
 * Content sniffing for `auto` (the `detect` score): how much a sample reads as a log. Parsing
 * chooses its own start pattern (patterns.ts); this only has to tell a log from text, CSV and
 * YAML, so it also accepts a timestamp a few fields into the line (an access log's client
 * address comes first, a container prefix `api-1 | `, BGL's alert flag).
 */
import { sampleLines } from './parse.js'
import { LEVEL, MONTH, START_PATTERNS, isBlankLine, looksLikeContinuation, startsIndented } from './patterns.js'

/**
 * A timestamp: a date with a time, a CLF or syslog date, a time of day, or epoch seconds.
 * Looked for in the first STAMP_REACH characters only: prose seldom has one there on most lines.
 */
const STAMP = new RegExp([
  '\\d{4}[-/.]\\d{2}[-/.]\\d{2}[-T ]\\d{2}[:.]\\d{2}',
  `\\d{2}/${MONTH}/\\d{4}:\\d{2}:\\d{2}`,
  `${MONTH} [ \\d]\\d \\d{2}:\\d{2}:\\d{2}`,
  '(?:^|[^\\d:.])\\d{2}:\\d{2}:\\d{2}(?![\\d:])',
  '(?:^|[^\\d.])1\\d{9}(?:[.,]\\d{1,9})?(?![\\d.])',
].join('|'))
const STAMP_REACH = 48

/** Colour codes (`ESC[31m`), which some loggers put before the timestamp. */
const ANSI = /\u001b\[[0-9;]{0,32}m/g

/** Lines looked at: enough to get past a banner or a stack trace at the top of a rotated file. */
const MAX_LINES = 200

const SNIFFED = START_PATTERNS.filter((p) => p.sniff).map((p) => p.regex)

/** Before a timestamp, a key (`time: `, `"date":"`): a field of YAML or JSON, not a log line's start. */
const KEYED = /:\s|:["']?$/

function stamped (line: string): boolean {
  if (SNIFFED.some((re) => re.test(line))) return true
  const found = STAMP.exec(line.slice(0, STAMP_REACH))
  return found !== null && !KEYED.test(line.slice(0, found.index))
}

/** A line with a sentence's stop inside or at its end: prose, as a transcript's turn is. */
const SENTENCE = /[.!?]["'”’)]?(?:\s+\p{Lu}|\s*$)/u
/** A level (`INFO`) or a program and its process id (`sshd[812]:`): a log line, prose or not. */
const LOG_MARK = new RegExp(`\\b${LEVEL}\\b|\\w\\[\\d{1,10}\\]:`)

/**
 * Docker's json-file lines are JSON Lines (0.9), but each holds one line a program printed, so
 * a stack trace is several of them: read as a log, its entries are found on those lines.
 */
const DOCKER_SCORE = 0.95
/** A whole json-file line: its `log` string first, then Docker's `stream`, and `time` last. */
function dockerLine (line: string): boolean {
  const end = line.trimEnd()
  return line.startsWith('{"log":"') && end.endsWith('"}') && end.lastIndexOf('"time":"') > 0 &&
    (line.includes('","stream":"stdout",') || line.includes('","stream":"stderr",'))
}

/**
 * The first lines of `sample` (up to 16 KiB), at least two that are not blank, are all
 * json-file lines; a last line the sample cut (no line break after it) is not read. Whole
 * lines: a message of a thousand characters puts `stream` past the head of its line.
 */
function dockerJsonFile (sample: string): boolean {
  if (!sample.startsWith('{"log":"')) return false
  const text = sample.slice(0, 16 * 1024)
  const lines = text.split('\n', MAX_LINES + 1)
  // The last piece ends no line (it is what follows the last break, maybe cut).
  if (lines.length <= MAX_LINES) lines.pop()
  let n = 0
  for (const line of lines.slice(0, MAX_LINES)) {
    if (isBlankLine(line)) continue
    if (!dockerLine(line)) return false
    n++
  }
  return n >= 2
}

/**
 * 0 to 0.8 (0.95 for Docker's json-file). Lines that look like continuations (indented, stack
 * traces) are left out; of the others, the share that starts with (or soon holds) a timestamp
 * or a level sets the score.
 * At most 0.8, so a CSV whose first column is a date-time (0.85, consistent fields) stays CSV.
 * Stamped lines that each open a paragraph of prose (a blank line before nearly every one) are
 * a transcript's turns or dated notes (`[00:01:05] MR. SMITH: ...`), not a log: as records, a
 * long turn was one chunk far over the budget.
 */
export function logScore (sample: string): number {
  if (dockerJsonFile(sample)) return DOCKER_SCORE
  const lines = sampleLines(sample.slice(0, 16 * 1024)).slice(0, MAX_LINES)
  let stamps = 0
  let others = 0
  let afterBlank = 0
  let prose = 0
  let blankBefore = false
  for (const raw of lines) {
    if (isBlankLine(raw)) {
      blankBefore = true
      continue
    }
    const line = raw.includes('\u001b') ? raw.replace(ANSI, '') : raw
    // An indented timestamp is a field of something else (JSON, YAML), not an entry's start.
    if (!startsIndented(line) && stamped(line)) {
      stamps++
      if (blankBefore) afterBlank++
      if (SENTENCE.test(line) && !LOG_MARK.test(line)) prose++
    } else if (!looksLikeContinuation(line)) others++
    blankBefore = false
  }
  if (stamps < 2) return 0
  if (afterBlank >= (stamps - 1) * 0.8 && prose * 2 >= stamps) return 0
  const share = stamps / (stamps + others)
  return share >= 0.5 ? 0.55 + share * 0.25 : 0
}
