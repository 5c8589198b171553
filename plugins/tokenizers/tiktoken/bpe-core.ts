/**
 * Repairs to gpt-tokenizer's BytePairEncodingCore and a faster count, installed on each loaded
 * encoding (on the main thread and in the counting workers). Two repairs keep its ids and make
 * them faster (below); two make them tiktoken's where they were not: white space as Rust's `\s`
 * (withTiktokenWhiteSpace) and tokens that start with a BOM's bytes (rankAfterBom).
 *
 * Long pieces in O(n log n). gpt-tokenizer merges the byte pairs of a piece by scanning every
 * pair for the lowest rank after each merge: quadratic in the piece's length. The split pattern
 * leaves runs of letters or of punctuation whole (a CJK paragraph without punctuation, a line of
 * `=`), so one piece of 100 KB took 5 s to count and one of 800 KB seven minutes. Over
 * LONG_PIECE bytes the same merges are made in the same order from a heap: the lowest rank
 * first, the leftmost among equals, as the scan picks them. Shorter pieces keep the scan,
 * faster there.
 *
 * A full merge cache emptied in O(1). gpt-tokenizer caches the tokens of up to 100,000 pieces
 * and, once full, evicts the oldest through `keys().next()`, which walks past every entry
 * deleted before it: each new piece then costs a scan of up to the cache's size (900 KB of CJK
 * text, where nearly every piece is new: 16 s instead of 4.5 s). A full cache is emptied
 * instead; with text that repeats, it fills again at once (the bench inputs: no change).
 *
 * Counting without match objects. gpt-tokenizer's countNative walks the split pattern with
 * matchAll, an array and an iterator result per piece. A sticky copy of the pattern read with
 * test() leaves each piece's end in lastIndex: the same pieces, since the pattern matches at
 * every position (checked as it goes: where it does not, the original counts the text). Measured
 * 1.55x faster on logs, 1.2x on markdown. Each piece's count is then read from a cache of
 * piece counts (see PieceCounts), and ASCII text is split by hand (ascii-split.ts). Both read
 * the text's code units from a typed array filled once per text (unitsOf): 64 MB of log with
 * o200k, library CPU 1.90 -> 1.59 s (code, where tree-sitter's parse dominates: no change seen).
 *
 * Imports only Node's buffer and its sibling ascii-split.ts: the counting workers load this file
 * too, by URL.
 */
import { isAscii } from 'node:buffer'
import { TIKTOKEN_WHITE_SPACE, asciiReaderFor, unitsOf, type PieceReader } from './ascii-split.js'

export const LONG_PIECE = 512

/** The parts of gpt-tokenizer's BytePairEncodingCore used here. */
export interface BpeCore {
  bytePairMerge: (piece: Uint8Array) => number[]
  getBpeRankFromBytes: (key: Uint8Array) => number | undefined
  getBpeRankFromBytesOrThrow: (key: Uint8Array) => number
  addToMergeCache: (key: string, value: number[]) => void
  mergeCache?: Map<string, number[]>
  mergeCacheSize: number
  countNative: (text: string, allowedSpecial?: Set<string>) => number
  tokenSplitRegex: RegExp
  getBpeRankFromString: (key: string) => number | undefined
  bytePairEncode: (piece: string) => number[]
  textEncoder: { encode: (text: string) => Uint8Array }
  binarySearch: (key: Uint8Array) => number
  bytePairNonUtfSortedEncoder: Array<[Uint8Array, number]>
  bytePairRankDecoder: Array<string | number[] | Uint8Array | undefined>
}

/** The count that stops past a limit, which installFixes leaves on the core (see countUpTo). */
type CountUpTo = (text: string, limit: number) => number | undefined
interface FixedCore { docsplitFixes?: boolean, countUpTo?: CountUpTo }

/** The core inside an encoding module (`encoding.default.bytePairEncodingCoreProcessor`). */
function coreOf (encoding: unknown): BpeCore | undefined {
  const api = (encoding as { default?: unknown } | undefined)?.default ?? encoding
  const core = (api as { bytePairEncodingCoreProcessor?: Partial<BpeCore> } | undefined)?.bytePairEncodingCoreProcessor
  if (typeof core?.bytePairMerge !== 'function' || typeof core.getBpeRankFromBytes !== 'function' || typeof core.getBpeRankFromBytesOrThrow !== 'function' ||
    typeof core.addToMergeCache !== 'function' || typeof core.mergeCacheSize !== 'number' || typeof core.countNative !== 'function' ||
    !(core.tokenSplitRegex instanceof RegExp) || typeof core.getBpeRankFromString !== 'function' || typeof core.bytePairEncode !== 'function' ||
    typeof core.textEncoder?.encode !== 'function' || typeof core.binarySearch !== 'function' || !Array.isArray(core.bytePairNonUtfSortedEncoder) || !Array.isArray(core.bytePairRankDecoder)) return undefined
  return core as BpeCore
}

