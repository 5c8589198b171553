/**
 * The hot loop of the approx tokenizer: one pass over UTF-16 code units, two table look-ups a
 * unit, no allocation, no regular expression; and a tally that counts a text part by part.
 */
import { endianness } from 'node:os'
import { CLASS, NC, NEXT, NS, REPEATS, repeatCost } from './model.js'
import { COSTS, SCALE } from './weights.js'

/** COST[state * NC + cls], integers in 1/SCALE tokens. */
export const COST = (() => {
  if (COSTS.length !== NS || COSTS.some((row) => row.length !== NC)) throw new Error('approx: weights.ts does not match model.ts')
  return Uint16Array.from(COSTS.flat())
})()

/** PACK[row + cls] = cost << 11 | next row, where a row is state * NC. */
const PACK = new Int32Array(NS * NC)
for (let k = 0; k < NS * NC; k++) PACK[k] = (COST[k]! << 11) | (NEXT[k]! * NC)
if (NS * NC > 2048 || NC > 127 || Math.max(...COST) >= 1 << 20) throw new Error('approx: tables too large to pack')
/** The class of each code unit, plus 128 when a repeat of it reads as RP. */
const UNIT = new Uint8Array(0x10000)
/**
 * What a code unit read as a repeat of itself costs more (or less) than read plainly in the
 * state its class leads to, where a repeat is read (model.ts, repeatCost). The loops add it to
 * every repeat, also of a reading started elsewhere (the second half, read from START):
 * startDifference then takes it out as it corrects that reading.
 */
const REPEAT_DELTA = new Int16Array(0x10000)
for (let u = 0; u < 0x10000; u++) {
  const cls = CLASS[u]!
  UNIT[u] = cls | (REPEATS[cls]! << 7)
  if (REPEATS[cls] !== 1) continue
  const delta = repeatCost(COST, u) - COST[NEXT[cls]! * NC + cls]!
  if (delta < -0x8000 || delta > 0x7FFF) throw new Error('approx: a repeat cost does not fit 16 bits')
  REPEAT_DELTA[u] = delta
}

/** Where the last `scan` ended: the state row and the last code unit. */
let endRow = 0
let endPrev = -1

/** Code units read a round: the copy below holds this many. */
const BLOCK = 16 * 1024
/** Texts shorter than this are copied code unit by code unit; a native call costs more there. */
const MIN_NATIVE = 24
/**
 * Where a text's UTF-16 code units are copied to be read (ucs2Write, one native call a block):
 * indexing a typed array costs less than charCodeAt on the sliced strings that records and
 * blocks are (V8 unwraps the slice at every call): 230 -> 155 ms for 64 MB of log in 200-unit
 * parts, 28 -> 21 ms for 16 MB of markdown.
 */
const raw = Buffer.allocUnsafeSlow(BLOCK * 2)
/** The bytes written as UTF-16LE read back as code units only on a little-endian machine. */
const LITTLE_ENDIAN = endianness() === 'LE'
const units = new Uint16Array(raw.buffer, raw.byteOffset, BLOCK)

/**
 * The summed transition costs of `text` from state row `row` after code unit `prev`, in
 * 1/SCALE tokens; leaves the state where it ends in endRow and endPrev.
 */
function scan (text: string, row: number, prev: number): number {
  let sum = 0
  for (let at = 0; at < text.length; at += BLOCK) {
    const n = Math.min(BLOCK, text.length - at)
    if (n < MIN_NATIVE || !LITTLE_ENDIAN) {
      for (let i = 0; i < n; i++) units[i] = text.charCodeAt(at + i)
    } else {
      raw.write(at === 0 && n === text.length ? text : text.slice(at, at + n), 0, 'utf16le')
    }
    sum += scanUnits(text, at, n, row, prev)
    row = endRow
    prev = endPrev
  }
  endRow = row
  endPrev = prev
  return sum
}

/** Units from which scanUnits reads two halves at once. */
const MIN_HALVES = 64

/**
 * scan over the first `n` code units copied to `units`, those of `text` from `at`.
 *
 * Each unit's state depends on the one before, so one reading waits on a table load per unit.
 * Two readings, one per half, interleave in one loop and run about twice as fast: the second
 * half is read from the start state (after the true last unit of the first half), then
 * corrected where the true state differs, which lasts a unit or two (see startDifference).
 */
