import t from 'tap'
import fc from 'fast-check'
import * as o200k from 'gpt-tokenizer/encoding/o200k_base'
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base'
import approx from '../../../plugins/tokenizers/approx/index.js'
import { ApproxTally, countApprox, COST, SCALE } from '../../../plugins/tokenizers/approx/count.js'
import { C, CLASS, NC, NEXT, NS, REPEATS, RUN_FLOOR, S, repeatCost, startExcess } from '../../../plugins/tokenizers/approx/model.js'
import { FORMATS, cutPieces, formatTexts, rng } from '../../../bench/lib/token-samples.js'
import { randomBytes } from '../../../bench/lib/prng.js'
import { corpusMissing } from '../../helpers/corpus.js'

const AS_TEXT = { disallowedSpecial: new Set<string>() }
const exact = (s: string): number => Math.max(o200k.countTokens(s, AS_TEXT), cl100k.countTokens(s, AS_TEXT))

const tokenizer = await approx.load()
const count = (s: string): number => tokenizer.count(s)

t.test('plugin and tokenizer shape', async (t) => {
  t.equal(approx.kind, 'tokenizer')
  t.equal(approx.name, 'approx')
  t.equal(approx.docsplit, '^1')
  t.equal(approx.extra, undefined, 'no dependency')
  t.equal(tokenizer.name, 'approx')
  t.equal(tokenizer.cheap, true)
  t.equal(await approx.available?.(), true)
})

t.test('empty string, determinism, small counts', async (t) => {
  t.equal(count(''), 0)
  const s = 'The quick brown fox 🦊 jumps over 13 lazy dogs. 日本語のテキスト。\n\tfunction f(x) { return x ** 2 }'
  t.equal(count(s), count(s))
  t.equal(count(s), countApprox(s))
  t.ok(count('a') >= 1)
  t.ok(count(' ') >= 1)
  t.ok(count('hello world') >= exact('hello world'))
})

t.test('letters come from the generated table, which this Node\'s Unicode data agrees with', async (t) => {
  // The table fixes the classes whatever Node runs (counts must not change with its Unicode
  // version); a later Unicode may add a few letters, never many.
  const letter = /^[\p{L}\p{M}]$/u
  const letterClasses = new Set<number>([C.LX, C.L2, C.U1L, C.U2L, C.U3L, C.MK])
  let differ = 0
  for (let c = 0x80; c < 0xD800; c++) {
    if (CLASS[c] === C.WS) continue
    if (letter.test(String.fromCharCode(c)) !== letterClasses.has(CLASS[c]!)) differ++
  }
  t.ok(differ <= 200, `${differ} code units classed otherwise than this Node's Unicode ${process.versions.unicode ?? ''} says`)
  t.equal(CLASS[0xE9], C.LX, 'é')
  t.equal(CLASS[0x416], C.L2, 'Ж')
  t.ok(letterClasses.has(CLASS[0x65E5]!), '日')
  t.notOk(letterClasses.has(CLASS[0x2192]!), '→')
  t.equal(CLASS[0x301], C.MK, 'a combining acute accent')
})

t.test('at least the o200k and cl100k counts on decomposed (NFD) text: a combining mark is about a token', async (t) => {
  // Composed, these cost a few tokens a word; decomposed (macOS file names, some exports) each
  // mark is a token or more, and approx read them as part of the word: a tenth of the count.
  const texts = [
    'Le café décoré était fermé. Où est la bibliothèque ? Ça coûte très cher, n’est-ce pas ?',
    'Tiếng Việt có nhiều dấu thanh và dấu phụ: người, được, những, trường học, điện thoại.',
    'Übermäßig große Straßenschäden; Österreichs Bürger wählen. Ångström, Škoda, Øresund, naïve.',
    'Ру́сский язы́к: ударе́ние ста́вится над гла́сной.',
    'é'.repeat(100),
  ]
  for (const text of texts) {
    const nfd = text.normalize('NFD')
    for (let len = 8; len <= nfd.length; len *= 2) {
      for (let at = 0; at + len <= nfd.length; at += len) {
        const piece = nfd.slice(at, at + len)
        if (count(piece) < exact(piece)) t.fail(`${JSON.stringify(piece)}: ${count(piece)} < ${exact(piece)}`)
      }
    }
    t.ok(count(nfd) >= exact(nfd), `${JSON.stringify(text.slice(0, 24))}: ${count(nfd)} >= ${exact(nfd)} (composed: ${count(text)} >= ${exact(text)})`)
  }
})