const KEEPING_BOM = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * The rank of a token's bytes that start with a BOM's (EF BB BF, U+FEFF). gpt-tokenizer looks
 * valid UTF-8 up by its text, decoded with a TextDecoder that drops a leading BOM: no token was
 * found for them (one for the BOM and one for each of its other bytes, where tiktoken has one
 * token), and their text without the BOM could be taken for another token's. Such tokens are
 * kept as bytes (as tokens that are not UTF-8 are), else by their text with the BOM.
 */
function rankAfterBom (core: BpeCore, key: Uint8Array): number | undefined {
  const index = core.binarySearch(key)
  if (index !== -1) return core.bytePairNonUtfSortedEncoder[index]![1]
  let text: string
  try {
    text = KEEPING_BOM.decode(key)
  } catch {
    return undefined
  }
  return core.getBpeRankFromString(text)
}

/**
 * The split pattern with `\s` as tiktoken reads it. tiktoken runs the pattern in Rust, where
 * `\s` is Unicode White_Space; JavaScript's also holds U+FEFF (a BOM, a zero-width no-break
 * space) and lacks U+0085, so gpt-tokenizer made other pieces around them: other ids, and a
 * token more or less than the model's own count. Each `\s` and `\S` becomes Rust's set.
 */
export function withTiktokenWhiteSpace (pattern: RegExp): RegExp {
  const src = pattern.source
  let out = ''
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!
    if (c === '\\') {
      const next = src[i + 1] ?? ''
      out += next === 's' ? `[${TIKTOKEN_WHITE_SPACE}]` : next === 'S' ? `[^${TIKTOKEN_WHITE_SPACE}]` : c + next
      i++
      continue
    }
    if (c !== '[') { out += c; continue }
    let end = i + 1
    while (end < src.length && src[end] !== ']') end += src[end] === '\\' ? 2 : 1
    out += classWithTiktokenWhiteSpace(src.slice(i, end + 1))
    i = end
  }
  return new RegExp(out, pattern.flags)
}

/** A character class (`[...]` or `[^...]`) with `\s` and `\S` as Rust reads them. */
function classWithTiktokenWhiteSpace (cls: string): string {
  const negated = cls[1] === '^'
  let rest = ''
  let space = false
  let notSpace = false
  for (let i = negated ? 2 : 1; i < cls.length - 1; i++) {
    const item = cls[i] === '\\' ? cls.slice(i, ++i + 1) : cls[i]!
    if (item === '\\s') space = true
    else if (item === '\\S') notSpace = true
    else rest += item
  }
  if (!notSpace) return space ? `[${negated ? '^' : ''}${rest}${TIKTOKEN_WHITE_SPACE}]` : cls
  // \S in a class (none of gpt-tokenizer's patterns has one): a union, or for [^\S...] the
  // white space that is not the rest.
  const others = space ? `[^]` : `[^${TIKTOKEN_WHITE_SPACE}]`
  if (!negated) return rest === '' ? others : `(?:[${rest}]|${others})`
  if (space) return '[]'
  return rest === '' ? `[${TIKTOKEN_WHITE_SPACE}]` : `(?:(?![${rest}])[${TIKTOKEN_WHITE_SPACE}])`
}

/**
 * Installs the repairs and the faster count on an encoding module. False when its internals are not the ones known
 * here (another gpt-tokenizer version): it then keeps its own code, slow in those cases but exact.
 */
