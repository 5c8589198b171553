/**
 * The structure of the approx tokenizer: a character class table and a small state machine that
 * follows the o200k_base / cl100k_base pre-tokenizers (words with one leading space or
 * punctuation character, camelCase parts, numbers in groups of three digits, punctuation runs,
 * newline and space runs). Each transition has an integer cost in 1/SCALE tokens (weights.ts),
 * and count(text) = ceil(sum of the costs / SCALE): integer arithmetic, so the sum is exact.
 *
 * Subadditivity, count(a + b) <= count(a) + count(b): the sum over a + b is the sum over a plus
 * the sum over b run from a's end state instead of START. So it holds when no state makes any
 * string dearer than START does, G(s, b) <= G(START, b); ceil(x + y) <= ceil(x) + ceil(y) then
 * finishes. `excess()` computes max over b of G(p, b) - G(q, b) for every pair of states, a
 * finite fixpoint on the product automaton; the fit raises START costs until it is 0 for q =
 * START, and the tests check it again.
 */
import { RUN_FLOORS } from './runs.js'
import { LETTERS_BASE64, TABLE_BASE64, TABLE_FIRST } from './table.js'

/** Character classes (UTF-16 code units). */
export const C = {
  SP: 0, // ' '
  NL: 1, // '\n', '\r'
  WS: 2, // tab, vertical tab, form feed, NBSP, Unicode spaces
  LO: 3, // a-z
  UP: 4, // A-Z
  DG: 5, // 0-9
  PQ: 6, // quotes: " ' `
  PB: 7, // brackets: ( ) [ ] { } < >
  PS: 8, // separators: . , : ;
  PO: 9, // other ASCII punctuation and control characters
  LX: 10, // Latin-1 and Latin Extended letters (2 UTF-8 bytes)
  L2: 11, // other letters and marks of 2 UTF-8 bytes: Greek, Cyrillic, Hebrew, Arabic, ...
  S2: 12, // other characters of 2 UTF-8 bytes: Latin-1 symbols, ...
  // Characters of 3 UTF-8 bytes, by their token cost alone in o200k/cl100k (table.ts) and
  // whether they are letters (which join words) or not.
  U1L: 13,
  U2L: 14,
  U3L: 15,
  U1P: 16,
  U2P: 17,
  U3P: 18,
  HI: 19, // high surrogate (first half of a character of 4 UTF-8 bytes: emoji, ...)
  LS: 20, // low surrogate
  // Punctuation that joins words, split out of PO: the pre-tokenizers start a piece with it and
  // go on with the letters after it (`_records`, `-disable`, `/docs`), so that after a letter
  // it costs little of its own, unlike before a digit or a space.
  US: 21, // '_' (snake_case, SCREAMING_CASE)
  HY: 22, // '-' (kebab-case, hyphenated words; dates and options)
  SL: 23, // '/' (paths, URLs, comments)
  // Not in CLASS: a punctuation character equal to the one before it (----, ****, ====) costs
  // COST[state * NC + RP] or its RUN_FLOOR, the larger, and moves to the state of its own class.
  RP: 24,
  // A combining mark (U+0300-U+036F): decomposed text (NFD: `e` + U+0301 for `é`; Vietnamese
  // stacks two on a vowel) spends a token or two on each (cl100k nearly two on a stacked one),
  // and the letters after it start a new token. Not fitted (4 corpus files hold a few marks,
  // too few to fit on): two tokens from every state, so the machine stays subadditive; after
  // it a Latin letter reads as after a Latin-1 letter, and in other scripts (a Cyrillic stress
  // mark) the state stays.
  MK: 25,
} as const
export const NC = 26
export const CLASS_NAMES = Object.keys(C)

/** States: the class of the last character, with the digit phase and multi-space split out. */
export const S = {
  START: 0,
  SP: 1, // one space after a non-space
  SPN: 2, // a space after a space or other whitespace
  NL: 3,
  WS: 4,
  UP: 5,
  D1: 6, // the 1st, 2nd and 3rd digit of a group of three
  D2: 7,
  D3: 8,
  PQ: 9,
  PB: 10,
  PS: 11,
  PO: 12,
  LX: 13,
  L2: 14,
  S2: 15,
  U1L: 16,
  U2L: 17,
  U3L: 18,
  U1P: 19,
  U2P: 20,
  U3P: 21,
  HI: 22,
  LS: 23,
  // A lowercase letter ending an ASCII word part of 1, 2, ... 6, 7 or more letters (a capital
  // starts a new part: camelCase splits into tokens at the humps).
  LO1: 24,
  LO2: 25,
  LO3: 26,
  LO4: 27,
  LO5: 28,
  LO6: 29,
  LO7: 30,
  US: 31, // after '_'
  HY: 32, // after '-'
  SL: 33, // after '/'
  // The 2nd, 3rd and 4th or later capital of a run (UP is the first): all-caps words and
  // acronyms (ERR, SCHEMA, HTTP) are a token for several letters.
  UP2: 34,
  UP3: 35,
  UP4: 36,
  // Letters and digits that touch each other (b3DQ, 0x7f, 4xFj): base64, hex and other encoded
  // data, where the encodings spend a token on every 1-2 letters, not on a word. ND1-3: a digit
  // group after a letter (or after such a group); NU, NV, NL: a capital, a capital after a
  // capital, a lowercase letter, the 1st to DATA_LETTERS-th letter after a digit. After that
  // many letters without a digit the plain states take over again: a continuation can cost more
  // after data than from START only for that many letters, which START pays once (top of this file).
  ND1: 37,
  ND2: 38,
  ND3: 39,
  NU1: 40, NU2: 41, NU3: 42,
  NV1: 43, NV2: 44, NV3: 45,
  NL1: 46, NL2: 47, NL3: 48,
} as const
export const NS = 49
/** Letters after a digit that the data states read (NU1-3, NV1-3, NL1-3). */
const DATA_LETTERS = 3
export const STATE_NAMES = Object.keys(S)