t.test('one code point costs 1 to 4 tokens (every code point)', async (t) => {
  let worst = 0
  let least = Infinity
  for (let cp = 0; cp <= 0x10FFFF; cp++) {
    const n = count(String.fromCodePoint(cp))
    if (n > worst) worst = n
    if (n < least) least = n
  }
  t.equal(least, 1)
  t.ok(worst <= 4, `worst ${worst}`)
  // lone surrogates too (JS strings can hold them)
  t.ok(count('\uD800') <= 4 && count('\uDC00') <= 4)
})

t.test('subadditive by construction: no state makes a continuation dearer than START', async (t) => {
  t.equal(COST.length, NS * NC)
  t.equal(startExcess(COST), 0)
  // and the check itself can fail: a state that charges more than START breaks it
  const broken = Uint16Array.from(COST)
  broken[S.SP * NC + C.LO] = broken[S.START * NC + C.LO]! + SCALE
  t.ok(startExcess(broken) > 0)
})

/** The model read plainly, one code unit at a time: what the unrolled, packed loop must equal. */
function reference (text: string): number {
  let sum = 0
  let state = 0
  let prev = -1
  for (let i = 0; i < text.length; i++) {
    const cu = text.charCodeAt(i)
    const cls = CLASS[cu]!
    sum += cu === prev && REPEATS[cls] === 1 ? repeatCost(COST, cu) : COST[state * NC + cls]!
    state = NEXT[state * NC + cls]!
    prev = cu
  }
  return Math.ceil(sum / SCALE)
}

const pools = {
  ascii: 'abcxyzABCXYZ',
  digits: '0123456789',
  space: ' \t\n\r\u00A0\u3000',
  punct: '.,;:!?"\'`()[]{}<>-_=+*/\\|@#$%^&~',
  latin: 'éèàüößçñøÅÉ',
  greekCyrillic: 'αβγΩжщыЯ',
  cjk: '日本語中文字漢한국어ひらがなカタカナ。、「」',
  other: 'नमस्तेสวัสดีሰላም→═…—“”',
  emoji: ['🎉', '🦊', '👨‍👩‍👧', '𝔘', '🇫🇷', '\uD83D', '\uDE00'],
}
const unit = fc.oneof(
  ...Object.values(pools).map((p) => fc.constantFrom(...(typeof p === 'string' ? [...p] : p))),
  fc.constantFrom('    ', '\n\n', '----', '****', '123456', 'the', ' word', 'camelCase', 'HTTP', 'snake_case', 'FST_ERR_NOT_FN', 'kebab-case', '__', '//', 'a/b/c'),
)
const text = fc.string({ unit, maxLength: 60 })

t.test('subadditive: count(a + b) <= count(a) + count(b) (property)', async (t) => {
  fc.assert(fc.property(text, text, (a, b) => count(a + b) <= count(a) + count(b)), { numRuns: 2000 })
  // any cut of any string, even inside a surrogate pair
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.nat(), (s, at) => {
    const i = s.length === 0 ? 0 : at % (s.length + 1)
    return count(s) <= count(s.slice(0, i)) + count(s.slice(i))
  }), { numRuns: 2000 })
  // a sum of many parts bounds the whole, as packers use it
  fc.assert(fc.property(fc.array(text, { maxLength: 12 }), (parts) =>
    count(parts.join('')) <= parts.reduce((sum, p) => sum + count(p), 0)), { numRuns: 500 })
  t.pass('properties hold')
})

t.test('tally: a part added, taken back and restarted counts as if alone (property)', async (t) => {
  const parts = fc.array(fc.oneof(text, fc.string({ unit: 'binary', maxLength: 40 })), { minLength: 1, maxLength: 8 })
  fc.assert(fc.property(parts, text, (ps, next) => {
    const tally = new ApproxTally()
    for (const p of ps) tally.add(p)
    const last = ps[ps.length - 1]!
    tally.undo()
    return tally.restart() === countApprox(last) && tally.add(next) === countApprox(last + next)
  }), { numRuns: 3000 })
  // repeats across the join: the repeat rule reads the unit before the part
  for (const [a, b] of [['--', '--x'], ['x', '****'], ['123', '456 7'], ['a\n', '\n\nb']]) {
    const tally = new ApproxTally()
    tally.add(a); tally.add(b); tally.undo()
    t.equal(tally.restart(), countApprox(b), JSON.stringify([a, b]))
  }
})

