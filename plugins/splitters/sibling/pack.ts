/**
 * The sibling packer. Leaf units (blocks, records) arrive in order; every gap between two
 * units has a strength:
 *
 *   end of document  >  between siblings of a shallow container  >  ... of a deeper one
 *     >  line  >  sentence  >  word  >  grapheme  >  code point  >  after an `attachNext` unit
 *
 * A chunk grows while its units fit the budget; it then ends at the strongest gap inside the
 * fitting extent (the furthest one among equals). With overlap the budget is max_tokens -
 * overlap_tokens, room for the overlap; a unit (or a heading with the unit after it) over it
 * but within max_tokens goes whole, alone. A unit over max_tokens on its own is cut at the
 * next finer level, one window at a time, so a 5 MB line costs O(window) per chunk, not
 * O(line). With a tally, the queue's exact count grows unit by unit and every gap's prefix count
 * is known, so the best gap is chosen without counting again: with a cheap tokenizer (approx)
 * always, with an exact one for blocks (the tally adds the counts the engine made ahead), lines,
 * sentences and words, as long as its backlog stays small. Otherwise (graphemes, a run of
 * letters that never settles) estimates choose the extent and exact counts of the joined text
 * confirm it.
 */
import { ContainerPath, joinedText } from '../../../core/structure.js'
import type { CutStyle, DocEvent, RefUse } from '../../../core/events.js'
import { BLANK_JOIN, LINE_MARKER, cutBoundary, cutLevels, thinCuts, whiteSpaceOnly, type CutLevel } from '../../../core/segment.js'
import type { Boundary, ChunkDraft, PackerContext, PackerHandler, Tally } from '../../../core/types.js'
import type { siblingOptions } from './options.js'

const END = Number.POSITIVE_INFINITY
/** Gap between siblings whose parent is at depth d: STRUCTURE - d (see structureGap). */
const STRUCTURE = 1000
/**
 * Deeper than this, containers count as this deep: their gaps stay stronger than any cut inside
 * a block. (JSON nests up to 10,000 levels: past depth 960, `[{"":` 1,000 times over made a chunk
 * of every `{` and `"":[`, and re-counted the long run for each.)
 */
const STRUCTURE_DEPTH = 900
const structureGap = (depth: number): number => STRUCTURE - Math.min(depth, STRUCTURE_DEPTH)
const LEVEL_STRENGTH: Record<CutLevel, number> = { line: 40, sentence: 30, space: 22, word: 20, grapheme: 10, codepoint: 5 }
/** In prose a line end only wraps a sentence: weaker than a sentence end, stronger than a word. */
const WRAPPED_LINE = 25
const levelStrength = (style: CutStyle, level: CutLevel): number => style === 'prose' && level === 'line' ? WRAPPED_LINE : LEVEL_STRENGTH[level]
/** After a heading or decorator: used only when nothing else fits. */
const ATTACHED = 1
/** Kinds of block above a declaration that describe it (code): see commentLeadIn. */
const LEAD_IN = new Set(['comment', 'docstring'])
/** A chunk under this share of the budget does not end where a container too big for one chunk opens. */
const SMALL_SHARE = 0.5
/** A block's last piece under this share of the budget is not left alone by a cut before it. */
const WIDOW_SHARE = 1 / 4
/**
 * The cuts of `text` less those that would start a piece of only white space that can go with
 * the text before it (the blank lines after a paragraph's last sentence, one piece per line
 * feed), up to BLANK_JOIN characters after that text and while the piece still `fits`; and
 * white space that starts `text` (a wrapped line's indentation) goes with the text after it.
 * So a chunk is seldom white space alone, while a long run of white space is still cut and a
 * piece that fits is not pushed over the budget (and cut inside its words) by it; a piece over
 * the budget anyway (a long URL, cut at the next level) takes it (its indentation was a chunk
 * of four spaces). `whole`: text is the whole unit (its last piece ends the unit, not a window).
 */
function withoutBlankPieces (text: string, cuts: number[], whole: boolean, fits: (from: number, to: number) => boolean): number[] {
  if (cuts.length === 0) return cuts
  /** The end of the piece that starts at cuts[i]. */
  const end = (i: number): number => i + 1 < cuts.length ? cuts[i + 1]! : whole ? text.length : cuts[i]!
  const leading = whiteSpaceOnly(text, 0, cuts[0]!)
  let i = 0
  if (leading && cuts[0]! <= BLANK_JOIN && !whiteSpaceOnly(text, cuts[0]!, end(0)) && (fits(0, end(0)) || !fits(cuts[0]!, end(0)))) i = 1
  /** Where the piece being built starts, and the white space joined to it since its text (Infinity: none may be). */
  let start = 0
  let joined = leading && i === 0 ? Infinity : 0
  const out: number[] = []
  for (; i < cuts.length; i++) {
    const from = cuts[i]!
    const to = end(i)
    const blank = to > from && whiteSpaceOnly(text, from, to)
    if (blank && joined + (to - from) <= BLANK_JOIN && fits(start, to)) {
      joined += to - from
      continue
    }
    out.push(from)
    start = from
    joined = blank ? Infinity : 0
  }
  return out.length === cuts.length ? cuts : out
}

/**
 * A line's first word, to the next white space, after any quote, list or table markers (its
 * first 4096 characters: a longer word fits with no heading).
 */
const FIRST_WORD = new RegExp(`^\\s*(?:${LINE_MARKER})*\\S{1,4096}`)
/** The same in a script written without spaces: its first two characters. */
const FIRST_UNSPACED_WORD = new RegExp(`^\\s*(?:${LINE_MARKER})*\\S{1,2}`)
/** Scripts written without spaces between words: Thai, Lao, Myanmar, Khmer, CJK and kana. */
const UNSPACED = /[\u0E00-\u0EFF\u1000-\u109F\u1780-\u17FF\u2E80-\u9FFF\uF900-\uFAFF\uFF00-\uFFEF]/