/**
 * The Combining Diacritical Marks block (class MK), which decomposed Latin, Greek and Cyrillic
 * use. The rarer blocks of 3 UTF-8 bytes (extended, supplement, for symbols) keep their classes
 * by token cost (up to 3 tokens alone), which MK's 2 would undercount.
 */
const COMBINING_MARKS = [0x0300, 0x036F] as const

function buildClassTable (): Uint8Array {
  const t = new Uint8Array(0x10000)
  const set = (from: number, to: number, cls: number): void => { t.fill(cls, from, to + 1) }
  set(0x00, 0x7F, C.PO)
  t[0x20] = C.SP
  t[0x0A] = C.NL; t[0x0D] = C.NL
  t[0x09] = C.WS; t[0x0B] = C.WS; t[0x0C] = C.WS
  set(0x61, 0x7A, C.LO)
  set(0x41, 0x5A, C.UP)
  set(0x30, 0x39, C.DG)
  for (const ch of '"\'`') t[ch.charCodeAt(0)] = C.PQ
  for (const ch of '()[]{}<>') t[ch.charCodeAt(0)] = C.PB
  for (const ch of '.,:;') t[ch.charCodeAt(0)] = C.PS
  t[0x5F] = C.US
  t[0x2D] = C.HY
  t[0x2F] = C.SL
  // Letters and marks from the generated table, not the running Node's Unicode data: the same
  // classes, so the same counts and chunks, on every Node.
  const letters = Buffer.from(LETTERS_BASE64, 'base64')
  const isLetter = (c: number): boolean => ((letters[c >> 3]! >> (c & 7)) & 1) === 1
  for (let c = 0x80; c < 0x800; c++) {
    t[c] = !isLetter(c) ? C.S2 : c <= 0x2FF ? C.LX : C.L2
  }
  const bytes = Buffer.from(TABLE_BASE64, 'base64')
  for (let c = TABLE_FIRST; c < 0x10000; c++) {
    const i = c - TABLE_FIRST
    const cost = (bytes[i >> 2]! >> ((i & 3) * 2)) & 3
    t[c] = (isLetter(c) ? C.U1L : C.U1P) + Math.max(0, Math.min(2, cost - 1))
  }
  set(COMBINING_MARKS[0], COMBINING_MARKS[1], C.MK)
  for (const c of [0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000]) t[c] = C.WS
  set(0x2000, 0x200A, C.WS)
  set(0xD800, 0xDBFF, C.HI)
  set(0xDC00, 0xDFFF, C.LS)
  return t
}

/** CLASS[code unit]: the class table (built once, about 2 ms). */
export const CLASS = buildClassTable()

/** Classes a repeated character can have (read as RP the second time). */
export const REPEATABLE: readonly number[] = [C.PQ, C.PB, C.PS, C.PO, C.U1P, C.US, C.HY, C.SL]

/** REPEATS[cls] = 1 when a character of that class read twice in a row is read as RP the second time. */
export const REPEATS = (() => {
  const t = new Uint8Array(NC)
  for (const c of REPEATABLE) t[c] = 1
  return t
})()

/**
 * RUN_FLOOR[code unit]: the least a repeat of it costs, in 1/SCALE tokens (runs.ts: what a
 * character of a long run of it costs in the real encodings); 0 for units that never repeat as
 * RP. The fitted RP cost is what short runs cost (`**`, `==`): about nothing, so without a floor
 * 65,536 NULs (a log after logrotate's copytruncate), or `&`, counted as one token.
 */
export const RUN_FLOOR = (() => {
  const t = new Uint16Array(0x10000)
  for (const [unit, cost] of RUN_FLOORS) t[unit] = cost
  return t
})()

const isDigit = (s: number): boolean => (s >= S.D1 && s <= S.D3) || (s >= S.ND1 && s <= S.ND3)
const isPlainCapital = (s: number): boolean => s === S.UP || (s >= S.UP2 && s <= S.UP4)
const isPlainLower = (s: number): boolean => s >= S.LO1 && s <= S.LO7
/** Which letter after a digit a data state is (1..DATA_LETTERS), 0 for the other states. */
const dataLetter = (s: number): number => s >= S.NU1 && s <= S.NL3 ? (s - S.NU1) % DATA_LETTERS + 1 : 0
const isCapital = (s: number): boolean => s >= S.NU1 && s <= S.NV3