t.test('the counting loop equals the plain reading of the model', async (t) => {
  fc.assert(fc.property(text, (s) => countApprox(s) === reference(s)), { numRuns: 1000 })
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => countApprox(s) === reference(s)), { numRuns: 1000 })
  for (const s of ['', 'a', 'aa', 'aaa', '--', '---', 'x--', 'x---', '  ', ' \n', '1234', '🎉🎉']) t.equal(countApprox(s), reference(s), JSON.stringify(s))
  // Long texts are read in two halves at once, the second from the start state and then
  // corrected: in a run of digits the two readings stay a phase apart to the end, in a run of
  // capitals or letters they meet late, and a repeat may fall on the first unit of the half.
  for (const n of [63, 64, 65, 100, 101, 1000]) {
    for (const [name, s] of [['digits', '7'.repeat(n)], ['x + digits', 'x' + '1'.repeat(n)], ['capitals', 'A'.repeat(n)],
      ['letters', 'ab '.repeat(n >> 2) + 'q'.repeat(n)], ['dashes', '-'.repeat(n)], ['digits + word', '12'.repeat(n >> 1) + ' word']] as const) {
      t.equal(countApprox(s), reference(s), `${name}, ${s.length} units`)
    }
  }
})

t.test('text copied out in blocks counts as read by code unit (property)', async (t) => {
  // Long texts, mostly ASCII: the native copy, blocks of 16 K code units, a non-ASCII character in some
  // block, and slices of a larger string (what records and blocks are).
  const asciiUnit = fc.oneof(
    { weight: 30, arbitrary: fc.constantFrom(...[...pools.ascii + pools.digits + pools.punct + ' \n\t'], '----', '    ', 'word ') },
    { weight: 1, arbitrary: fc.constantFrom(...[...pools.latin + pools.cjk], ...pools.emoji) },
  )
  const long = fc.string({ unit: asciiUnit, minLength: 24, maxLength: 400 })
  fc.assert(fc.property(long, fc.nat(30), fc.nat(60), (s, from, to) => {
    const sliced = ('#'.repeat(40) + s + '#'.repeat(40)).slice(40 + Math.min(from, s.length), 40 + s.length - Math.min(to, s.length))
    return countApprox(s) === reference(s) && countApprox(sliced) === reference(sliced)
  }), { numRuns: 3000 })
  const rand = rng(7)
  const alphabet = 'ab  --==.\n9Z"(é日🎉'
  for (const length of [16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 50_000]) {
    for (const nonAsciiEvery of [0, 7_000, 20_000]) {
      let s = ''
      for (let i = 0; i < length; i++) {
        s += nonAsciiEvery > 0 && i % nonAsciiEvery === nonAsciiEvery - 1 ? '日' : alphabet[Math.floor(rand() * 10)]!
      }
      t.equal(countApprox(s), reference(s), `${length} units, non-ASCII every ${nonAsciiEvery}`)
    }
  }
  // texts of many scripts and short ones (copied by code unit) in one tally: same counts
  const tally = new ApproxTally()
  const parts = ['日本語のテキスト、とても長い文章です。'.repeat(3), ...Array.from({ length: 40 }, (_, i) => `line ${i}: -- the quick brown fox ==\n`)]
  let joined = ''
  for (const p of parts) {
    joined += p
    t.equal(tally.add(p), reference(joined))
  }
})

t.test('exhaustive short strings over one character per class', async (t) => {
  const reps = ['a', 'Q', '7', ' ', '\n', '\t', '"', '(', '.', '-', '_', '/', '=', 'é', 'ж', '\u00B0', '日', '한', '、', '→', 'ሰ', '🎉', '\uDE00']
  // every string of up to 3 of these characters (23 + 529 + 12167), as a and as b
  const strings = ['']
  let level = ['']
  for (let len = 1; len <= 3; len++) {
    level = level.flatMap((s) => reps.map((r) => s + r))
    strings.push(...level)
  }
  // first parts: up to 2 characters, and long runs that reach the deeper states
  const firsts = [...strings.filter((s) => s.length <= 2), 'abcdefghij', 'xyzAbcdefgh', 'ABCDEFGH', 'AB', 'ABC', 'x_', 'x-', 'x/', '__', '--', '//', '1234567', '12', '        ', '\n\n\n', '-----', '日本語日本語', '🎉🎉🎉', 'é'.repeat(9)]
  let checked = 0
  let failures = 0
  for (const a of firsts) {
    for (const b of strings) {
      if (count(a + b) > count(a) + count(b) && failures++ < 5) t.fail(`not subadditive: ${JSON.stringify(a)} + ${JSON.stringify(b)}`)
      checked++
    }
  }
  t.equal(failures, 0, `${checked} pairs`)
})

// Lines of the sample texts shuffled into new documents (generated text of real shape).
t.test('at least the o200k and cl100k counts on generated documents', { skip: corpusMissing }, async (t) => {
  const lines = FORMATS.flatMap((f) => formatTexts(f).flatMap((s) => s.slice(0, 50_000).split('\n')))
  let ok = 0
  let runs = 0
  fc.assert(fc.property(fc.array(fc.nat({ max: lines.length - 1 }), { minLength: 5, maxLength: 60 }), (picks) => {
    const doc = picks.map((i) => lines[i]).join('\n')
    if (exact(doc) < 50) return true
    runs++
    if (count(doc) >= exact(doc)) ok++
    return true
  }), { numRuns: 300, seed: 1 })
  t.ok(runs > 100)
  t.ok(ok / runs >= 0.99, `${ok}/${runs} documents counted at least the exact count`)
})

