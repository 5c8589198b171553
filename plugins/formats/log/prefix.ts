/**
 * Prefixes that container runtimes and their tools write before every line a program prints.
 * Every line then starts alike (the CRI timestamp matches the ISO pattern), so the start of an
 * entry is found on the message after the prefix.
 */
import { SGR } from './patterns.js'

export interface LinePrefix {
  name: 'cri' | 'compose' | 'kubectl' | 'docker'
  /** Matches the prefix; for CRI, group 1 is the tag: `P` (partial) or `F` (full). */
  regex: RegExp
  /** For a prefix that wraps the message (docker's JSON string): the message, from what follows the prefix. */
  unwrap?: (rest: string) => string
  /**
   * For a prefix that marks a cut line at its end, not at its start (docker): whether the line
   * `text` holds from `from` to `to` is cut, so that the next line continues its message. It
   * reads at most the last TAIL_CHARS characters.
   */
  cutAtEnd?: (text: string, from: number, to: number) => boolean
}

/** Characters at the end of a line that `cutAtEnd` reads. */
export const TAIL_CHARS = 512

/** What a one-letter JSON string escape stands for (`\"`, `\\` and `\/` stand for themselves). */
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' }

/**
 * The text of the JSON string that `rest` starts inside (after its opening quote), decoded, up
 * to its closing quote or the end of `rest` (a line's first 1024 characters may end inside it),
 * less one line end: the line the program printed. One pass, no regular expression: it runs on
 * every line of a Docker log (a regex replace per line made the parser 3.5x slower).
 */
export function jsonStringStart (rest: string): string {
  let text = ''
  let from = 0
  let i = 0
  for (; i < rest.length; i++) {
    const c = rest.charCodeAt(i)
    if (c === 34 /* " */) break
    if (c !== 92 /* \ */) continue
    text += rest.slice(from, i)
    const e = rest[i + 1]
    if (e === undefined) { from = i + 1; break } // cut inside the escape
    if (e === 'u') {
      const hex = rest.slice(i + 2, i + 6)
      if (/^[0-9a-fA-F]{4}$/.test(hex)) {
        text += String.fromCharCode(parseInt(hex, 16))
        i += 5
      } else {
        text += '\\u'
        i += 1
      }
    } else {
      text += ESCAPES[e] ?? e
      i += 1
    }
    from = i + 1
  }
  text += rest.slice(from, i)
  const n = text.length
  if (text.charCodeAt(n - 1) !== 10) return text
  return text.slice(0, text.charCodeAt(n - 2) === 13 ? n - 2 : n - 1)
}

/** What ends a json-file line's `log` string: a quote inside the string is escaped, so this cannot occur in it. */
const STREAM_MEMBER = '","stream":"'

/**
 * Whether the json-file line from `from` to `to` in `text` is a piece of a longer line: Docker
 * writes a line over 16 KiB as several JSON lines, and only the last one's `log` string ends in
 * `\n`, that is `\n` after an odd number of backslashes. Reads at most the last TAIL_CHARS
 * characters (one slice and a native search: a loop of charCodeAt over the piece, a sliced
 * string, made the parser 1.5x slower on a Docker log); a line without `","stream":"` there
 * (another writer, attributes over TAIL_CHARS) is a whole line.
 */
export function jsonStringCut (text: string, from: number, to: number): boolean {
  const tail = text.slice(Math.max(from, to - TAIL_CHARS), to)
  const at = tail.lastIndexOf(STREAM_MEMBER)
  if (at < 1 || tail.charCodeAt(at - 1) !== 110 /* n */) return at >= 1
  let backslashes = 0
  for (let i = at - 2; i >= 0 && tail.charCodeAt(i) === 92 /* \ */; i--) backslashes++
  return backslashes % 2 === 0
}

export const LINE_PREFIXES: LinePrefix[] = [
  // 2024-01-01T00:00:00.123456789Z stdout F message (Kubernetes CRI: containerd, CRI-O). A
  // `P` line is a long line the runtime cut: its message goes on in the next line.
  { name: 'cri', regex: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2}) (?:stdout|stderr) ([PF])(?: |$)/ },
  // api-1  | message (docker compose logs: the service name padded, maybe coloured)
  { name: 'compose', regex: new RegExp(`^${SGR}[A-Za-z0-9][\\w.-]{0,63} {1,64}${SGR}\\|${SGR}(?: |$)`) },
  // [pod/api-7d9f8c-x2x4z/api] message (`kubectl logs --prefix`: the pod and container, whose
  // names are DNS labels and subdomains)
  { name: 'kubectl', regex: /^\[pod\/[a-z0-9][a-z0-9.-]{0,252}\/[a-z0-9][a-z0-9-]{0,62}\](?: |$)/ },
  // {"log":"message\n","stream":"stderr","time":"..."} (Docker's json-file driver: one line the
  // program printed per JSON line, so a stack trace is several; the message is JSON-escaped,
  // a tab written `\t`; a line over 16 KiB is several, all but the last without `\n`)
  { name: 'docker', regex: /^\{"log":"/, unwrap: jsonStringStart, cutAtEnd: jsonStringCut },
]

/** The prefix that more than half of the non-blank sample lines start with, if any. */
export function choosePrefix (lines: string[]): LinePrefix | undefined {
  let content = 0
  for (const line of lines) if (line.trim().length > 0) content++
  for (const prefix of LINE_PREFIXES) {
    let n = 0
    for (const line of lines) if (prefix.regex.test(line)) n++
    if (n * 2 > content) return prefix
  }
  return undefined
}

/** `line` without its prefix (as is when it has none). */
export function messageOf (prefix: LinePrefix, line: string): string {
  const m = prefix.regex.exec(line)
  return m === null ? line : after(prefix, line, m[0].length)
}

function after (prefix: LinePrefix, line: string, at: number): string {
  const rest = line.slice(at)
  return prefix.unwrap === undefined ? rest : prefix.unwrap(rest)
}

/** Whether the last line tested was cut: a CRI partial line, a docker line without `\n`. */
export interface PrefixState { partial: boolean }

/**
 * A start test on the message after `prefix`: a line that continues a partial line never
 * starts an entry. `state` carries the partial flag from line to line.
 */
export function onMessage (prefix: LinePrefix, state: PrefixState, test: (message: string) => boolean): (head: string) => boolean {
  return (head) => {
    const m = prefix.regex.exec(head)
    const continued = state.partial
    state.partial = m !== null && m[1] === 'P'
    return !continued && test(m === null ? head : after(prefix, head, m[0].length))
  }
}
