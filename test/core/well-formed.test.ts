import t from 'tap'
import fc from 'fast-check'
import { split } from '../../index.js'
import { WellFormedCheck } from '../../core/well-formed.js'

/** Runs the check over `pieces`; the string index of the lone surrogate it refused, or undefined. */
function refusedAt (pieces: string[]): number | undefined {
  const check = new WellFormedCheck()
  try {
    for (const p of pieces) check.check(p)
    check.end()
    return undefined
  } catch (error) {
    return Number(/string index (\d+)/.exec((error as Error).message)?.[1])
  }
}

/** The index of the first lone surrogate, read plainly. */
function firstLone (text: string): number | undefined {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && text.charCodeAt(i + 1) >= 0xdc00 && text.charCodeAt(i + 1) <= 0xdfff) i++
    else if (c >= 0xd800 && c <= 0xdfff) return i
  }
  return undefined
}

t.test('a lone surrogate in string input is DOCSPLIT_INVALID_UTF8 with its index; pairs split across pieces are fine', async (t) => {
  await t.rejects(split('ab\ud800cd'), { code: 'DOCSPLIT_INVALID_UTF8', message: /lone surrogate at string index 2/ })
  await t.rejects(split(['a\ud83d', 'b']), { code: 'DOCSPLIT_INVALID_UTF8', message: /string index 1/ })
  await t.rejects(split('end\ud83d'), { code: 'DOCSPLIT_INVALID_UTF8', message: /string index 3/ })
  t.equal((await split(['a\ud83d', '\ude00b'])).chunks[0]!.text, 'a😀b')
  const surrogateHeavy = fc.array(fc.constantFrom('a', '😀', '\ud83d', '\ude00', '\n', 'é'), { maxLength: 30 }).map((a) => a.join(''))
  fc.assert(fc.property(surrogateHeavy, fc.array(fc.nat(), { maxLength: 6 }), (text, seeds) => {
    const cuts = [...new Set(seeds.map((s) => s % (text.length + 1)))].sort((a, b) => a - b)
    const pieces: string[] = []
    let at = 0
    for (const c of cuts) { pieces.push(text.slice(at, c)); at = c }
    pieces.push(text.slice(at))
    if (refusedAt(pieces) !== firstLone(text)) throw new Error(`${JSON.stringify(text)} cut at ${cuts.join(',')}`)
  }), { numRuns: 2000 })
})
