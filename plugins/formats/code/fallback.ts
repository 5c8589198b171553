/**
 * Code splitting without a parser: a new block starts at a line with no indentation that follows
 * a blank line, outside brackets, strings and block comments. Inside one level of brackets (a
 * class's members, a function's body), a line after a blank line starts a block too, within a
 * container around its top-level block, so that the packer cuts between top-level blocks first:
 * a file that is one class (Java, C#, Kotlin, Swift, PHP) was packed line by line. Blank lines
 * stay with the block before them. Lossless by construction (blocks are consecutive slices); a
 * block made only of comments and decorators gets attachNext, like its syntax-aware twin.
 */
import type { DocEvent } from '../../../core/events.js'

export interface FallbackSyntax {
  lineComments: string[]
  blockComments: boolean
}

/** What any language gets when its syntax is unknown: `#` and `//` comments, `/* *\/` blocks. */
export const GENERIC_SYNTAX: FallbackSyntax = { lineComments: ['#', '//'], blockComments: true }

const enum S { Code, Str, Template, Triple, Block }

function commentOnly (text: string, lineComments: string[]): boolean {
  let any = false
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '') continue
    any = true
    const decoration = line.startsWith('@') || line.startsWith('#[')
    if (!decoration && !lineComments.some((m) => line.startsWith(m)) && !/^(?:\/\*|\*)/.test(line)) return false
  }
  return any
}

/** The fallback blocks of `text`, as block events. */
export function fallbackEvents (text: string, syntax: FallbackSyntax, emit: (e: DocEvent) => void): void {
  const n = text.length
  let state = S.Code
  let quote = 0
  let depth = 0
  let blockStart = 0
  let lineStart = 0
  let lineBlank = true
  let prevBlank = false
  const cuts: number[] = []
  /** Cuts one level of brackets deep, between the top-level ones. */
  const inner: number[] = []
  const lineCommentAt = (i: number): boolean => {
    for (const m of syntax.lineComments) {
      if (text.startsWith(m, i)) {
        if (m !== '#') return true
        const before = i === 0 ? 32 : text.charCodeAt(i - 1)
        if (before === 32 || before === 9 || before === 10) return true // not `${#x}` or `$#`
      }
    }
    return false
  }
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 10) {
      prevBlank = lineBlank
      lineBlank = true
      lineStart = i + 1
      if (state === S.Str) state = S.Code // an unterminated ' or " string ends with its line
      continue
    }
    const space = c === 32 || c === 9 || c === 13 || c === 12
    if (i === lineStart && !space && prevBlank && state === S.Code && depth === 0 && i > blockStart) {
      cuts.push(i)
      blockStart = i
    } else if (lineBlank && !space && prevBlank && state === S.Code && depth === 1) {
      // the line's first character (lineBlank until then)
      inner.push(lineStart)
    }
    if (!space) lineBlank = false
    const escape = c === 92 && text.charCodeAt(i + 1) !== 10
    switch (state) {
      case S.Code:
        if (c === 34 || c === 39) {
          if (text.startsWith(c === 34 ? '"""' : "'''", i)) {
            state = S.Triple
            i += 2
          } else {
            state = S.Str
          }
          quote = c
        } else if (c === 96) {
          state = S.Template
        } else if (syntax.blockComments && c === 47 && text.charCodeAt(i + 1) === 42) {
          state = S.Block
          i++
        } else if (lineCommentAt(i)) {
          const eol = text.indexOf('\n', i)
          i = (eol === -1 ? n : eol) - 1
        } else if (c === 40 || c === 91 || c === 123) {
          depth++
        } else if ((c === 41 || c === 93 || c === 125) && depth > 0) {
          depth--
        }
        break
      case S.Str:
        if (escape) i++
        else if (c === quote) state = S.Code
        break
      case S.Template:
        if (escape) i++
        else if (c === 96) state = S.Code
        break
      case S.Triple:
        if (escape) i++
        else if (c === quote && text.charCodeAt(i + 1) === quote && text.charCodeAt(i + 2) === quote) {
          state = S.Code
          i += 2
        }
        break
      case S.Block:
        if (c === 42 && text.charCodeAt(i + 1) === 47) {
          state = S.Code
          i++
        }
        break
    }
  }
  const block = (start: number, end: number): void => {
    const slice = text.slice(start, end)
    const e: DocEvent = { type: 'block', kind: 'code', start, end, text: slice, cut: 'lines' }
    if (end < n && commentOnly(slice, syntax.lineComments)) {
      e.kind = 'comment'
      e.attachNext = true
    }
    emit(e)
  }
  let start = 0
  let k = 0
  for (const end of [...cuts, n]) {
    if (end <= start) continue
    while (k < inner.length && inner[k]! <= start) k++
    const from = k
    while (k < inner.length && inner[k]! < end) k++
    if (k === from) {
      block(start, end)
    } else {
      emit({ type: 'enter', kind: 'block', label: '', start })
      let at = start
      for (const cut of [...inner.slice(from, k), end]) {
        block(at, cut)
        at = cut
      }
      emit({ type: 'exit', end })
    }
    start = end
  }
}