export function installFixes (encoding: unknown): boolean {
  const core = coreOf(encoding)
  if (core === undefined) return false
  const marked = core as FixedCore
  if (marked.docsplitFixes === true) return true
  const scan = core.bytePairMerge
  // Pairs looked up before the repairs (a BOM's bytes) are looked up again.
  pairRanks.delete(core)
  core.bytePairMerge = function (this: BpeCore, piece: Uint8Array): number[] {
    return piece.length > LONG_PIECE ? heapMerge(this, piece) : scan.call(this, piece)
  }
  core.addToMergeCache = function (this: BpeCore, key: string, value: number[]): void {
    const cache = this.mergeCache
    if (cache === undefined) return
    if (cache.size >= this.mergeCacheSize) cache.clear()
    cache.set(key, value)
  }
  const rankOfBytes = core.getBpeRankFromBytes
  core.getBpeRankFromBytes = function (this: BpeCore, key: Uint8Array): number | undefined {
    return key[0] === 0xef && key[1] === 0xbb && key[2] === 0xbf ? rankAfterBom(this, key) : rankOfBytes.call(this, key)
  }
  // The ASCII reader knows the patterns as gpt-tokenizer gives them; on ASCII text they agree.
  const ascii = asciiReaderFor(core.tokenSplitRegex.source)
  core.tokenSplitRegex = withTiktokenWhiteSpace(core.tokenSplitRegex)
  const countNative = core.countNative
  const sticky = new RegExp(core.tokenSplitRegex.source, core.tokenSplitRegex.flags.replace(/[gy]/g, '') + 'y')
  core.countNative = function (this: BpeCore, text: string, allowedSpecial?: Set<string>): number {
    if (allowedSpecial !== undefined && allowedSpecial.size > 0) return countNative.call(this, text, allowedSpecial)
    return stickyCount(this, sticky, text, ascii) ?? countNative.call(this, text, allowedSpecial)
  }
  marked.countUpTo = (text, limit) => stickyCount(core, sticky, text, ascii, limit)
  marked.docsplitFixes = true
  return true
}

/**
 * The count of `text` with special tokens read as text, stopping once it passes `limit` (the
 * count then is over it, not exact), where the fixes are installed; undefined elsewhere, or
 * where the pattern does not start a piece. gpt-tokenizer's isWithinTokenLimit stops too, but
 * encodes as it goes (a generator, a merge for every piece): the sibling splitter asks it of
 * every long block, and it took 5% of a markdown split with o200k.
 */
export function countUpTo (encoding: unknown, text: string, limit: number): number | undefined {
  return countUpToOf(encoding)?.(text, limit)
}

/** countUpTo for one encoding module, found once (its core is checked on each lookup). */
export function countUpToOf (encoding: unknown): CountUpTo | undefined {
  return (coreOf(encoding) as FixedCore | undefined)?.countUpTo
}

/**
 * Token counts of the pieces seen, per encoding, found without a slice of the text, a lookup in
 * the 200,000-entry rank map, or gpt-tokenizer's merge-cache reordering (three map operations
 * per hit). With the reader of ascii-split.ts, counting alone (each line of the bench inputs,
 * one core, CPU time) went from 37 to 91 MB/s on logs and from 16 to 50 MB/s on markdown.
 * - ASCII pieces of up to 8 characters (most pieces of most text: words, numbers, punctuation)
 *   are packed 8 bits a character into two integers, and a direct-mapped table of those keys is
 *   compared without reading any string.
 * - Other pieces of up to 12 UTF-16 units sit in a direct-mapped table of strings found by a hash
 *   of the text's own characters.
 * - Longer pieces go to a map that is emptied when full, keyed by a flat copy, so a cached piece
 *   never holds the whole text it was sliced from; pieces over LONG_CACHED_CHARS (a run of
 *   letters without a break) are counted each time, as they seldom come again, but for runs of
 *   one short unit (blank lines, spaces, a rule of `=`), cached by unit and length (`runs`).
 */
interface PieceCounts {
  packedLow: Int32Array
  packedHigh: Int32Array
  packedLength: Uint8Array
  packedCounts: Int32Array
  keys: string[]
  counts: Int32Array
  long: Map<string, number>
  runs: Map<string, number>
}

/** Slots of each direct-mapped table: 2^17 rather than 2^16 took 2% off a log's count (fewer pieces evicted). */
const SLOTS = 1 << 17
const PACKED_PIECE = 8
/** Pieces up to this many UTF-16 units go in the table: V8 copies slices this short. */
const SHORT_PIECE = 12
/** Longer pieces in the map, at most this many of at most LONG_CACHED_CHARS each: 8 MB at worst. */
const LONG_CACHED = 1 << 14
const LONG_CACHED_CHARS = 256
const pieceCounts = new WeakMap<BpeCore, PieceCounts>()

