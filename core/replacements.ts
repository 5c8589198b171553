/**
 * Where the decoder read invalid UTF-8 as U+FFFD that stands for fewer bytes than U+FFFD's own
 * three: string offsets, ascending, and that difference (-1 or -2), so that byte offsets still
 * count the bytes as received. Typed arrays, 5 bytes an entry (binary data read as text has one
 * per byte; arrays of numbers took 40-50): offsets are kept from a base that moves on as the
 * entries before it are dropped (forget), so they fit 32 bits in a stream of any length.
 */
const FIRST_SIZE = 1024
/** Offsets from the base stay under this: past it the base moves first. */
const MAX_SPAN = 2 ** 30

export class ReplacementMap {
  private at = new Int32Array(FIRST_SIZE)
  private by = new Int8Array(FIRST_SIZE)
  /** The string offset that `at` counts from. */
  private base = 0
  /** Entries before `head` are dropped; entries end at `length`. */
  private head = 0
  private length = 0

  add (offset: number, difference: number): void {
    if (this.length === this.at.length || offset - this.base >= MAX_SPAN) this.compact(offset)
    this.at[this.length] = offset - this.base
    this.by[this.length++] = difference
  }

  /** The differences of the entries at string offsets in [from, to) added up. */
  sum (from: number, to: number): number {
    if (this.head === this.length) return 0
    const at = this.at
    const start = from - this.base
    const end = to - this.base
    let lo = this.head
    let hi = this.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (at[mid]! < start) lo = mid + 1
      else hi = mid
    }
    let sum = 0
    for (let i = lo; i < this.length && at[i]! < end; i++) sum += this.by[i]!
    return sum
  }

  /** No sum is asked again from before string offset `before`. */
  forget (before: number): void {
    const start = before - this.base
    while (this.head < this.length && this.at[this.head]! < start) this.head++
  }

  /**
   * Drops the entries before `head`, counts from the first left (or from `next`, the offset of
   * the entry to add, when none is), and grows when still half full.
   */
  private compact (next: number): void {
    const live = this.length - this.head
    const size = live * 2 > this.at.length ? this.at.length * 2 : this.at.length
    const base = live > 0 ? this.base + this.at[this.head]! : next
    const at = size === this.at.length ? this.at : new Int32Array(size)
    const by = size === this.by.length ? this.by : new Int8Array(size)
    for (let i = 0; i < live; i++) {
      at[i] = this.at[this.head + i]! + this.base - base
      by[i] = this.by[this.head + i]!
    }
    this.at = at
    this.by = by
    this.base = base
    this.head = 0
    this.length = live
  }
}
