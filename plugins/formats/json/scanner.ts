/**
 * A strict JSON (RFC 8259) scanner: a state machine fed with string pieces, iterative (nesting
 * never grows the JS stack), validating as it goes. It builds no values: it reports the
 * structure a splitter needs (where values, keys and containers start and end, as absolute
 * string offsets) to a sink, and only for the shallow depths the sink asks for.
 *
 * In `lines` mode (JSONL) a line feed ends a value: each line holds one JSON text or is blank.
 */

/** Nesting deeper than this is DOCSPLIT_LIMIT_EXCEEDED. */
export const MAX_DEPTH = 10_000

export interface ScanSink {
  /** Hooks fire only for events at a depth <= watch (depth = containers open around the event). */
  watch: number
  /** A value starts at `offset`; `code` is its first character code (`{`, `[`, `"`, digit, ...). */
  valueStart (depth: number, offset: number, code: number): void
  /** An object key (its opening quote) starts at `offset`. */
  keyStart (depth: number, offset: number): void
  /** The key ends (after its closing quote). */
  keyEnd (depth: number, start: number, end: number): void
  /** A container whose value was at `depth` closes; `end` is just after its bracket. */
  containerEnd (depth: number, end: number): void
  /** Lines mode: a line feed at `offset` ended a line that held a value. */
  lineEnd? (offset: number): void
  /** Invalid input (`limit`: a safety limit). Must throw. */
  error (reason: string, offset: number, line: number, column: number, limit: boolean): never
}

const enum S {
  Value, ArrFirst, ObjFirst, ObjKey, Colon, After, Str, StrEsc, StrU,
  NumMinus, NumZero, NumInt, NumDot, NumFrac, NumE, NumESign, NumExp, Lit, Done, LineStart,
}

const OPEN_ARRAY = 1
const OPEN_OBJECT = 2

const LITERALS = ['true', 'false', 'null']

/** Whether only white space with a line feed in it comes before text[i] in this piece. */
function onNewLine (text: string, i: number): boolean {
  for (let k = i - 1; k >= 0; k--) {
    const c = text.charCodeAt(k)
    if (c === 10) return true
    if (c !== 32 && c !== 9 && c !== 13) return false
  }
  return false
}

export class JsonScanner {
  private state: S
  private readonly stack = new Uint8Array(MAX_DEPTH + 1)
  private depth = 0
  private isKey = false
  private keyStartOffset = 0
  private uLeft = 0
  private lit = ''
  private litPos = 0
  /** 1-based line of the scan position and the offset where that line starts. */
  line = 1
  lineStart = 0
  /** Lines mode: whether the current line has held a value. */
  private lineHasValue = false

  constructor (private readonly sink: ScanSink, private readonly lines = false) {
    this.state = lines ? S.LineStart : S.Value
  }