/** The table slot of a piece's hash. */
function slotOf (hash: number): number {
  return (hash ^ (hash >>> 15)) & (SLOTS - 1)
}

function countsOf (core: BpeCore): PieceCounts {
  let cache = pieceCounts.get(core)
  if (cache === undefined) {
    cache = {
      packedLow: new Int32Array(SLOTS),
      packedHigh: new Int32Array(SLOTS),
      packedLength: new Uint8Array(SLOTS),
      packedCounts: new Int32Array(SLOTS),
      keys: new Array<string>(SLOTS).fill(''),
      counts: new Int32Array(SLOTS),
      long: new Map(),
      runs: new Map(),
    }
    pieceCounts.set(core, cache)
  }
  return cache
}

/** The count of one piece, with no cache: one token if it is one, else the length of its merge. */
function pieceCount (core: BpeCore, piece: string): number {
  return core.getBpeRankFromString(piece) !== undefined ? 1 : core.bytePairMerge(core.textEncoder.encode(piece)).length
}

/** The longest unit a run may repeat: `\r\n`, ` \n`, `-=`, a tab and a space. */
const RUN_PERIOD = 8

/**
 * The shortest period, up to RUN_PERIOD, of a piece that repeats one short unit (a run of blank
 * lines, of spaces, a line of `=`), or 0. At most RUN_PERIOD passes, most ending at once.
 */
function periodOf (piece: string): number {
  const n = piece.length
  search: for (let p = 1; p <= RUN_PERIOD && 2 * p <= n; p++) {
    for (let i = p; i < n; i++) if (piece.charCodeAt(i) !== piece.charCodeAt(i - p)) continue search
    return p
  }
  return 0
}

/**
 * A long piece's count, from a cache where it may come again. A run (one unit repeated) is
 * found again by its unit and length, not by its text: a splitter cutting 1 MB of blank lines
 * counts runs of a few hundred lengths some 30,000 times (o200k: 7.5 s -> 2.0 s).
 */
function longPieceCount (core: BpeCore, cache: PieceCounts, piece: string): number {
  if (piece.length > LONG_CACHED_CHARS) {
    const period = periodOf(piece)
    if (period === 0) return pieceCount(core, piece)
    const key = `${piece.length} ${piece.slice(0, period)}`
    let n = cache.runs.get(key)
    if (n !== undefined) return n
    n = pieceCount(core, piece)
    if (cache.runs.size >= LONG_CACHED) cache.runs.clear()
    cache.runs.set(key, n)
    return n
  }
  let n = cache.long.get(piece)
  if (n !== undefined) return n
  n = pieceCount(core, piece)
  if (cache.long.size >= LONG_CACHED) cache.long.clear()
  // A slice this long points into its parent string; the concatenation, flattened by the
  // slice after it, is a copy of its own.
  cache.long.set((' ' + piece).slice(1), n)
  return n
}

/**
 * The token count of `text` read piece by piece with a sticky split pattern, or once it is over
 * `limit` the count so far; undefined where a piece does not start.
 */
export function stickyCount (core: BpeCore, sticky: RegExp, text: string, ascii?: PieceReader, limit = Infinity): number | undefined {
  const cache = countsOf(core)
  const { packedLow, packedHigh, packedLength, packedCounts, keys, counts } = cache
  const units = unitsOf(text)
  const n = text.length
  let count = 0
  let at = 0
  while (at < n && count <= limit) {
    let end = ascii !== undefined ? ascii(units, n, at) : -1
    if (end < 0) {
      sticky.lastIndex = at
      if (!sticky.test(text) || sticky.lastIndex === at) return undefined
      end = sticky.lastIndex
    }
    const length = end - at
    let i = at
    let low = 0
    let high = 0
    if (length <= PACKED_PIECE) {
      for (; i < end; i++) {
        const c = units[i]!
        if (c >= 128) break
        if (i - at < 4) low |= c << ((i - at) << 3)
        else high |= c << ((i - at - 4) << 3)
      }
    }
    if (i === end) {
      // Every byte is a token: one ASCII character is one.
      if (length === 1) {
        count += 1
      } else {
        const slot = slotOf(Math.imul(low ^ Math.imul(high, 0x9e3779b1) ^ length, 0x85ebca6b))
        if (packedLow[slot] === low && packedHigh[slot] === high && packedLength[slot] === length) {
          count += packedCounts[slot]!
        } else {
          const n = pieceCount(core, text.slice(at, end))
          packedLow[slot] = low
          packedHigh[slot] = high
          packedLength[slot] = length
          packedCounts[slot] = n
          count += n
        }
      }
    } else if (length > SHORT_PIECE) {
      count += longPieceCount(core, cache, text.slice(at, end))
    } else {
      let hash = length
      for (let j = at; j < end; j++) hash = Math.imul(hash ^ units[j]!, 0x01000193)
      const slot = slotOf(hash)
      const key = keys[slot]!
      if (key.length === length && text.startsWith(key, at)) {
        count += counts[slot]!
      } else {
        const piece = text.slice(at, end)
        const n = pieceCount(core, piece)
        keys[slot] = piece
        counts[slot] = n
        count += n
      }
    }
    at = end
  }
  return count
}