/** Summed estimates of small pieces may overstate their joined count this many times. */
const EXTEND_FACTOR = 10
/** Characters a token of the budget above which a unit is first checked with `exceeds`. */
const LONG_UNIT = 4
/** Characters an exact tally may have to read again before word pieces stop being tallied. */
const BACKLOG_MAX = 32
/** The same for the lines and sentences of a cut block, which settle at most of their ends. */
const LINE_BACKLOG_MAX = 256
/** With a cheap tokenizer, recount a queue that may fit only after this share of the budget arrives. */
const RECOUNT_SHARE = 0.1

interface Unit {
  start: number
  text: string
  kind: string
  cut: CutStyle
  /** Index in cutLevels[cut] of the level that made this unit; -1 for a whole block. */
  level: number
  /** A remainder of a block being cut: its inside has not been segmented at `level + 1` yet. */
  pending: boolean
  path: string[]
  /** How many containers hold it: the gap that closes the innermost is structureGap(depth - 1). */
  depth: number
  /** It is the first unit of a container (one opened right before it). */
  opens: boolean
  /** Strength of the gap after this unit, and the reason a chunk ending there gives. */
  after: number
  /** The gap after it only opens containers (none closes there): what follows starts inside them. */
  enters: boolean
  /** How many sections (containers of kind `section`) it is in. */
  sections: number
  /** The fewest sections open anywhere in the gap after it. */
  sectionsAfter: number
  reason: Boundary
  attachNext: boolean
  refs: RefUse[] | undefined
  /** Cached estimate, -1 until computed. */
  est: number
  /** The exact count of a whole block, when the engine counted it ahead. */
  tokens: number | undefined
  /** What it needs to be read alone (a table row's header): a chunk that starts with it carries it. */
  context: string | undefined
}

function commonPath (units: Unit[], j: number): string[] {
  let path = units[0]!.path
  for (let i = 1; i < j && path.length > 0; i++) {
    const other = units[i]!.path
    if (other === path) continue
    let n = 0
    while (n < path.length && n < other.length && path[n] === other[n]) n++
    if (n < path.length) path = path.slice(0, n)
  }
  return path
}

function inOffsetOrder (refs: RefUse[]): boolean {
  for (let i = 1; i < refs.length; i++) if (refs[i - 1]!.offset > refs[i]!.offset) return false
  return true
}