/** The state after a character of class `cls` in state `state`. */
function next (state: number, cls: number): number {
  const k = dataLetter(state)
  switch (cls) {
    case C.SP: return state === S.SP || state === S.SPN || state === S.WS ? S.SPN : S.SP
    case C.DG:
      if (isPlainCapital(state) || isPlainLower(state) || k > 0) return S.ND1
      if (state === S.ND1 || state === S.ND2) return state + 1
      if (state === S.ND3) return S.ND1
      return state === S.D1 ? S.D2 : state === S.D2 ? S.D3 : S.D1
    case C.RP: return S.PO // never used: a repeat moves by its own class
    case C.MK: return isPlainLower(state) || isPlainCapital(state) || dataLetter(state) > 0 || state === S.LX ? S.LX : state
    case C.UP:
      if (isDigit(state)) return S.NU1
      if (k > 0) return k === DATA_LETTERS ? (isCapital(state) ? S.UP2 : S.UP) : (isCapital(state) ? S.NV1 : S.NU1) + k
      return state === S.UP ? S.UP2 : state === S.UP2 ? S.UP3 : state === S.UP3 || state === S.UP4 ? S.UP4 : S.UP
    case C.LO:
      if (isDigit(state)) return S.NL1
      if (k > 0) return k === DATA_LETTERS ? (isCapital(state) ? S.LO2 : S.LO3) : S.NL1 + k
      if (isPlainCapital(state)) return S.LO2
      if (isPlainLower(state)) return Math.min(S.LO7, state + 1)
      return S.LO1
    default: return S[CLASS_NAMES[cls] as keyof typeof S]
  }
}

/** NEXT[state * NC + cls]: the transition table (RP moves by the repeated character's class). */
export const NEXT = (() => {
  const t = new Uint8Array(NS * NC)
  for (let s = 0; s < NS; s++) for (let c = 0; c < NC; c++) t[s * NC + c] = next(s, c)
  // repeatCost reads a repeat in the state of its class: every state must lead there.
  for (const c of REPEATABLE) for (let s = 0; s < NS; s++) if (t[s * NC + c] !== t[c]) throw new Error('approx: a repeatable class leads to more than one state')
  return t
})()

/**
 * What `unit` costs read as a repeat of itself, given the cost table: the fitted RP cost of the
 * state its class leads to, or RUN_FLOOR when that is more. (A repeat always comes in that state:
 * a repeatable class moves to its own state from any state.)
 */
export function repeatCost (cost: ArrayLike<number>, unit: number): number {
  const cls = CLASS[unit]!
  return Math.max(cost[NEXT[cls]! * NC + C.RP]!, RUN_FLOOR[unit]!)
}

/**
 * D[p * NS + q] = max over strings b of (cost of b from state p) - (cost of b from state q), for
 * an integer cost table `cost[state * NC + cls]`; undefined when unbounded. A repeat (RP) at the
 * start of b is covered by `startExcess`. Used by the fit and the tests.
 */
export function excess (cost: ArrayLike<number>): Float64Array | undefined {
  let d = new Float64Array(NS * NS)
  for (let round = 0; round < 1000; round++) {
    const nd = new Float64Array(NS * NS)
    let changed = false
    for (let p = 0; p < NS; p++) {
      for (let q = 0; q < NS; q++) {
        let best = 0
        for (let c = 0; c < NC; c++) {
          if (c === C.RP) {
            // Both read the same repeat: each moves by the repeated class, the same state.
            const v = cost[p * NC + c]! - cost[q * NC + c]!
            if (v > best) best = v
            continue
          }
          const v = cost[p * NC + c]! - cost[q * NC + c]! + d[NEXT[p * NC + c]! * NS + NEXT[q * NC + c]!]!
          if (v > best) best = v
        }
        nd[p * NS + q] = best
        if (best !== d[p * NS + q]) changed = true
      }
    }
    d = nd
    if (!changed) return d
  }
  return undefined
}

/**
 * The largest amount by which a continuation from some state can cost more than the same text
 * from START, including a first character read as a repeat of a's last one. 0 means subadditive.
 */
export function startExcess (cost: ArrayLike<number>): number {
  const d = excess(cost)
  if (d === undefined) return Infinity
  let worst = 0
  for (let s = 0; s < NS; s++) worst = Math.max(worst, d[s * NS + S.START]!)
  // b's first character repeats a's last: the merged text reads RP where b alone reads c.
  for (const c of REPEATABLE) {
    for (let s = 0; s < NS; s++) {
      const v = cost[s * NC + C.RP]! - cost[S.START * NC + c]! // both then move to the state of c
      worst = Math.max(worst, v)
    }
  }
  // ... at least its run floor.
  for (const [unit, floor] of RUN_FLOORS) worst = Math.max(worst, floor - cost[S.START * NC + CLASS[unit]!]!)
  return worst
}