/** Bytes as a string of one character a byte (Latin-1): every byte sequence has one, UTF-8 or not. */
function byteString (bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1')
}

/**
 * Every token's rank by its bytes as a byteString. gpt-tokenizer finds a part of a piece that
 * is not ASCII by decoding its bytes (a TextDecoder call), or, where they are not UTF-8 (a
 * character cut between parts), by a binary search: 300 KB of CJK without punctuation split at
 * 512 tokens, 8.1 -> 5.3 s with this map (at 64 with overlap 16, 8.1 -> 4.8 s). Keyed by bytes,
 * a token that starts with a BOM's bytes is found as itself (see rankAfterBom). It takes about
 * 13 MB and 0.1-0.2 s to build, once per encoding and thread: only after BYTE_MAP_AFTER bytes of
 * such pieces, so that a document with a few long CJK sentences does not pay for it.
 */
const byteRanks = new WeakMap<BpeCore, Map<string, number>>()
const BYTE_MAP_AFTER = 256 * 1024
const unicodeMerged = new WeakMap<BpeCore, number>()

/** The byte map once BYTE_MAP_AFTER bytes of pieces that are not ASCII were merged, `n` of them now. */
function byteRanksAfter (core: BpeCore, n: number): Map<string, number> | undefined {
  const merged = (unicodeMerged.get(core) ?? 0) + n
  if (merged < BYTE_MAP_AFTER) {
    unicodeMerged.set(core, merged)
    return undefined
  }
  let ranks = byteRanks.get(core)
  if (ranks === undefined) {
    ranks = new Map()
    const decoder = core.bytePairRankDecoder
    for (let rank = 0; rank < decoder.length; rank++) {
      const token = decoder[rank]
      if (token === undefined) continue
      ranks.set(typeof token === 'string' ? Buffer.from(token, 'utf8').toString('latin1') : byteString(Uint8Array.from(token)), rank)
    }
    byteRanks.set(core, ranks)
  }
  return ranks
}

/**
 * The ranks of joined pairs of tokens already looked up, per encoding: a direct-mapped table of
 * (left rank, right rank) -> the rank of their bytes joined, NO_TOKEN where that is no token. A
 * long piece merges the same pairs over and over (a run of spaces or blank lines, a line of
 * `=`, a CJK text's common pairs); each lookup by text sliced the pair and hashed it whole.
 */
interface PairRanks { left: Int32Array, right: Int32Array, joined: Int32Array, byteRank: Int32Array }
const PAIR_BITS = 16
const PAIR_SLOTS = 1 << PAIR_BITS
const NO_TOKEN = -1
const pairRanks = new WeakMap<BpeCore, PairRanks>()

function pairRanksOf (core: BpeCore): PairRanks {
  let table = pairRanks.get(core)
  if (table === undefined) {
    // Every byte is a token in these encodings; a byte that is not (another encoding) is found
    // as gpt-tokenizer finds it, and throws there as it would.
    const byteRank = new Int32Array(256)
    for (let b = 0; b < 256; b++) byteRank[b] = core.getBpeRankFromBytes(Uint8Array.of(b)) ?? NO_TOKEN
    table = { left: new Int32Array(PAIR_SLOTS).fill(NO_TOKEN), right: new Int32Array(PAIR_SLOTS), joined: new Int32Array(PAIR_SLOTS), byteRank }
    pairRanks.set(core, table)
  }
  return table
}