export function createSiblingPacker (ctx: PackerContext<typeof siblingOptions>): PackerHandler {
  const { meter, segmenters } = ctx
  /** Chunks pack to `budget`, which leaves room for overlap; a unit is cut only over `limit`. */
  const budget = ctx.budget
  const limit = ctx.options.max_tokens
  const overlapping = ctx.options.overlap_tokens > 0
  /** Characters segmented at a time when cutting a unit: comfortably more than one chunk. */
  const window = Math.max(2048, budget * 12)
  const fineSpacing = Math.floor(budget / 16)
  const queue: Unit[] = []
  let queuedEstimate = 0
  /** Set by end(true): the input stopped at an error, so the last chunk did not end the document. */
  let interrupted = false
  /** The boundary of a chunk that ends with the last unit, once no more will come. */
  const lastBoundary = (u: Unit): Boundary => interrupted ? u.reason : 'end'

  /**
   * What containerOver has read of the container after a gap while it waits for more of it:
   * the container's first unit and the strength of the gap that ends it, the next unit to read,
   * the sum of the estimates read, and the sum at which to count its text again. Cleared when the
   * queue changes (emit, cut).
   */
  let scan: { unit: Unit, s: number, next: number, est: number, countAt: number } | undefined
  /**
   * The gap whose container emitBest waits to know, with the queue's first unit then: until the
   * front changes, the choice of gap does not (units come after the extent), so the next units
   * only go to containerOver, not through the whole choice again.
   */
  let waiting: { front: Unit, j: number, s: number } | undefined

  // Structure seen since the last unit.
  const containers = new ContainerPath()
  let minDepthSinceUnit = 0
  /** Whether each open container is a section; how many are. */
  const isSection: boolean[] = []
  let sectionDepth = 0
  let minSectionsSinceUnit = 0

  /**
   * A chunk that starts inside sections begun in an earlier chunk does not reach into another
   * section after the innermost of them closes: the tail of a section cut in two is not joined
   * to the next section, under whose heading it would be read (its path would lose its own).
   * Code's containers may join so (the end of one method and the next, whole): a chunk of code
   * is read by its text more than by its path, and such tails are many and small. `carried`:
   * how many sections the gap before queue[0] is inside. `closing`: the first gap (as a chunk
   * of that many units) that closes one of them and enters another, -1 if none is known among
   * the first `closingRead` gaps. Both are read again when the queue's front changes (emit, cut).
   */
  let carried = 0
  /** A section closed (or, under separate_sections, opened) where the last chunk ended. */
  let sectionEnded = false
  let closing = -1
  let closingRead = 0
  /** Sections nested at most this deep never share a chunk (separate_sections; 0: they may). */
  const separate = ctx.options.separate_sections ?? 0
  /**
   * Whether the gap after queue[g - 1] closes or opens a section nested at most `separate` deep.
   * Not after a heading: a section whose heading a subsection follows right away goes with it.
   */
  const separates = (g: number): boolean => {
    const before = queue[g - 1]!
    return before.sectionsAfter < separate && before.after !== ATTACHED && (before.sections > before.sectionsAfter || queue[g]!.sections > before.sectionsAfter)
  }
  /** Such gaps end a chunk too, whatever it started in. */
  const closingGap = (): number => {
    for (; closing < 0 && closingRead < queue.length - 1; closingRead++) {
      const after = queue[closingRead]!.sectionsAfter
      if ((after < carried && queue[closingRead + 1]!.sections > after) || separates(closingRead + 1)) closing = closingRead + 1
    }
    return closing
  }
  let structureChanged = false
  let exitedSinceUnit = false
  let enteredSinceUnit = false

  /**
   * Cheap tokenizers only: queue[0..units) holds at most `count` tokens (an exact count, or a sum
   * of exact counts of consecutive parts). Counts are subadditive, so `count` plus the estimates
   * of later units bounds the whole queue, and it need not be recounted for every new unit.
   */
  let proven = { units: 0, count: 0 }

  // A tally reads up to the first unit over budget, and the units after the chosen gap are read
  // again for the next chunk: with BPE on one core that costs more than estimates plus one count
  // of the chunk (8.6 MB of markdown, o200k: 12% slower), but the chunks are fuller (exact
  // counts choose the gap) and on large inputs the engine counts whole blocks ahead on other
  // cores, so rereading them costs nothing. Either way the same units are tallied, so the
  // output does not depend on the number of cores.
  const cheap = meter.tokenizer.cheap === true
  const exceeds = meter.tokenizer.exceeds?.bind(meter.tokenizer)
  const newTally = meter.tokenizer.tally?.bind(meter.tokenizer)
  /** A cheap tokenizer with a tally needs no estimates at all. */
  const estimating = newTally === undefined || !cheap
  let tally: Tally | undefined
  /**
   * `prefix[i]` is the exact count of the text of queue[0..i], for the units the tally has read
   * so far (never past the first one over budget).
   */
  const prefix: number[] = []
  const resetTally = (): void => {
    tally = undefined
    prefix.length = 0
  }

  const estimate = (u: Unit): number => {
    // A remainder longer than a window is cut before it could fit: no need to scan megabytes.
    // Never the count made ahead (u.tokens): estimates must be the same whether counts were
    // made on other cores or not, or the chunks would depend on the machine.
    if (u.est < 0) u.est = u.pending && u.text.length > window ? budget + 1 : meter.estimate(u.text)
    return u.est
  }

  const add = (u: Unit): void => {
    queue.push(u)
    if (estimating) queuedEstimate += estimate(u)
  }

  const emit = (j: number, tokenCount: number, text: string, boundary: Boundary): void => {
    const units = queue.slice(0, j)
    const kinds: string[] = []
    const refs = new Set<string>()
    for (const u of units) {
      if (!kinds.includes(u.kind)) kinds.push(u.kind)
      for (const r of u.refs ?? []) refs.add(r.label)
    }
    const first = units[0]!
    const draft: ChunkDraft = {
      start: first.start,
      end: first.start + text.length,
      text,
      tokenCount,
      path: commonPath(units, j),
      kinds,
      boundary,
    }
    if (refs.size > 0) draft.refs = [...refs]
    if (first.context !== undefined) draft.context = first.context
    // The next chunk's overlap does not start inside what leads into the unit after it: a
    // heading (`blocks` of `## Container blocks`; all of one, though cut in pieces), a comment
    // over a declaration. Stretches in order, touching ones joined.
    if (overlapping) {
      const avoid: Array<[number, number]> = []
      for (const u of units) {
        if (!u.attachNext && u.kind !== 'heading') continue
        const [from, to] = [u.start - first.start, u.start - first.start + u.text.length]
        const last = avoid[avoid.length - 1]
        if (last !== undefined && last[1] === from) last[1] = to
        else avoid.push([from, to])
      }
      if (avoid.length > 0) draft.overlapAvoid = avoid
    }
    // Overlap never carries the end of a section into the next one: a chunk under "Billing"
    // does not start with the last sentence of "Accounts"; nor, under separate_sections, the
    // text before a section into it.
    if (sectionEnded) draft.noOverlap = true
    sectionEnded = units[j - 1]!.sectionsAfter < units[j - 1]!.sections || (j < queue.length && separates(j))
    if (estimating) for (const u of units) queuedEstimate -= estimate(u)
    carried = units[j - 1]!.sectionsAfter
    closing = -1
    closingRead = 0
    queue.splice(0, j)
    scan = undefined
    proven = { units: 0, count: 0 }
    resetTally()
    if (queue.length === 0) queuedEstimate = 0
    ctx.emit(draft)
  }

  /**
   * Replaces queue[i] by its pieces at the next finer level, none finer than `finest`. False
   * when it cannot be cut.
   */
  const cut = (i: number, finest: CutLevel = 'codepoint'): boolean => {
    const u = queue[i]!
    const levels = cutLevels[u.cut]
    const region = u.text.length > window ? u.text.slice(0, window) : u.text
    /** Whether region[from, to) fits the budget by estimate (a piece that white space may join). */
    const fitsAlone = (from: number, to: number): boolean => meter.estimate(region.slice(from, to)) <= budget
    let level = u.level + 1
    let cuts: number[] = []
    // A piece cut at graphemes may hold several (white space joined to the one after it, or
    // cuts thinned): one over max_tokens is cut at them as they are before code points
    // (` 🇯🇵` at 10 tokens over 8 was cut inside the flag).
    if (finest === 'codepoint' && u.level >= 0 && levels[u.level] === 'grapheme') {
      cuts = segmenters.cuts(region, 'grapheme')
      if (cuts.length > 0) level = u.level
    }
    /** The first level whose cuts white space joined away, and those cuts. */
    let joinedAway: [number, number[]] | undefined
    for (; cuts.length === 0 && level < levels.length && LEVEL_STRENGTH[levels[level]!] >= LEVEL_STRENGTH[finest]; level++) {
      // Not into code points while a coarser level has cuts, joined away or not: those are
      // used below (`\n🇯🇵` at 8 tokens cut at its grapheme, not inside the flag).
      if (levels[level] === 'codepoint' && joinedAway !== undefined) break
      const found = segmenters.cuts(region, levels[level]!)
      cuts = withoutBlankPieces(region, found, region === u.text, fitsAlone)
      if (cuts.length > 0) break
      if (found.length > 0) joinedAway ??= [level, found]
    }
    if (cuts.length === 0) {
      // White space joined to the text before it, by estimates that the count exceeds, left no
      // cut at any level (`. ` then nine characters of white space, 9 o200k tokens at a budget
      // of 8), or made this very piece (a combining mark and 16 form feeds, 17 tokens at 16):
      // cut where it was, rather than emit the unit over budget.
      if (finest !== 'codepoint') return false
      if (joinedAway === undefined && u.level >= 0) {
        const found = segmenters.cuts(region, levels[u.level]!)
        if (found.length > 0) joinedAway = [u.level, found]
      }
      if (joinedAway === undefined) return false
      ;[level, cuts] = joinedAway
    }
    const name = levels[level]!
    if (name === 'grapheme' && fineSpacing > 1 && level !== u.level) cuts = thinCuts(cuts, fineSpacing)
    const pieces: Unit[] = []
    let from = 0
    // Uses in offset order (see unitFrom), handed out piece by piece: filtering all of them for
    // each piece took a minute for a paragraph using one reference 200,000 times.
    const refs = u.refs
    let ref = 0
    for (let c = 0; c <= cuts.length; c++) {
      const last = c === cuts.length
      const to = last ? u.text.length : cuts[c]!
      const firstRef = ref
      if (refs !== undefined) while (ref < refs.length && refs[ref]!.offset < u.start + to) ref++
      // Every field spelled out, in the order unitFrom gives them: one object shape for all
      // units (a spread of `u` is several times slower, and code cuts hundreds of thousands).
      pieces.push({
        start: u.start + from,
        text: u.text.slice(from, to),
        kind: u.kind,
        cut: u.cut,
        level: last && region !== u.text ? u.level : level,
        pending: last && region !== u.text,
        path: u.path,
        depth: u.depth,
        opens: c === 0 ? u.opens : false,
        after: last ? u.after : levelStrength(u.cut, name),
        enters: last ? u.enters : false,
        sections: u.sections,
        sectionsAfter: last ? u.sectionsAfter : u.sections,
        reason: last ? u.reason : cutBoundary[name],
        attachNext: last ? u.attachNext : false,
        refs: refs?.slice(firstRef, ref),
        est: -1,
        tokens: undefined,
        context: u.context,
      })
      from = to
    }
    // Not splice(i, 1, ...pieces): a window of a large budget may be a hundred thousand
    // sentences, more arguments than the stack holds.
    const after = queue.splice(i + 1)
    queue.length = i
    scan = undefined
    waiting = undefined
    for (const piece of pieces) queue.push(piece)
    for (const unit of after) queue.push(unit)
    closing = -1
    closingRead = 0
    if (i === prefix.length - 1) {
      tally!.undo()
      prefix.pop()
    } else if (i < prefix.length) {
      resetTally()
    }
    if (i < proven.units) proven = { units: 0, count: 0 }
    if (estimating) {
      queuedEstimate -= estimate(u)
      for (const p of pieces) queuedEstimate += estimate(p)
    }
    return true
  }

  /**
   * Whether the unit alone is over `n` tokens (the budget, or max_tokens), by an exact count: an
   * estimate is no proof (approx puts a run of `=` or of tabs at 10-30 times its real count),
   * and what fits is never cut. A cheap tokenizer's estimate is its count, against the budget.
   */
  const over = (u: Unit, n: number): boolean => {
    if (u.tokens !== undefined) return u.tokens > n
    if (cheap && n === budget) return estimate(u) > budget
    if (exceeds !== undefined) return exceeds(u.text, n)
    // Not meter.count: a count made ahead teaches the meter nothing here, so neither may this one.
    u.tokens = meter.tokenizer.count(u.text)
    return u.tokens > n
  }
  const overBudget = (u: Unit): boolean => over(u, budget)
  /** Over max_tokens (with no overlap, the budget). */
  const overLimit = (u: Unit): boolean => over(u, limit)

  /**
   * Emits the first j units whole when they fit max_tokens though not the budget: the budget
   * leaves room for overlap, and what fits max_tokens is not cut for it (the overlap shrinks
   * instead). With no overlap, never. 'wait' when the j-th unit is the last so far: whether the
   * chunk ends the document decides its boundary, so the next unit (or the end) is awaited.
   */
  const withinLimit = (j: number, final: boolean): boolean | 'wait' => {
    if (limit === budget || j > queue.length || queue[j - 1]!.pending) return false
    if (!final && j === queue.length) return 'wait'
    const text = joined(j)
    if (exceeds !== undefined && exceeds(text, limit)) return false
    // Not meter.count (see over): what the meter learns must not depend on counts made ahead.
    const n = j === 1 && queue[0]!.tokens !== undefined ? queue[0]!.tokens : meter.tokenizer.count(text)
    if (n > limit) return false
    emit(j, n, text, final && j === queue.length ? lastBoundary(queue[j - 1]!) : queue[j - 1]!.reason)
    return true
  }

  /**
   * queue[k] does not fit with the heading before it (unit k - 1): cuts it so that the heading
   * travels with its first part. A unit over max_tokens is cut at the next finer level, as any
   * is; a piece of one (a line or sentence that fits alone) is cut further, at white space (at
   * words in scripts written without spaces), when its first word, past any quote, list or table
   * marker, fits with the heading: not inside a word, a URL or a fence's info string, and not for
   * a marker alone. Not with overlap when the piece is over the budget: its parts could be over
   * it too, and be cut into letters; whole, it fits max_tokens. Other lead-ins (a paragraph
   * ending in a colon) go alone rather than take a part. True when queue[k] was cut.
   */
  const cutForHeading = (k: number): boolean => {
    const next = queue[k]!
    if (overLimit(next)) return cut(k)
    if (queue[k - 1]!.kind !== 'heading' || next.level < 0 || overBudget(next)) return false
    const unspaced = UNSPACED.test(next.text.slice(0, 64))
    const first = (unspaced ? FIRST_UNSPACED_WORD : FIRST_WORD).exec(next.text)?.[0]
    if (first === undefined || first.length > 4096 || meter.tokenizer.count(joined(k) + first) > limit) return false
    return cut(k, unspaced ? 'word' : 'space')
  }

  /** The strongest gap among those after units from..k-1. */
  const strongestGap = (k: number, from = 0): number => {
    let strongest = 0
    for (let j = from; j < k; j++) strongest = Math.max(strongest, queue[j]!.after)
    return strongest
  }

  /**
   * Where the headings from `from` on that lead into the unit after them (a heading under a
   * heading) end: the first unit after them, or `from` when it is no such heading or they do not
   * fit max_tokens together. Other lead-ins (a paragraph ending in a colon) do not join: they go
   * alone rather than take a part. A heading over max_tokens does not join either: it is cut.
   */
  const headingsEnd = (from: number): number => {
    let e = from
    while (e < queue.length - 1 && !queue[e]!.pending && queue[e]!.kind === 'heading' && queue[e]!.after <= ATTACHED && !overLimit(queue[e]!)) e++
    // Together over max_tokens, they lead as one heading does.
    return e > from && meter.tokenizer.count(joined(e)) > limit ? from : e
  }

  /** How many units of white space alone lead units 0..k-1 (0 when they all are). */
  const blankLead = (k: number): number => {
    let blank = 0
    while (blank < k && whiteSpaceOnly(queue[blank]!.text, 0, queue[blank]!.text.length)) blank++
    return blank < k ? blank : 0
  }

  /** The text of units [from, j). */
  const joined = (j: number, from = 0): string => joinedText(ctx.source, queue, from, j)

  /**
   * Summed counts of small pieces (words, graphemes) overstate their joined count; grow the
   * extent by exact counts. Counts grow about as the text does, so each count says where the
   * budget is likely reached and that extent is counted next. Until an extent is over, a guess
   * moves at least as far as galloping would (steps that double), and where the guess does not
   * move (the budget is reached here) the next unit is counted once, then it gallops; once an
   * extent is over, a guess that did not halve the range is followed by a halving step: O(log n)
   * counts either way. A run of letters cut at graphemes took 9-14 counts of the chunk per chunk
   * by galloping and halving alone, and about 4 this way. Where counts are not monotone in the
   * extent (a run of `a`), it may settle on another extent that fits than they did.
   */
  const extend = (k: number): number => {
    // Never past a pending remainder (it may be megabytes) or past what could plausibly fit.
    let reach = k
    let sum = 0
    while (reach < queue.length && !queue[reach]!.pending && (sum += estimate(queue[reach]!)) <= budget * EXTEND_FACTOR) reach++
    // Cheap path: the proven prefix plus an exact count of only the new tail bounds the whole
    // (subadditive counts), so a queue that still fits costs O(new text), not O(queue).
    if (cheap && proven.units >= k && proven.units < reach) {
      const bound = proven.count + meter.count(joined(reach, proven.units))
      if (bound <= budget) {
        proven = { units: reach, count: bound }
        return reach
      }
    }
    let fits = k
    let fitsCount = -1
    let fails = reach + 1
    // lengths[j - k]: the characters of queue[0..j).
    const lengths = new Float64Array(reach - k + 1)
    for (let i = 0; i < k; i++) lengths[0] = lengths[0]! + queue[i]!.text.length
    for (let j = k + 1; j <= reach; j++) lengths[j - k] = lengths[j - k - 1]! + queue[j - 1]!.text.length
    /** The longest extent in [k, reach] of at most `chars` characters. */
    const extentOf = (chars: number): number => {
      let lo = k
      let hi = reach
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1
        if (lengths[mid - k]! <= chars) lo = mid
        else hi = mid - 1
      }
      return lo
    }
    let probe = k + 1
    let step = 1
    let guessing = true
    let confirmed = false
    while (probe <= reach && fails - fits > 1) {
      const range = fails - fits
      const n = meter.count(joined(probe))
      if (n <= budget) { fits = probe; fitsCount = n } else fails = probe
      const over = fails <= reach
      const guess = n > 0 ? extentOf(lengths[probe - k]! * budget / n) : -1
      if (guessing && guess > fits && guess < fails) {
        // Before any extent is over, a guess moves at least as far as galloping would, so that
        // guesses a few units long each (a count just under the budget) stay O(log n).
        probe = over ? guess : Math.max(guess, Math.min(reach, fits + step))
        if (!over) step *= 2
      } else if (over) {
        probe = (fits + fails) >> 1
      } else if (!confirmed) {
        // The count says the budget is reached here: the next unit, once, before galloping on.
        probe = fits + 1
        confirmed = true
      } else {
        probe = Math.min(reach, fits + step)
        step *= 2
      }
      guessing = !over || (fails - fits) * 2 <= range
    }
    if (fitsCount >= 0) proven = { units: fits, count: fitsCount }
    return fits
  }

  /**
   * The best gap among those after units 1..k that fits: the strongest, the furthest among
   * equals. `demoted` overrides some gaps' strength. Returns the gap, its chunk's count and
   * text (when counted), and the strength it had.
   */
  const bestGap = (k: number, final: boolean, demoted: Map<number, number>): [number, number, string | undefined, number] | undefined => {
    const candidates: number[] = []
    for (let j = 1; j <= k; j++) candidates.push(j)
    // A chunk of white space alone (the blank line after a paragraph whose last sentence filled
    // the chunk before) is the last choice: it goes with what follows when that fits.
    const blank = blankLead(k)
    const strength = (j: number): number => j <= blank ? 0 : demoted.get(j) ?? (final && j === queue.length ? END : queue[j - 1]!.after)
    candidates.sort((a, b) => strength(b) - strength(a) || b - a)
    // Candidates of one strength form a tier, longest first; fitting is monotone in length,
    // so test the longest, then the shortest, then binary-search between.
    let t = 0
    while (t < candidates.length) {
      const s = strength(candidates[t]!)
      let e = t
      while (e + 1 < candidates.length && strength(candidates[e + 1]!) === s) e++
      const tier = candidates.slice(t, e + 1)
      // A prefix the tally has read needs no count.
      const fits = (j: number): [boolean, number, string | undefined] => {
        if (j <= prefix.length) return [prefix[j - 1]! <= budget, prefix[j - 1]!, undefined]
        const text = joined(j)
        const n = meter.count(text)
        return [n <= budget, n, text]
      }
      let best: [number, number, string | undefined] | undefined
      const [longestFits, n0, text0] = fits(tier[0]!)
      if (longestFits) best = [tier[0]!, n0, text0]
      else if (tier.length > 1) {
        const [shortestFits, n1, text1] = fits(tier[tier.length - 1]!)
        if (shortestFits) {
          best = [tier[tier.length - 1]!, n1, text1]
          let lo = 0 // tier[lo] does not fit
          let hi = tier.length - 1 // tier[hi] fits
          while (hi - lo > 1) {
            const mid = (lo + hi) >> 1
            const [ok, n, text] = fits(tier[mid]!)
            if (ok) { hi = mid; best = [tier[mid]!, n, text] } else lo = mid
          }
        }
      }
      if (best !== undefined) return [...best, s]
      t = e + 1
    }
    return undefined
  }

  /** The strongest gap after units j+1..k weaker than `than`, or 0 when there is none. */
  const strongestInside = (j: number, k: number, than: number): number => {
    let strongest = 0
    for (let g = j + 1; g <= k && g < queue.length; g++) {
      const after = queue[g - 1]!.after
      if (after < than && after > strongest) strongest = after
    }
    return strongest
  }

  /**
   * Whether the container that starts at unit j and ends at the first gap of strength `s` or
   * more (one that opens after unit j-1, or its first child) is over the budget: it cannot be
   * one chunk, whatever chunk it starts. 'wait' while it is still open
   * and what has arrived of it may fit. Reads each unit once, and counts the container's text
   * only when its estimate says it may be over: a few times per container.
   */
  const containerOver = (j: number, final: boolean, s: number): boolean | 'wait' => {
    let read = scan
    if (read === undefined || read.unit !== queue[j] || read.s !== s) read = scan = { unit: queue[j]!, s, next: j, est: 0, countAt: 0 }
    let closed = final
    for (;;) {
      // The gap after the last unit read is known once a unit follows it.
      const last = read.next - 1
      if (last >= j && last < queue.length - 1 && queue[last]!.after >= s) {
        closed = true
        break
      }
      if (read.next >= queue.length) break
      const u = queue[read.next]!
      if (u.pending || overBudget(u)) return true
      read.est += estimate(u)
      read.next++
    }
    if (!closed && (read.est <= budget || read.est < read.countAt)) return 'wait'
    const n = meter.count(joined(read.next, j))
    if (n > budget) return true
    if (closed) return false
    // Count again once the estimate, read at this count's ratio to it, reaches the budget (and
    // has grown by an eighth of it at least): estimates may run at twice the real count.
    read.countAt = Math.max(read.est * budget / Math.max(n, 1), read.est + budget / 8)
    return 'wait'
  }

  /**
   * Emits the best chunk among the gaps after units 1..k; false when even unit 0 is over budget.
   * A chunk under SMALL_SHARE of the budget that would end where containers open (a lead-in,
   * then a list, section or statement too big for one chunk) is not worth its gap, nor are the
   * gaps between the siblings it holds (the chunk would be smaller still): they count as the
   * strongest gap inside the extent after the lead-in, so the lead-in goes with the container's
   * first children, or, when the first child does not fit the extent and is too big for one
   * chunk itself (a function whose body is one big loop), with that child's first children, and
   * so on down. Cutting inside a child that would fit a chunk of its own is not worth it: then
   * the lead-in stays alone. 'wait': whether that child fits one chunk is not known yet.
   */
  const emitBest = (k: number, final: boolean): boolean | 'wait' => {
    const demoted = new Map<number, number>()
    for (;;) {
      const choice = bestGap(k, final, demoted)
      if (choice === undefined) return false
      const [j, n, text, s] = choice
      if (s !== END && s > ATTACHED && n < budget * SMALL_SHARE && queue[j - 1]!.enters && !demoted.has(j)) {
        // The extent after the lead-in lies inside the innermost structure whose children the
        // strongest gap there separates (gaps between a container's children are one weaker than
        // the gap before it): that structure is the one cut, if any.
        const inner = strongestInside(j, k, s)
        if (inner > ATTACHED) {
          const over = containerOver(j, final, inner + 1)
          if (over === 'wait') {
            waiting = { front: queue[0]!, j, s: inner + 1 }
            return 'wait'
          }
          if (over) {
            // And the gaps before it up to a stronger one: ending there would leave the lead-in
            // shorter still, not put it with the container's children.
            const strength = (g: number): number => demoted.get(g) ?? queue[g - 1]!.after
            for (let g = j; g >= 1 && (g === j || strength(g) <= s); g--) if (strength(g) > inner) demoted.set(g, inner)
            continue
          }
        }
      }
      const lead = commentLeadIn(j, s, final)
      if (lead !== false) return lead
      if (s === ATTACHED && attachedLast(j)) return true
      if (widowAfter(j, s)) {
        const earlier = joined(j - 1)
        const count = j - 1 <= prefix.length ? prefix[j - 2]! : meter.count(earlier)
        // A BPE count is not monotone in the text: the shorter chunk is checked too.
        if (count <= budget) {
          emit(j - 1, count, earlier, queue[j - 2]!.reason)
          return true
        }
      }
      emit(j, n, text ?? joined(j), s === END ? lastBoundary(queue[j - 1]!) : queue[j - 1]!.reason)
      return true
    }
  }

  /**
   * Where the declaration that unit g starts, after a run of attached comments or a docstring,
   * opens its container: at g (the function after its comment), or at a unit of the run (the
   * comment inside the function's container, after a banner comment or a class docstring); -1
   * when nothing opens there (a comment above a statement in a body is not a lead-in here).
   */
  const declarationStart = (g: number): number => {
    if (queue[g]!.opens) return g
    for (let r = g - 1; r >= 0; r--) {
      if (queue[r]!.opens) return r
      // The run goes back to the front: a comment cut in pieces, the first ones in chunks before,
      // where its container opened. A signature or decorator after it starts the declaration.
      if (r === 0) return queue[g]!.attachNext && !LEAD_IN.has(queue[g]!.kind) ? g : -1
      // Attached comments, or the pieces of one cut at lines or finer (a Javadoc over the budget).
      if (!LEAD_IN.has(queue[r - 1]!.kind) || queue[r - 1]!.after > LEVEL_STRENGTH.line) return -1
    }
    return -1
  }

  /**
   * The gap after a comment attached above a declaration (or after a class's docstring, before
   * its first method) is the weakest there is, so a chunk that began with the comment ended
   * inside the declaration when the two did not fit together: a signature, or most of a body,
   * went with the comment, the rest with the next declaration. When the chosen gap j (strength
   * s) lies inside such a declaration and the declaration fits a chunk alone, the chunk ends
   * after the comment instead (true once emitted) and the declaration starts the next one whole.
   * 'wait': whether it fits is not known yet. A heading still travels with the first part of
   * what follows it.
   */
  const commentLeadIn = (j: number, s: number, final: boolean): boolean | 'wait' => {
    for (let g = j - 1; g >= 1; g--) {
      const lead = queue[g - 1]!
      if (!LEAD_IN.has(lead.kind) || lead.after !== ATTACHED || LEAD_IN.has(queue[g]!.kind)) continue
      const opensAt = declarationStart(g)
      if (opensAt < 0) continue
      // Inside it (else an outer declaration may hold j): j and the gaps between g and j are
      // weaker than the one that closes it.
      const closes = structureGap(queue[g]!.depth - 1)
      let inside = s < closes
      for (let i = g + 1; i < j && inside; i++) inside = queue[i - 1]!.after < closes
      if (!inside) continue
      const over = containerOver(g, final, closes)
      if (over === 'wait') {
        waiting = { front: queue[0]!, j: g, s: closes }
        return 'wait'
      }
      if (over) return false
      // The comments inside its container too, if they fit with it: the chunk ends where it opens.
      let at = g
      if (opensAt >= 1 && opensAt < g) {
        const withComments = containerOver(opensAt, final, closes)
        if (withComments === 'wait') {
          waiting = { front: queue[0]!, j: opensAt, s: closes }
          return 'wait'
        }
        if (!withComments) at = opensAt
      }
      const text = joined(at)
      const n = at <= prefix.length ? prefix[at - 1]! : meter.count(text)
      if (n > budget) return false
      emit(at, n, text, queue[at - 1]!.reason)
      return true
    }
    return false
  }

  /**
   * Only gaps after lead-ins fit (gap j, ATTACHED), and unit j-1 leads into what follows (a
   * signature whose body goes on, a decorator, a heading): the chunk ends at the last gap after
   * a unit that leads into nothing, or is a docstring (which ends what it documents: a class's,
   * before its first method), so the signature starts the next chunk with its body (true once
   * emitted). It was left last: `def __init__(...):` ended a chunk, its docstring and body began
   * the next. Such a gap is weaker (a lead-in before it) or was demoted to keep a small chunk
   * from ending before a container too big for one chunk: a signature left last is worse. Only
   * when the signature fits a chunk with the unit after it: else it would be a chunk alone.
   */
  const attachedLast = (j: number): boolean => {
    if (!queue[j - 1]!.attachNext || queue[j - 1]!.kind === 'docstring' || j >= queue.length) return false
    for (let g = j - 1; g >= 1; g--) {
      const u = queue[g - 1]!
      if (u.attachNext && u.kind !== 'docstring') continue
      if (u.after === 0) return false // white space that blankLead keeps from ending a chunk
      if (meter.count(joined(j + 1, g)) > budget) return false
      const text = joined(g)
      const n = g <= prefix.length ? prefix[g - 1]! : meter.count(text)
      if (n > budget) return false
      emit(g, n, text, u.reason)
      return true
    }
    return false
  }

  /**
   * Whether a cut inside a block at gap j (strength s) would leave only a small rest of the block
   * for the next chunk (a code block's closing fence, a paragraph's last words): then the chunk
   * ends one piece earlier, at a gap as strong, and the rest does not go alone.
   */
  const widowAfter = (j: number, s: number): boolean => {
    if (s <= ATTACHED || s > LEVEL_STRENGTH.line || j < 2 || queue[j - 2]!.after !== s) return false
    let rest = 0
    for (let i = j; i < queue.length; i++) {
      const u = queue[i]!
      if (u.pending || (rest += estimate(u)) >= budget * WIDOW_SHARE) return false
      if (u.after > LEVEL_STRENGTH.line) return true
    }
    return false
  }

  /** Whether the queue may still all fit, judged from the proven prefix (cheap tokenizers). */
  const mayAllFit = (): boolean => {
    if (!cheap || proven.units === 0) return false
    let unproven = 0
    for (let i = proven.units; i < queue.length; i++) unproven += estimate(queue[i]!)
    // Certainly fits, or too little has arrived since the last proof to be worth a recount.
    return proven.count + unproven <= budget || unproven < budget * RECOUNT_SHARE
  }

  /**
   * With a tally: the number of leading units whose joined text fits, reading each unit once.
   * A remainder longer than a window is not read: it is cut first. -1 when an exact tokenizer
   * meets pieces of graphemes, or of words that its tally cannot settle: their joins are rarely
   * places where a BPE count adds up, so a tally would recount the growing chunk at every piece;
   * estimates decide there.
   */
  const fitting = (): number => {
    while (prefix.length < queue.length) {
      const last = prefix[prefix.length - 1]
      if (last !== undefined && last > budget) break
      const u = queue[prefix.length]!
      if (u.pending && u.text.length > window) break
      const fineness = u.level < 0 ? Infinity : LEVEL_STRENGTH[cutLevels[u.cut][u.level]!]
      if (!cheap && fineness <= LEVEL_STRENGTH.word) {
        // Words are tallied while the tally settles as it goes (at word ends in most scripts);
        // where it cannot (a run of CJK letters, no piece boundary) each add would recount the
        // growing chunk, so estimates decide there, and always for graphemes.
        if (fineness < LEVEL_STRENGTH.word || (tally !== undefined && (tally.backlog?.() ?? Infinity) > BACKLOG_MAX)) return -1
      } else if (!cheap && u.level >= 0 && tally !== undefined && (tally.backlog?.() ?? 0) > LINE_BACKLOG_MAX) {
        // Lines and sentences of a cut block too: a run of 20,000 blank lines is one piece that
        // never settles, and recounting it at every line took 40 s for 20 KB.
        return -1
      }
      // A long unit over budget alone is cut, not tallied: overBudget reads only a budget's
      // worth of it where the tokenizer can tell (`exceeds`), else counts it once for the tally.
      if (!cheap && u.tokens === undefined && u.text.length > budget * LONG_UNIT && overBudget(u)) break
      tally ??= newTally!()
      prefix.push(tally.add(u.text, u.tokens))
    }
    let k = prefix.length
    if (k > 0 && prefix[k - 1]! > budget) k--
    return k
  }

  /** The extent chosen by estimates, grown by exact counts; -1: wait for more. */
  const estimatedExtent = (final: boolean): number => {
    if (!final && (queuedEstimate <= budget || mayAllFit())) return -1
    let sum = 0
    let k = 0
    while (k < queue.length && sum + estimate(queue[k]!) <= budget) sum += estimate(queue[k++]!)
    // An estimate over budget is not proof: the exact count decides before anything is cut.
    if (k === 0 && !overBudget(queue[0]!)) k = 1
    // Grow the extent by exact counts: always with a cheap tokenizer; with an expensive one
    // when the extent would otherwise end inside a cut block or right after a heading, where
    // per-piece estimates overstate the joined count most.
    if (k > 0 && k < queue.length && (cheap || strongestGap(k) <= LEVEL_STRENGTH.line)) k = extend(k)
    return k
  }

  const pump = (final: boolean): void => {
    while (queue.length > 0) {
      if (waiting !== undefined && waiting.front === queue[0] && containerOver(waiting.j, final, waiting.s) === 'wait') return
      waiting = undefined
      let k = newTally === undefined ? -1 : fitting()
      if (k < 0) k = estimatedExtent(final)
      const close = carried > 0 || separate > 0 ? closingGap() : -1
      if (close > 0 && (k < 0 || k > close)) k = close
      if (k < 0 || (k === queue.length && !final)) return
      // At a closing gap the chunk ends whatever follows: nothing after it need be cut or waited for.
      if (k < queue.length && k !== close) {
        const next = queue[k]!
        // Inside a block being cut, see its real cut points before choosing.
        if (next.pending && cut(k)) continue
        // A piece of that block over budget alone is cut anyway: cut it now, so that the chunk
        // fills up to a cut inside it when no stronger gap comes first (a window's remainder
        // re-cut as one long "sentence" ended the chunk before it, a few words long).
        // Not into code points when it fits max_tokens: a grapheme is whole, with less overlap.
        const before = k > 0 ? queue[k - 1]!.after : END
        if (before > ATTACHED && before <= LEVEL_STRENGTH.line && overBudget(next) && cut(k, overLimit(next) ? 'codepoint' : 'grapheme')) continue
        // Only gaps after headings fit (or after white space that bestGap would not end a chunk
        // at), and what follows does not fit with them: the heading and the unit after it whole,
        // if together they fit max_tokens; else cut that unit so that the heading travels with
        // its first part (cutForHeading).
        if (k > 0 && strongestGap(k, blankLead(k)) <= ATTACHED) {
          // A comment and the start of the declaration under it: the comment alone, when the
          // declaration fits (with overlap, withinLimit would take its first statement too).
          const lead = commentLeadIn(k, ATTACHED, final)
          if (lead === 'wait') return
          if (lead) continue
          // First past the headings under it, that lead into the unit after them in turn.
          const e = headingsEnd(k)
          let done = false
          for (const end of e > k ? [e, k] : [k]) {
            const whole = withinLimit(end + 1, final)
            if (whole === 'wait') return
            if ((done = whole || cutForHeading(end))) break
          }
          if (done) continue
        }
      }
      if (k > 0) {
        const done = emitBest(k, final)
        if (done === 'wait') return
        if (done) continue
      }
      // Over the budget but within max_tokens: whole and alone, or with the unit after it if
      // it is a heading (with the headings under it: `lead` units). A heading that fits
      // max_tokens only alone is not cut for overlap's room either: it travels with the first
      // part of the unit after it when that unit is over max_tokens (as above), else it goes
      // alone. Cut it only over max_tokens.
      const attached = queue[0]!.after === ATTACHED
      const lead = attached ? headingsEnd(1) : 1
      let whole = withinLimit(attached ? lead + 1 : 1, final)
      if (whole === 'wait') return
      if (whole) continue
      if (attached && lead < queue.length && !overLimit(queue[0]!)) {
        if (cutForHeading(lead)) continue
        whole = withinLimit(lead, final)
        if (whole === 'wait') return
        if (whole) continue
      }
      if (!cut(0)) {
        // A single code point over budget: nothing finer exists. Core reports the breach.
        const text = queue[0]!.text
        emit(1, meter.count(text), text, final && queue.length === 1 ? lastBoundary(queue[0]!) : queue[0]!.reason)
      }
    }
  }

  const unitFrom = (start: number, text: string, kind: string, cut: CutStyle, attachNext: boolean, reason: Boundary, refs: RefUse[] | undefined, tokens: number | undefined, context: string | undefined): void => {
    if (text.length === 0) return
    // In offset order, as cut() hands them out (a plugin may give them in any).
    if (refs !== undefined && !inOffsetOrder(refs)) refs = [...refs].sort((a, b) => a.offset - b.offset)
    const prev = queue[queue.length - 1]
    if (prev !== undefined) {
      if (prev.attachNext && !exitedSinceUnit) {
        prev.after = ATTACHED
        prev.reason = 'block'
      } else {
        prev.after = structureGap(minDepthSinceUnit)
        prev.reason = structureChanged ? 'section' : prev.reason
        prev.enters = structureChanged && !exitedSinceUnit
      }
      prev.sectionsAfter = minSectionsSinceUnit
    }
    add({ start, text, kind, cut, level: -1, pending: false, path: containers.path, depth: containers.depth, opens: enteredSinceUnit, after: END, enters: false, sections: sectionDepth, sectionsAfter: sectionDepth, reason, attachNext, refs, est: -1, tokens, context })
    minDepthSinceUnit = containers.depth
    minSectionsSinceUnit = sectionDepth
    structureChanged = false
    exitedSinceUnit = false
    enteredSinceUnit = false
    pump(false)
  }

  return {
    push (event: DocEvent) {
      switch (event.type) {
        case 'enter':
          containers.enter(event.label)
          enteredSinceUnit = true
          isSection.push(event.kind === 'section')
          if (event.kind === 'section') sectionDepth++
          structureChanged = true
          break
        case 'exit':
          containers.exit()
          if (isSection.pop() === true) sectionDepth--
          minDepthSinceUnit = Math.min(minDepthSinceUnit, containers.depth)
          minSectionsSinceUnit = Math.min(minSectionsSinceUnit, sectionDepth)
          structureChanged = true
          exitedSinceUnit = true
          break
        case 'block':
          unitFrom(event.start, event.text, event.kind, event.cut ?? 'prose', event.attachNext === true, 'block', event.refs, event.tokens, event.context)
          break
        case 'record':
          unitFrom(event.start, event.text, event.kind ?? 'record', 'lines', false, 'record', undefined, event.tokens, event.context)
          break
      }
    },
    end (stopped?: boolean) {
      interrupted = stopped === true
      pump(true)
    },
  }
}
