/**
 * Small helpers plugins share through core (a plugin never imports another plugin).
 */

/**
 * The labels of the open containers, for a packer's `path`. Unlabelled containers (lists,
 * items) count in `depth` but are not in `path`. `path` is replaced, never mutated, so a unit
 * may keep the array it saw.
 */
export class ContainerPath {
  path: string[] = []
  private readonly labels: string[] = []

  get depth (): number {
    return this.labels.length
  }

  enter (label: string): void {
    this.labels.push(label)
    if (label !== '') this.path = [...this.path, label]
  }

  exit (): void {
    if (this.labels.pop() !== '') this.path = this.path.slice(0, -1)
  }
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