t.test('at least the o200k and cl100k counts on runs of one character (a NUL hole, separators, `&&&&`)', async (t) => {
  const units: number[] = []
  for (let u = 0; u < 0x10000; u++) if (RUN_FLOOR[u]! > 0) units.push(u)
  t.ok(units.length > 100, `${units.length} code units repeat as runs`)
  const under: string[] = []
  for (const u of units) {
    const ch = String.fromCharCode(u)
    // Short runs alone, where merges are irregular (15 `~` are 4 tokens, 16 are 2), longer ones
    // sampled, some after a word and a space (a run that a pre-tokenizer may join to what is
    // before); bench/lib/gen-approx-runs.ts reads every length to 300. The encodings take
    // longer than linear time on long runs.
    for (let n = 2; n <= 300; n += n < 64 ? 1 : 17) {
      const run = ch.repeat(n)
      if (countApprox(run) < exact(run)) under.push(`${JSON.stringify(ch)} x${n}: ${countApprox(run)} < ${exact(run)}`)
      const after = `word ${run}`
      if (n % 8 === 0 && countApprox(after) < exact(after)) under.push(`"word " + ${JSON.stringify(ch)} x${n}: ${countApprox(after)} < ${exact(after)}`)
    }
  }
  t.same(under, [], 'no run counts under the real count')
  // Cases that counted as one token before the floors, at 64 K.
  for (const [ch, real] of [['\0', 65536], ['&', 32768], ['=', 1024]] as const) t.ok(countApprox(ch.repeat(65536)) >= real, `${JSON.stringify(ch)} x 65536`)
})

// Needs no corpus: encoded payloads as documents carry them, from seeded random bytes. Word
// states alone read base64 at about 0.8 of the real count, so chunks of it ran a fifth over.
t.test('at least the o200k and cl100k counts on base64, base64url and hex data', async (t) => {
  const random = rng(7)
  const bytes = (n: number): Buffer => randomBytes(random, n)
  for (let i = 0; i < 20; i++) {
    const n = 300 + Math.floor(random() * 3000)
    const texts = {
      base64: bytes(n).toString('base64'),
      pem: `-----BEGIN CERTIFICATE-----\n${bytes(n).toString('base64').match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`,
      'data URI': `![plot](data:image/png;base64,${bytes(n).toString('base64')})`,
      base64url: bytes(n).toString('base64url'),
      hex: bytes(n).toString('hex'),
    }
    for (const [name, text] of Object.entries(texts)) {
      const a = count(text)
      const e = exact(text)
      if (a < e) t.fail(`${name} of ${n} bytes: approx ${a} < exact ${e}`)
      t.ok(a <= e * 1.3, `${name} of ${n} bytes: approx ${a} within 30% of exact ${e}`)
    }
  }
})

t.test('at least the o200k and cl100k counts on 99% of corpus pieces', { skip: corpusMissing }, async (t) => {
  const random = rng(2024)
  let all = 0
  let allOk = 0
  for (const format of FORMATS) {
    const texts = formatTexts(format)
    if (texts.length === 0) continue
    const pieces = cutPieces(texts, random, (s) => { const h = s.slice(0, 20000); return h.length / Math.max(1, o200k.countTokens(h, AS_TEXT)) })
    // a fixed sample of up to 80 pieces a format keeps the test lean
    const sample = pieces.filter((_, i) => i % Math.max(1, Math.floor(pieces.length / 80)) === 0).slice(0, 80)
    let n = 0
    let ok = 0
    let over = 0
    for (const p of sample) {
      const e = exact(p)
      if (e < 50 || e > 2000) continue
      const a = count(p)
      n++
      if (a >= e) ok++
      over += a / e - 1
    }
    all += n
    allOk += ok
    t.comment(`${format}: ${n} pieces, ${(100 * ok / n).toFixed(1)}% >= max(o200k, cl100k), mean over-count ${(100 * over / n).toFixed(1)}%`)
    if (format !== 'i18n') t.ok(ok / n >= 0.97, `${format}: ${ok}/${n} pieces at least the exact count`)
    t.ok(over / n <= 0.3, `${format}: mean over-count ${(100 * over / n).toFixed(1)}% is sane`)
  }
  t.ok(allOk / all >= 0.99, `${allOk}/${all} pieces at least the exact count`)
})
