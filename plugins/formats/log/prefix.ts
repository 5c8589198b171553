/**
 * Prefixes that container runtimes and their tools write before every line a program prints.
 * Every line then starts alike (the CRI timestamp matches the ISO pattern), so the start of an
 * entry is found on the message after the prefix.
 */
import { SGR } from './patterns.js'

export interface LinePrefix {
  name: 'cri' | 'compose' | 'kubectl'
  /** Matches the prefix; for CRI, group 1 is the tag: `P` (partial) or `F` (full). */
  regex: RegExp
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
  return m === null ? line : line.slice(m[0].length)
}

/** Whether the last line tested was a CRI partial line. */
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
    return !continued && test(m === null ? head : head.slice(m[0].length))
  }
}
