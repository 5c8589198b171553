import t from 'tap'
import fc from 'fast-check'
import { PositionTracker, codePoints } from '../../core/positions.js'

/** Line of the character at string offset i: 1 + the breaks before it (LF, CRLF at its LF, lone CR). */
function lineAt (text: string, i: number): number {
  let n = 1
  for (let j = 0; j < i; j++) {
    const c = text.charCodeAt(j)
    if (c === 10 || (c === 13 && text.charCodeAt(j + 1) !== 10)) n++
  }
  return n
}

t.test('line numbers count LF, CRLF and a lone CR once each, wherever chunks cut', async () => {
  fc.assert(fc.property(
    fc.array(fc.constantFrom('a', 'bc', '\n', '\r', '\r\n', 'é', '😀'), { minLength: 1, maxLength: 40 }).map((p) => p.join('')),
    fc.array(fc.nat(), { maxLength: 8 }),
    fc.nat({ max: 3 }),
    (text, rawCuts, overlap) => {
      const cuts = [...new Set(rawCuts.map((c) => c % text.length))].filter((c) => c > 0).sort((a, b) => a - b)
      const tracker = new PositionTracker((s) => Buffer.byteLength(s, 'utf8'), 0, true)
      let from = 0
      for (const to of [...cuts, text.length]) {
        const start = Math.max(0, from - overlap)
        const loc = tracker.locate(start, text.slice(start, to))!
        if (loc.line_start !== lineAt(text, start)) throw new Error(`line_start ${loc.line_start} at ${start} of ${JSON.stringify(text)}`)
        if (loc.line_end !== lineAt(text, to - 1)) throw new Error(`line_end ${loc.line_end} at ${to - 1} of ${JSON.stringify(text)}`)
        from = to
      }
      const last = text.charCodeAt(text.length - 1)
      const expected = lineAt(text, text.length) - (last === 10 || last === 13 ? 1 : 0)
      if (tracker.totals().lines !== expected) throw new Error(`lines ${tracker.totals().lines}, expected ${expected} for ${JSON.stringify(text)}`)
    }), { numRuns: 2000 })
})

t.test('codePoints counts a surrogate pair once and a lone surrogate as one, as Array.from does', async () => {
  fc.assert(fc.property(
    fc.array(fc.constantFrom('a', 'é', '😀', '\uD83D', '\uDE00', '\uDBFF\uDFFF', '\n'), { maxLength: 40 }).map((p) => p.join('')),
    (text) => codePoints(text) === Array.from(text).length && codePoints(text) === codePoints(text),
  ))
})
