/**
 * The record packer: consecutive whole records up to the budget, never a cut inside one.
 * A record over budget on its own becomes a chunk alone, marked `protected` when it is over
 * max_tokens. (With overlap the budget is max_tokens - overlap_tokens, room for the overlap; a
 * record between the two goes alone, not protected, and gets what overlap still fits.) Records
 * with a different context (CSV header, sheet), or of containers side by side, never share a
 * chunk (records of a container and of one inside it do). Text that a
 * parser emits as blocks (a YAML file of comments only, a JSONL file of blank lines, a third
 * party's text between records) travels with the records around it; such a block over
 * max_tokens on its own is not a record, so it is cut at lines, then words, then graphemes,
 * like any other text (at sentences first when the parser marks it `cut: 'prose'`).
 */
import { ContainerPath, joinedText, withLabel } from '../../../core/structure.js'
import type { CutStyle, DocEvent } from '../../../core/events.js'
import { cutBoundary, cutLevels, thinCuts } from '../../../core/segment.js'
import type { Boundary, ChunkDraft, PackerContext, PackerHandler, Tally } from '../../../core/types.js'

interface Unit {
  start: number
  text: string
  /** The estimate, -1 until needed. */
  est: number
  /** The exact count, when the engine counted the record ahead. */
  tokens: number | undefined
  kind: string
  path: string[]
  /** Index of the record in the document, or -1 for a block between records. */
  record: number
  label: string | undefined
  /** The innermost container it is in (`ContainerPath.id`): records of two side by side never share a chunk. */
  container: number
  context: string | undefined
  fields: Record<string, string | number> | undefined
  /** The chunk's boundary when it ends after this unit: `record`, `block`, or a cut's level. */
  ends: Boundary
}

function isPrefix (prefix: string[], path: string[]): boolean {
  return prefix.length <= path.length && prefix.every((x, i) => x === path[i])
}

function commonPrefix (a: string[], b: string[]): string[] {
  let n = 0
  while (n < a.length && n < b.length && a[n] === b[n]) n++
  return a.slice(0, n)
}

/**
 * A record that is the context it carries (a CSV header row, with its line ending): the chunks
 * after it carry it as `context` already, so overlap does not repeat it as a record.
 */
function isOwnContext (u: Unit): boolean {
  return u.context !== undefined && u.text.startsWith(u.context) && /^[\r\n]*$/.test(u.text.slice(u.context.length))
}

function chunkFields (units: Unit[]): Record<string, string | number> | undefined {
  let first: Unit | undefined
  let last: Unit | undefined
  for (const u of units) {
    if (u.fields === undefined) continue
    first ??= u
    last = u
  }
  if (first === undefined) return undefined
  const fields = { ...first.fields }
  for (const [name, value] of Object.entries(last!.fields!)) {
    if (name.endsWith('_end')) fields[name] = value
  }
  return fields
}