  /** Scans `text[from, to)`; `base` is the absolute offset of `text[0]`. */
  scan (text: string, from: number, to: number, base: number): void {
    const sink = this.sink
    const stack = this.stack
    let state = this.state
    let depth = this.depth
    let i = from
    try {
      while (i < to) {
        const c = text.charCodeAt(i)
        switch (state) {
          case S.Str: {
            // fast path: plain characters
            let j = i
            let d = c
            while (d !== 34 && d !== 92 && d >= 0x20) {
              if (++j === to) break
              d = text.charCodeAt(j)
            }
            if (j === to) { i = j; continue }
            i = j
            if (d === 34) {
              i++
              if (this.isKey) {
                if (depth <= sink.watch) sink.keyEnd(depth, this.keyStartOffset, base + i)
                state = S.Colon
              } else {
                state = depth === 0 ? S.Done : S.After
              }
            } else if (d === 92) {
              i++
              state = S.StrEsc
            } else {
              this.fail(d === 10 || d === 13 ? 'line break in string' : 'control character in string', base + i)
            }
            continue
          }
          case S.StrEsc:
            if (c === 34 || c === 92 || c === 47 || c === 98 || c === 102 || c === 110 || c === 114 || c === 116) {
              state = S.Str
            } else if (c === 117) {
              state = S.StrU
              this.uLeft = 4
            } else {
              this.fail('invalid escape in string', base + i)
            }
            i++
            continue
          case S.StrU:
            if ((c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)) {
              if (--this.uLeft === 0) state = S.Str
              i++
              continue
            }
            this.fail('invalid \\u escape in string', base + i)
            break
          case S.NumMinus:
            if (c === 48) { state = S.NumZero; i++; continue }
            if (c >= 49 && c <= 57) { state = S.NumInt; i++; continue }
            this.fail('invalid number', base + i)
            break
          case S.NumZero:
            if (c === 46) { state = S.NumDot; i++; continue }
            if (c === 101 || c === 69) { state = S.NumE; i++; continue }
            if (c >= 48 && c <= 57) this.fail('leading zero in number', base + i)
            state = depth === 0 ? S.Done : S.After
            continue
          case S.NumInt:
            while (i < to) {
              const d = text.charCodeAt(i)
              if (d < 48 || d > 57) break
              i++
            }
            if (i === to) continue
            {
              const d = text.charCodeAt(i)
              if (d === 46) { state = S.NumDot; i++; continue }
              if (d === 101 || d === 69) { state = S.NumE; i++; continue }
            }
            state = depth === 0 ? S.Done : S.After
            continue
          case S.NumDot:
            if (c >= 48 && c <= 57) { state = S.NumFrac; i++; continue }
            this.fail('invalid number', base + i)
            break
          case S.NumFrac:
            if (c >= 48 && c <= 57) { i++; continue }
            if (c === 101 || c === 69) { state = S.NumE; i++; continue }
            state = depth === 0 ? S.Done : S.After
            continue
          case S.NumE:
            if (c === 43 || c === 45) { state = S.NumESign; i++; continue }
            if (c >= 48 && c <= 57) { state = S.NumExp; i++; continue }
            this.fail('invalid number', base + i)
            break
          case S.NumESign:
            if (c >= 48 && c <= 57) { state = S.NumExp; i++; continue }
            this.fail('invalid number', base + i)
            break
          case S.NumExp:
            if (c >= 48 && c <= 57) { i++; continue }
            state = depth === 0 ? S.Done : S.After
            continue
          case S.Lit:
            if (c !== this.lit.charCodeAt(this.litPos)) this.fail('invalid literal', base + i)
            i++
            if (++this.litPos === this.lit.length) state = depth === 0 ? S.Done : S.After
            continue
          default:
            break
        }
        // structural states: whitespace first; a BOM that starts the document is white space
        // too (RFC 8259 lets a parser ignore it; text given as a string keeps it as a character)
        if (c === 32 || c === 9 || c === 13 || (c === 0xFEFF && base + i === 0)) { i++; continue }
        if (c === 10) {
          if (this.lines) {
            if (state === S.Done) {
              sink.lineEnd?.(base + i)
              state = S.LineStart
              this.lineHasValue = false
            } else if (state !== S.LineStart) {
              this.fail('line ends inside a JSON value', base + i)
            }
          }
          i++
          this.line++
          this.lineStart = base + i
          continue
        }
        switch (state) {
          case S.LineStart:
          case S.Value:
          case S.ArrFirst: {
            if (c === 93 && state === S.ArrFirst) {
              depth--
              i++
              if (depth <= sink.watch) sink.containerEnd(depth, base + i)
              state = depth === 0 ? S.Done : S.After
              continue
            }
            if (state === S.LineStart) this.lineHasValue = true
            if (depth <= sink.watch) sink.valueStart(depth, base + i, c)
            if (c === 123 || c === 91) {
              if (depth === MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`, base + i, true)
              stack[depth++] = c === 123 ? OPEN_OBJECT : OPEN_ARRAY
              state = c === 123 ? S.ObjFirst : S.ArrFirst
            } else if (c === 34) {
              this.isKey = false
              state = S.Str
            } else if (c === 45) {
              state = S.NumMinus
            } else if (c === 48) {
              state = S.NumZero
            } else if (c >= 49 && c <= 57) {
              state = S.NumInt
            } else if (c === 116 || c === 102 || c === 110) {
              this.lit = LITERALS[c === 116 ? 0 : c === 102 ? 1 : 2]!
              this.litPos = 1
              state = S.Lit
            } else {
              this.fail(c === 93 || c === 125 || c === 44 ? 'expected a value' : 'unexpected character', base + i)
            }
            i++
            continue
          }
          case S.ObjFirst:
          case S.ObjKey:
            if (c === 34) {
              this.keyStartOffset = base + i
              if (depth <= sink.watch) sink.keyStart(depth, base + i)
              this.isKey = true
              state = S.Str
              i++
              continue
            }
            if (c === 125 && state === S.ObjFirst) {
              depth--
              i++
              if (depth <= sink.watch) sink.containerEnd(depth, base + i)
              state = depth === 0 ? S.Done : S.After
              continue
            }
            this.fail('expected a string key', base + i)
            break
          case S.Colon:
            if (c === 58) { state = S.Value; i++; continue }
            this.fail("expected ':' after key", base + i)
            break
          case S.After: {
            const top = stack[depth - 1]
            if (c === 44) {
              state = top === OPEN_ARRAY ? S.Value : S.ObjKey
              i++
              continue
            }
            if ((c === 93 && top === OPEN_ARRAY) || (c === 125 && top === OPEN_OBJECT)) {
              depth--
              i++
              if (depth <= sink.watch) sink.containerEnd(depth, base + i)
              state = depth === 0 ? S.Done : S.After
              continue
            }
            this.fail(top === OPEN_ARRAY ? "expected ',' or ']'" : "expected ',' or '}'", base + i)
            break
          }
          case S.Done:
            // Another object or array on a line after the first: JSON Lines, named or read as JSON.
            this.fail(this.lines ? 'more than one JSON value on a line' : (c === 123 || c === 91) && onNewLine(text, i) ? 'another JSON value after the first (for JSON Lines, one value a line, give input_format jsonl)' : 'unexpected data after the JSON value', base + i)
            break
          default:
            this.fail('unexpected character', base + i)
        }
      }
    } finally {
      this.state = state
      this.depth = depth
    }
  }

  /** No more input: throws unless the input held exactly one complete value (lines: any number). */
  finish (offset: number): void {
    const s = this.state
    if (s === S.Done || (this.lines && s === S.LineStart)) return
    if (this.depth === 0 && (s === S.NumZero || s === S.NumInt || s === S.NumFrac || s === S.NumExp)) {
      this.state = S.Done
      return
    }
    this.fail(s === S.Value && this.depth === 0 ? 'no JSON value' : 'unexpected end of input', offset)
  }

  /** Whether the current line (lines mode) has held a value. */
  get lineOpen (): boolean {
    return this.lineHasValue
  }

  private fail (reason: string, offset: number, limit = false): never {
    return this.sink.error(reason, offset, this.line, offset - this.lineStart + 1, limit)
  }
}
