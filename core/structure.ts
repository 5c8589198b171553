/**
 * Small helpers plugins share through core (a plugin never imports another plugin).
 */

/** The most labels a `path` holds: deeper, it keeps the outermost PATH_HEAD and the innermost. */
export const MAX_PATH = 64
const PATH_HEAD = 8
const ELISION = '…'

/**
 * The labels of the open containers, for a packer's `path`. Unlabelled containers (lists,
 * items) count in `depth` but are not in `path`. `path` is replaced, never mutated, so a unit
 * may keep the array it saw. Past MAX_PATH labels, the middle ones give way to one `…`: each
 * step then copies at most MAX_PATH labels, and a chunk 40,000 XML elements deep does not
 * carry 40,000 of them (copying the whole path made such a document quadratic).
 */
export class ContainerPath {
  path: string[] = []
  /**
   * The innermost open container, as a number no other container of the document gets (0 for
   * the top level): two sibling elements with the same labels (`<group>`, `<group>`) are still
   * two containers.
   */
  id = 0
  private readonly labels: string[] = []
  private readonly named: string[] = []
  private readonly ids: number[] = []
  private entered = 0

  get depth (): number {
    return this.labels.length
  }

  /** Whether container `id` is open: the innermost, or one around it. */
  isOpen (id: number): boolean {
    return id === this.id || this.ids.includes(id)
  }

  enter (label: string): void {
    this.labels.push(label)
    this.ids.push(this.id)
    this.id = ++this.entered
    if (label === '') return
    this.named.push(label)
    this.path = this.shown()
  }

  exit (): void {
    this.id = this.ids.pop() ?? 0
    if (this.labels.pop() === '') return
    this.named.pop()
    this.path = this.shown()
  }

  private shown (): string[] {
    return elided(this.named)
  }
}

/** A new array of the labels shown: all, or past MAX_PATH the outermost and innermost ones. */
function elided (labels: string[]): string[] {
  if (labels.length <= MAX_PATH) return labels.slice()
  return [...labels.slice(0, PATH_HEAD), ELISION, ...labels.slice(labels.length - (MAX_PATH - PATH_HEAD - 1))]
}

/** A container path with a record's own label after it, still at most MAX_PATH labels. */
export function withLabel (path: string[], label: string): string[] {
  return elided([...path, label])
}

/**
 * The first `maxLines` lines of `text`, or its first `maxChars` characters when that comes
 * first: the sample a parser decides from (a log's start pattern, a CSV delimiter).
 */
export function leadingLines (text: string, maxLines: number, maxChars: number): string {
  let pos = 0
  for (let n = 0; n < maxLines; n++) {
    const nl = text.indexOf('\n', pos)
    if (nl === -1 || nl + 1 > maxChars) return text.slice(0, Math.min(text.length, maxChars))
    pos = nl + 1
  }
  return text.slice(0, pos)
}

/**
 * Holds the first lines of a stream until a parser has seen enough to decide how to read the
 * rest (a CSV delimiter, a log's start pattern); the parser then takes them back, in order.
 */
export class SampleBuffer {
  private held = ''
  private newlines = 0

  constructor (private readonly maxLines: number, private readonly maxChars: number) {}

  /** Adds a piece; true once `maxLines` lines or `maxChars` characters are held. */
  add (piece: string): boolean {
    this.held += piece
    let from = 0
    while (this.newlines < this.maxLines) {
      const nl = piece.indexOf('\n', from)
      if (nl === -1) break
      this.newlines++
      from = nl + 1
    }
    return this.newlines >= this.maxLines || this.held.length >= this.maxChars
  }

  /** What to decide from: the leading lines held (all of it once the input has ended). */
  sample (ended: boolean): string {
    return ended ? this.held : leadingLines(this.held, this.maxLines, this.maxChars)
  }

  /** Everything held, handed back once. */
  take (): string {
    const held = this.held
    this.held = ''
    return held
  }
}

/**
 * The text of consecutive units `[from, to)` of a packer: one slice of the source when the
 * engine still holds it (`ctx.source`), else the parts joined. A slice is cheaper downstream:
 * joined parts are copied into one string by the first step that reads them.
 */
export function joinedText (source: (start: number, end: number) => string | undefined, units: ReadonlyArray<{ start: number, text: string }>, from = 0, to = units.length): string {
  if (to - from > 1) {
    const last = units[to - 1]!
    const text = source(units[from]!.start, last.start + last.text.length)
    if (text !== undefined) return text
  }
  let text = ''
  for (let i = from; i < to; i++) text += units[i]!.text
  return text
}