export function createRecordPacker (ctx: PackerContext): PackerHandler {
  const { meter } = ctx
  /** Records pack to `budget`, which leaves room for overlap; one alone may reach `limit`. */
  const budget = ctx.budget
  const limit = ctx.options.max_tokens
  const containers = new ContainerPath()
  let records = 0
  let current: Unit[] = []
  let currentEstimate = 0
  /** The last record in `current`, for grouping; the last record of the previous chunk. */
  let lastRecord: Unit | undefined
  let previousRecord: Unit | undefined
  /** A tally for each chunk, when the tokenizer has one: the exact count of `current`. */
  const newTally = meter.tokenizer.tally?.bind(meter.tokenizer)
  let tally: Tally | undefined
  let tallied = 0
  /** Whether `tallied` is the count of `current` (else estimates and a count at flush decide). */
  let chunkTallied = false
  /**
   * An expensive tokenizer's tally may reread the text after its last additive place at every
   * record (BPE: a run of punctuation is one piece), so a chunk of many small records goes on by
   * estimates after this many: rereading then costs at most this many chunk lengths.
   */
  const tallyRecordsMax = meter.tokenizer.cheap === true ? Infinity : 32
  /**
   * The last draft, held back while it may still change: blocks after it may join it (heldJoin),
   * and the final one says `end` (when the document ended, not an error). A record that starts
   * the next chunk settles it: it goes out then, not a chunk later (`tail -f app.log | docsplit`
   * had each chunk out only once the next one was full too).
   */
  let held: ChunkDraft | undefined

  const release = (draft: ChunkDraft): void => {
    if (held !== undefined) ctx.emit(held)
    held = draft
  }

  /** Overlap starts are only read when the chunks overlap. */
  const overlapping = ctx.options.overlap_tokens > 0

  /** The draft of `units`, protected when its count is over max_tokens (only a record alone can be). */
  const draftOf = (units: Unit[], text: string, tokenCount: number): ChunkDraft => {
    const first = units[0]!
    const kinds: string[] = []
    let firstRecord: Unit | undefined
    let endRecord: Unit | undefined
    let recordCount = 0
    let context: string | undefined
    /** The path around the records (of one container, or of one inside another). */
    let around: string[] | undefined
    for (const u of units) {
      if (!kinds.includes(u.kind)) kinds.push(u.kind)
      if (u.record < 0) continue
      firstRecord ??= u
      endRecord = u
      recordCount++
      context ??= u.context
      // (a log's records share one path array: no prefix is read for them)
      if (around === undefined) around = u.path
      else if (around !== u.path && !isPrefix(around, u.path)) around = commonPrefix(around, u.path)
    }
    const single = recordCount === 1 ? firstRecord!.label : undefined
    const draft: ChunkDraft = {
      start: first.start,
      end: first.start + text.length,
      text,
      tokenCount,
      // the first record's: text before it (brackets that open its container) is outside it
      path: single !== undefined ? withLabel(firstRecord!.path, single) : around ?? first.path,
      kinds,
      boundary: units[units.length - 1]!.ends,
    }
    if (overlapping) {
      draft.overlapStarts = []
      // Every record start, the first's too: a chunk of one record may be the next one's overlap.
      for (const u of units) if (u.record >= 0 && !isOwnContext(u)) draft.overlapStarts.push(u.start - first.start)
    }
    if (tokenCount > limit) draft.protected = true
    // Overlap never repeats records of another container or context (another sheet, header).
    if (previousRecord !== undefined && firstRecord !== undefined &&
      (previousRecord.container !== firstRecord.container || (previousRecord.context ?? '') !== (firstRecord.context ?? ''))) draft.noOverlap = true
    if (endRecord !== undefined) {
      previousRecord = endRecord
      draft.recordStart = firstRecord!.record
      draft.recordCount = recordCount
      if (context !== undefined) draft.context = context
    }
    const fields = chunkFields(units)
    if (fields !== undefined) draft.fields = fields
    return draft
  }

  /**
   * Blocks that fit with neither neighbour within the budget (a separator, end tags, `\n\t`
   * between XML elements) would be a chunk alone, with overlap a copy of the chunk before plus
   * them. They join a neighbour instead: a record over max_tokens anyway (protected) when they
   * are small, at most an eighth of max_tokens (longer text between records, comments, stays a
   * chunk); or, with overlap (records pack to max_tokens - overlap_tokens), a neighbour they stay
   * within max_tokens with (see joinedFits), when they are small or it is a record that goes
   * alone anyway; that chunk's overlap gets the room left. Without overlap nothing joins that
   * way: what fits in max_tokens fits in the budget.
   */
  const mayJoin = (neighbour: number, lone: boolean, blocks: number): boolean => 8 * blocks <= limit || (neighbour <= limit && lone)

  /** Whether the joined chunk, `together` tokens, is within max_tokens, or needs not be (its neighbour was over already). */
  const joinedFits = (neighbour: number, together: number): boolean => neighbour > limit || together <= limit

  /**
   * The exact count of the chunk before with the blocks `units` (`count` tokens) joined, when
   * they go with it (see mayJoin); -1 when they do not.
   */
  const heldJoin = (units: Unit[], count: number): number => {
    const before = held
    if (units.length === 0 || before === undefined || previousRecord === undefined) return -1
    if (!units.every((u) => u.record < 0 && isPrefix(u.path, previousRecord!.path))) return -1
    const lone = before.recordCount === 1 && before.tokenCount > budget
    if (!mayJoin(before.tokenCount, lone, count)) return -1
    const together = meter.count(before.text + joinedText(ctx.source, units))
    return joinedFits(before.tokenCount, together) ? together : -1
  }

  const joinHeld = (units: Unit[], tokenCount: number): void => {
    const draft = held!
    draft.text += joinedText(ctx.source, units)
    draft.end = draft.start + draft.text.length
    draft.tokenCount = tokenCount
    // BPE counts may fall as text is added (`]]>` then `\n\n` merge): then it is not over
    if (draft.tokenCount <= limit) delete draft.protected
    for (const u of units) if (!draft.kinds.includes(u.kind)) draft.kinds.push(u.kind)
    draft.boundary = units[units.length - 1]!.ends
  }

  /**
   * Emits `current`, dropping trailing records until the exact count fits; returns what was
   * dropped. `joined`: heldJoin of `current` when the caller has it already.
   */
  const flush = (joined = lastRecord === undefined ? heldJoin(current, chunkTallied ? tallied : currentEstimate) : -1): Unit[] => {
    if (current.length === 0) return []
    if (joined >= 0) {
      joinHeld(current, joined)
      current = []
      currentEstimate = 0
      chunkTallied = false
      return []
    }
    if (chunkTallied) {
      release(draftOf(current, joinedText(ctx.source, current), tallied))
      current = []
      lastRecord = undefined
      chunkTallied = false
      return []
    }
    // Prefix lengths, so any number of leading units is one slice of the joined text.
    const ends: number[] = []
    let length = 0
    for (const u of current) ends.push(length += u.text.length)
    let text = joinedText(ctx.source, current)
    let keep = current.length
    let n = meter.count(text)
    if (n > budget && keep > 1) {
      // Over by the exact count: binary-search how many units fit (O(log n) counts, not O(n)).
      let fits = 1
      let fails = keep
      let fitsCount = -1
      while (fails - fits > 1) {
        const mid = (fits + fails) >> 1
        const c = meter.count(text.slice(0, ends[mid - 1]))
        if (c <= budget) { fits = mid; fitsCount = c } else fails = mid
      }
      keep = fits
      text = text.slice(0, ends[keep - 1])
      n = fitsCount >= 0 ? fitsCount : meter.count(text)
    }
    const units = current.slice(0, keep)
    const carry = current.slice(keep)
    release(draftOf(units, text, n))
    current = []
    currentEstimate = 0
    lastRecord = undefined
    return carry
  }

  /**
   * Whether `u` may join the current chunk. Records join records of the same context, in the
   * same container or one inside the other, and a record of kind `header` without context joins the rows after it. Rows above
   * a CSV header (a title, notes: no context) never share a chunk with the header's rows, which
   * would carry a header that is not theirs. A block joins unless it opens another container
   * (it then travels with the records after it); a closing block stays behind.
   */
  const sameGroup = (u: Unit): boolean => {
    const last = lastRecord
    if (last === undefined) return true
    if (u.record < 0) return isPrefix(u.path, last.path)
    const compatible = last.context === u.context || (last.context === undefined && last.kind === 'header')
    // Of one container, or of one inside the other (a JSON element's last member, then the next
    // element): not of two side by side (two sheets, two XML parents). `u` is in the container
    // open now: one entered after it is inside it.
    return compatible && (last.container === u.container || last.container > u.container || containers.isOpen(last.container))
  }

  /** Whether the blocks in `current` (`tallied` tokens) go with `u`, a record, `n` the count of both. */
  const joinsNext = (u: Unit, n: number): boolean => {
    const alone = meter.count(u.text, u.tokens)
    return mayJoin(alone, alone > budget, tallied) && joinedFits(alone, n)
  }

  /**
   * With a tally, the exact count of `current` grows record by record: each record is
   * read about once, and a chunk never needs a recount or a repair.
   */
  const addTallied = (u: Unit, startTally: () => Tally): void => {
    if (tally !== undefined && current.length > 0 && sameGroup(u)) {
      const n = tally.add(u.text, u.tokens)
      if (n <= budget) {
        tallied = n
        take(u)
        return
      }
      // Blocks only so far, that fit with neither the chunk before nor this record: they go
      // with the chunk before, or with this record (see mayJoin), not in a chunk alone.
      const blocksOnly = lastRecord === undefined && u.record >= 0
      const joined = blocksOnly ? heldJoin(current, tallied) : -1
      if (blocksOnly && joined < 0 && joinsNext(u, n)) {
        tallied = n
        take(u)
        flush()
        return
      }
      tallied = tally.undo()
      flush(blocksOnly ? joined : undefined)
      // The record that did not fit opens the next chunk, without being read again.
      tallied = tally.restart?.() ?? (tally = startTally()).add(u.text, u.tokens)
    } else {
      flush()
      tally = startTally()
      tallied = tally.add(u.text, u.tokens)
    }
    chunkTallied = true
    take(u)
    // Over budget on its own: it goes alone (protected if over max_tokens).
    if (tallied > budget) flush()
  }

  const take = (u: Unit): void => {
    current.push(u)
    if (u.record < 0) return
    lastRecord = u
    if (held !== undefined) {
      ctx.emit(held)
      held = undefined
    }
  }

  const add = (u: Unit): void => {
    if (newTally !== undefined && (current.length === 0 || (chunkTallied && current.length < tallyRecordsMax))) return addTallied(u, newTally)
    if (chunkTallied) {
      // From here on estimates decide; the exact count so far is the best one.
      chunkTallied = false
      currentEstimate = tallied
    }
    // Never the count made ahead: estimates must be the same whether counts were made on other
    // cores or not, or the chunks would depend on the machine.
    if (u.est < 0) u.est = meter.estimate(u.text)
    // Each flush emits at least one unit, so this ends; carried units go back in first.
    while (current.length > 0 && (!sameGroup(u) || currentEstimate + u.est > budget)) {
      for (const carried of flush()) add(carried)
      // The carried units started a tallied chunk: `u` joins it through the tally too, or the
      // chunk's count would miss it.
      if (chunkTallied) return add(u)
    }
    take(u)
    currentEstimate += u.est
    // Over budget on its own: it goes alone (protected if the exact count is over max_tokens).
    if (current.length === 1 && u.est > budget) {
      for (const carried of flush()) add(carried)
    }
  }

  const unit = (start: number, text: string, kind: string, record: number, ends: Boundary, label?: string, context?: string, fields?: Record<string, string | number>, tokens?: number): void => {
    if (text.length === 0) return
    add({ start, text, est: -1, tokens, kind, path: containers.path, container: containers.id, record, label, context, fields, ends })
  }

  /**
   * A block between records, cut into pieces that each fit max_tokens (only a single code point
   * may not). Grapheme cuts are kept budget/16 characters apart, so a megabyte without a space
   * is not a million pieces.
   */
  const blockUnits = (start: number, text: string, kind: string, tokens: number | undefined, level = 0, ends: Boundary = 'block', cut?: CutStyle): void => {
    // Sentences first only where the parser says the text is prose (XML's mixed content): a
    // block between records is mostly syntax, tags and white space.
    const levels = cut === 'prose' ? cutLevels.prose : cutLevels.lines
    if (level >= levels.length || meter.count(text, tokens) <= limit) return unit(start, text, kind, -1, ends, undefined, undefined, undefined, tokens)
    const name = levels[level]!
    let cuts = ctx.segmenters.cuts(text, name)
    if (name === 'grapheme') cuts = thinCuts(cuts, Math.max(1, budget >> 4))
    if (cuts.length === 0) return blockUnits(start, text, kind, tokens, level + 1, ends)
    let from = 0
    for (const to of [...cuts, text.length]) {
      // A piece ends at a cut of this level, but the last ends where the whole text did.
      blockUnits(start + from, text.slice(from, to), kind, undefined, level + 1, to === text.length ? ends : cutBoundary[name], cut)
      from = to
    }
  }

  return {
    push (event: DocEvent) {
      switch (event.type) {
        case 'enter':
          containers.enter(event.label)
          break
        case 'exit':
          containers.exit()
          break
        case 'block':
          blockUnits(event.start, event.text, event.kind, event.tokens, 0, 'block', event.cut)
          break
        case 'record':
          unit(event.start, event.text, event.kind ?? 'record', records++, 'record', event.label, event.context, event.fields, event.tokens)
          break
      }
    },
    end (interrupted?: boolean) {
      let carry = flush()
      while (carry.length > 0) {
        const rest = carry
        carry = []
        for (const u of rest) add(u)
        carry = flush()
      }
      if (held !== undefined) {
        if (interrupted !== true) held.boundary = 'end'
        ctx.emit(held)
        held = undefined
      }
    },
  }
}