/** The token ranks of `piece`, merged as gpt-tokenizer's bytePairMerge merges them. */
export function heapMerge (core: BpeCore, piece: Uint8Array): number[] {
  const n = piece.length
  const { left, right, joined, byteRank } = pairRanksOf(core)
  // Parts are named by their first byte; next[i] is the first byte of the part after part i
  // (n: none), -1 once part i has been merged into the part before it. tokenOf[i]: part i's rank.
  const next = new Int32Array(n + 1)
  const prev = new Int32Array(n + 1)
  const tokenOf = new Int32Array(n)
  for (let i = 0; i <= n; i++) {
    next[i] = i + 1
    prev[i] = i - 1
  }
  for (let i = 0; i < n; i++) tokenOf[i] = byteRank[piece[i]!]!
  // rank[i]: the rank of part i joined with the part after it (Infinity: not a token).
  const rank = new Float64Array(n)
  // A pair missing from the table: an ASCII piece's parts are looked up by their text, sliced
  // from the piece's: gpt-tokenizer decodes each part's bytes with a TextDecoder first (800 KB
  // of random letters through the CLI with o200k: 3.9 -> 3.2 s). Other pieces' parts, by their
  // bytes once the map of them is built (byteRanksAfter); until then, as gpt-tokenizer finds them.
  const ascii = isAscii(piece)
  const byBytes = ascii ? undefined : byteRanksAfter(core, n)
  const text = ascii || byBytes !== undefined ? byteString(piece) : undefined
  const lookUp = (i: number, end: number): number | undefined =>
    text === undefined ? core.getBpeRankFromBytes(piece.subarray(i, end))
      : byBytes !== undefined ? byBytes.get(text.slice(i, end)) : core.getBpeRankFromString(text.slice(i, end))
  const pairRank = (i: number): number => {
    const j = next[i]!
    if (j >= n) return Infinity
    const a = tokenOf[i]!
    const b = tokenOf[j]!
    const slot = (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b)) >>> (32 - PAIR_BITS)
    if (a >= 0 && b >= 0 && left[slot] === a && right[slot] === b) {
      const r = joined[slot]!
      return r === NO_TOKEN ? Infinity : r
    }
    const found = lookUp(i, next[j]!)
    if (a >= 0 && b >= 0) {
      left[slot] = a
      right[slot] = b
      joined[slot] = found ?? NO_TOKEN
    }
    return found ?? Infinity
  }
  // A min-heap of rank * span + part: the lowest rank first, the leftmost part among equals.
  // Entries go stale when a rank changes; a popped one counts only if it still holds.
  const span = n + 1
  let heap = new Float64Array(Math.max(16, n))
  let size = 0
  const push = (key: number): void => {
    if (size === heap.length) {
      const bigger = new Float64Array(heap.length * 2)
      bigger.set(heap)
      heap = bigger
    }
    let at = size++
    while (at > 0) {
      const up = (at - 1) >> 1
      if (heap[up]! <= key) break
      heap[at] = heap[up]!
      at = up
    }
    heap[at] = key
  }
  const pop = (): number => {
    const top = heap[0]!
    const last = heap[--size]!
    let at = 0
    for (;;) {
      let child = 2 * at + 1
      if (child >= size) break
      if (child + 1 < size && heap[child + 1]! < heap[child]!) child++
      if (heap[child]! >= last) break
      heap[at] = heap[child]!
      at = child
    }
    heap[at] = last
    return top
  }
  const update = (i: number): void => {
    const r = pairRank(i)
    rank[i] = r
    if (r !== Infinity) push(r * span + i)
  }

  for (let i = 0; i < n; i++) update(i)
  while (size > 0) {
    const key = pop()
    const r = Math.floor(key / span)
    const i = key - r * span
    if (next[i] === -1 || rank[i] !== r) continue
    // Part i swallows the part after it.
    const j = next[i]!
    const k = next[j]!
    next[i] = k
    if (k < n) prev[k] = i
    next[j] = -1
    tokenOf[i] = r
    update(i)
    if (prev[i]! >= 0) update(prev[i]!)
  }
  const ranks: number[] = []
  // A part still a byte that is no token (another encoding) throws as gpt-tokenizer would.
  for (let i = 0; i < n; i = next[i]!) ranks.push(tokenOf[i]! >= 0 ? tokenOf[i]! : core.getBpeRankFromBytesOrThrow(piece.subarray(i, next[i])))
  return ranks
}