function scanUnits (text: string, at: number, n: number, row: number, prev: number): number {
  if (n < MIN_HALVES) return scanRange(0, n, row, prev)
  const codes = units
  const unit = UNIT
  const pack = PACK
  const delta = REPEAT_DELTA
  const half = n >> 1
  let sumA = 0
  let sumB = 0
  let rowB = 0
  let prevB = codes[half - 1]!
  for (let i = 0, j = half; i < half; i++, j++) {
    const a = codes[i]!
    const xa = unit[a]!
    const ka = row + (xa & 127)
    const va = pack[ka]!
    sumA += va >> 11
    if (a === prev && xa > 127) sumA += delta[a]!
    row = va & 2047
    prev = a
    const b = codes[j]!
    const xb = unit[b]!
    const kb = rowB + (xb & 127)
    const vb = pack[kb]!
    sumB += vb >> 11
    if (b === prevB && xb > 127) sumB += delta[b]!
    rowB = vb & 2047
    prevB = b
  }
  if ((n & 1) === 1) {
    sumB += scanRange(n - 1, n, rowB, prevB)
    rowB = endRow
    prevB = endPrev
  }
  // Both readings of the second half come after the first half's last unit, now `prev`.
  const diff = startDifference(text, at + half, at + n, row, prev, prev)
  if (Number.isNaN(diff)) return sumA + scanRange(half, n, row, prev)
  endRow = rowB
  endPrev = prevB
  return sumA + sumB + diff
}

/** The plain reading of units [from, to) from state row `row` after `prev`. */
function scanRange (from: number, to: number, row: number, prev: number): number {
  const codes = units
  const unit = UNIT
  const pack = PACK
  const delta = REPEAT_DELTA
  let sum = 0
  for (let i = from; i < to; i++) {
    const a = codes[i]!
    const xa = unit[a]!
    const ka = row + (xa & 127)
    const va = pack[ka]!
    sum += va >> 11
    if (a === prev && xa > 127) sum += delta[a]!
    row = va & 2047
    prev = a
  }
  endRow = row
  endPrev = prev
  return sum
}

/** Tokens of `text` by the approx model: ceil(sum of transition costs / SCALE). */
export function countApprox (text: string): number {
  return Math.ceil(scan(text, 0, -1) / SCALE)
}

/**
 * The sums of `text` from `from` to `to` read from state row `row` after unit `prev` and from
 * the start state after `startPrev`, minus each other, over the units until both readings are
 * in the same state after the same unit; after that they read alike. NaN when they never meet
 * before `to`.
 */
function startDifference (text: string, from: number, to: number, row: number, prev: number, startPrev: number): number {
  const unit = UNIT
  const pack = PACK
  const delta = REPEAT_DELTA
  let start = 0
  let diff = 0
  for (let i = from; i < to; i++) {
    if (row === start && prev === startPrev) return diff
    const c = text.charCodeAt(i)
    const x = unit[c]!
    const k = row + (x & 127)
    const ks = start + (x & 127)
    diff += (pack[k]! >> 11) - (pack[ks]! >> 11)
    if (x > 127 && c === prev) diff += delta[c]!
    if (x > 127 && c === startPrev) diff -= delta[c]!
    row = pack[k]! & 2047
    start = pack[ks]! & 2047
    prev = startPrev = c
  }
  return row === start && prev === startPrev ? diff : Number.NaN
}

/**
 * The count of a text given in consecutive parts, each part scanned once: the model reads left
 * to right with a small state, so carrying the state across parts gives exactly
 * countApprox(all parts joined).
 */
export class ApproxTally {
  private row = 0
  private prev = -1
  private sum = 0
  private readonly saved = { row: 0, prev: -1, sum: 0 }
  /** The part added last, its sum from the saved state, and the state after it. */
  private last = ''
  private lastSum = 0
  private lastRow = 0
  private lastPrev = -1

  add (text: string): number {
    this.last = text
    const saved = this.saved
    saved.row = this.row
    saved.prev = this.prev
    saved.sum = this.sum
    this.lastSum = scan(text, this.row, this.prev)
    this.sum += this.lastSum
    this.row = this.lastRow = endRow
    this.prev = this.lastPrev = endPrev
    return Math.ceil(this.sum / SCALE)
  }

  undo (): number {
    this.row = this.saved.row
    this.prev = this.saved.prev
    this.sum = this.saved.sum
    return Math.ceil(this.sum / SCALE)
  }

  /**
   * The last part alone, as if read from the start state. Both readings of it meet in the same
   * state within a unit or two (the state is mostly the class of the last unit), so only
   * those first units are read again, not the whole part (a record as long as the budget).
   */
  restart (): number {
    const diff = startDifference(this.last, 0, this.last.length, this.saved.row, this.saved.prev, -1)
    if (Number.isNaN(diff)) {
      this.row = 0
      this.prev = -1
      this.sum = 0
      return this.add(this.last)
    }
    this.saved.row = 0
    this.saved.prev = -1
    this.saved.sum = 0
    this.lastSum -= diff
    this.sum = this.lastSum
    this.row = this.lastRow
    this.prev = this.lastPrev
    return Math.ceil(this.sum / SCALE)
  }
}

export { SCALE }
