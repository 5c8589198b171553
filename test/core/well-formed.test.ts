import t from 'tap'
import fc from 'fast-check'
import { split, splitStream, type DocsplitError } from '../../index.js'
import { WellFormedCheck } from '../../core/well-formed.js'

/** Runs the check over `pieces`: the text it lets through, and the string index of the lone surrogate it refused. */
function checked (pieces: string[]): { given: string, refusedAt: number | undefined } {
  const check = new WellFormedCheck()
  let given = ''
  for (const p of pieces) {
    const { text, error } = check.next(p)
    given += text
    if (error !== undefined) return { given, refusedAt: Number(/string index (\d+)/.exec(error.message)?.[1]) }
  }
  const { error } = check.end()
  return { given, refusedAt: error === undefined ? undefined : Number(/string index (\d+)/.exec(error.message)?.[1]) }
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
    const { given, refusedAt } = checked(pieces)
    const lone = firstLone(text)
    if (refusedAt !== lone) throw new Error(`${JSON.stringify(text)} cut at ${cuts.join(',')}: refused at ${refusedAt}`)
    // Exactly the text before it goes on, wherever the pieces were cut.
    if (given !== text.slice(0, lone)) throw new Error(`${JSON.stringify(text)} cut at ${cuts.join(',')}: gave ${JSON.stringify(given)}`)
  }), { numRuns: 2000 })
})

t.test('the chunks made before a lone surrogate do not depend on how the string input was cut', async (t) => {
  const lines = Array.from({ length: 300 }, (_, i) => `2024-01-01 00:00:${String(i % 60).padStart(2, '0')} INFO entry ${i}\n`).join('')
  const text = lines + 'bad \ud800 line\n'
  const made = async (size: number): Promise<string[]> => {
    const pieces: string[] = []
    for (let at = 0; at < text.length; at += size) pieces.push(text.slice(at, at + size))
    const out: string[] = []
    try {
      for await (const chunk of splitStream(pieces, { input_format: 'log', max_tokens: 64 })) out.push(chunk.text)
    } catch (error) {
      t.equal((error as DocsplitError).code, 'DOCSPLIT_INVALID_UTF8')
    }
    return out
  }
  const whole = await made(text.length)
  t.ok(whole.length > 10, 'the entries before it go out')
  // All but the entry being read (the last one: it might have gone on past its line).
  t.equal(whole.join(''), lines.slice(0, lines.lastIndexOf('2024-')), 'in order, from the start')
  for (const size of [1, 7, 1000, 4099]) t.same(await made(size), whole, `pieces of ${size}`)
})

t.test('invalid_bytes: replace reads each lone surrogate of string input as U+FFFD, wherever the pieces are cut', async (t) => {
  const r = await split('ok 🎉 \ud800\udc00\udc00 end\ud83d', { input_format: 'text', invalid_bytes: 'replace' })
  t.equal(r.chunks[0]!.text, 'ok 🎉 \ud800\udc00\ufffd end\ufffd', 'a pair stays a pair')
  t.same(r.document.replaced, { sequences: 2, first_byte: 12 }, 'the first: after 8 bytes and a 4-byte pair')
  t.equal(r.chunks[0]!.byte_end, Buffer.byteLength(r.chunks[0]!.text), 'each U+FFFD three bytes')
  t.same((await split('fine', { input_format: 'text', invalid_bytes: 'replace' })).document.replaced, { sequences: 0, first_byte: null })
  const surrogateHeavy = fc.array(fc.constantFrom('a', '😀', '\ud83d', '\ude00', '\n', 'é'), { maxLength: 30 }).map((a) => a.join(''))
  fc.assert(fc.property(surrogateHeavy, fc.array(fc.nat(), { maxLength: 6 }), (text, seeds) => {
    const cuts = [...new Set(seeds.map((s) => s % (text.length + 1)))].sort((a, b) => a - b)
    const check = new WellFormedCheck(true)
    let given = ''
    let at = 0
    for (const c of [...cuts, text.length]) {
      const part = check.next(text.slice(at, c))
      if (part.error !== undefined) throw part.error
      given += part.text
      at = c
    }
    given += check.end().text
    const expected = (text as unknown as { toWellFormed (): string }).toWellFormed()
    if (given !== expected) throw new Error(`${JSON.stringify(text)} cut at ${cuts.join(',')}: gave ${JSON.stringify(given)}`)
    let lone = 0
    for (let i = 0; i < text.length; i++) if (text[i] !== expected[i]) lone++
    const first = firstLone(text)
    if (check.replaced !== lone) throw new Error(`${JSON.stringify(text)}: ${check.replaced} replaced, not ${lone}`)
    const firstByte = first === undefined ? -1 : Buffer.byteLength(expected.slice(0, first))
    if (check.firstReplacedByte !== firstByte) throw new Error(`${JSON.stringify(text)} cut at ${cuts.join(',')}: first at byte ${check.firstReplacedByte}, not ${firstByte}`)
  }), { numRuns: 2000 })
})
