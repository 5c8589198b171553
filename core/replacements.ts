/**
 * Where the decoder read invalid UTF-8 as U+FFFD that stands for fewer bytes than U+FFFD's own
 * three: string offsets, ascending, and that difference (-1 or -2), so that byte offsets still
 * count the bytes as received. Typed arrays, 9 bytes an entry (binary data read as text has one
 * per byte; arrays of numbers took 40-50), and the entries before the chunks that went out are
 * dropped (forget).
 */
const FIRST_SIZE = 1024

export class ReplacementMap {
  private at = new Float64Array(FIRST_SIZE)
  private by = new Int8Array(FIRST_SIZE)
  /** Entries before `head` are dropped; entries end at `length`. */
  private head = 0
  private length = 0

  add (offset: number, difference: number): void {
    if (this.length === this.at.length) this.compact()
    this.at[this.length] = offset
    this.by[this.length++] = difference
  }

  /** The differences of the entries at string offsets in [from, to) added up. */
  sum (from: number, to: number): number {
    if (this.head === this.length) return 0
    const at = this.at
    let lo = this.head
    let hi = this.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (at[mid]! < from) lo = mid + 1
      else hi = mid
    }
    let sum = 0
    for (let i = lo; i < this.length && at[i]! < to; i++) sum += this.by[i]!
    return sum
  }

  /** No sum is asked again from before string offset `before`. */
  forget (before: number): void {
    while (this.head < this.length && this.at[this.head]! < before) this.head++
  }

  /** Drops the entries before `head`; grows when still half full. */
  private compact (): void {
    const live = this.length - this.head
    const grow = live * 2 > this.at.length
    const at = grow ? new Float64Array(this.at.length * 2) : this.at
    const by = grow ? new Int8Array(this.by.length * 2) : this.by
    at.set(this.at.subarray(this.head, this.length))
    by.set(this.by.subarray(this.head, this.length))
    this.at = at
    this.by = by
    this.head = 0
    this.length = live
  }
}
