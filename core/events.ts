/**
 * Events flow from a parser to a packer, in document order.
 *
 * Offsets (`start`, `end`) are positions in the decoded text as JavaScript string indices
 * (UTF-16 code units) counted from the start of the document. Core converts them to code
 * points, UTF-8 (or source-encoding) bytes and lines when it builds chunks.
 *
 * Tiling rule: the `text` of `block` and `record` events, in order, concatenates to the whole
 * decoded document: each event starts where the previous one ended, the first starts at 0.
 * Whitespace between two structures belongs to the structure before it (leading whitespace of
 * the document belongs to the first one). `enter`, `exit`, `definition` and `info` cover no text.
 */

/** A container opens: a section under a heading, a list, a class, an XML element, a sheet. */
export interface EnterEvent {
  type: 'enter'
  kind: string
  /** Shown in chunk `path` (a heading's text, `class Parser`, an element name, a sheet name). */
  label: string
  /** Offset where the container's text starts. */
  start: number
}

/** The innermost open container closes. */
export interface ExitEvent {
  type: 'exit'
  /** Offset where the container's text ends. */
  end: number
}

/** How a packer may cut inside a block that is over budget on its own. */
export type CutStyle =
  /** paragraph text: sentences, then words, then graphemes */
  | 'prose'
  /** code, tables, preformatted text: lines, then words, then graphemes */
  | 'lines'

/**
 * A use of a reference label inside a block (markdown `[text][label]`), for reference_definitions.
 * A parser may report uses of labels it has not seen defined yet: the engine keeps the uses of
 * labels that a `definition` event defines, wherever in the document that comes.
 */
export interface RefUse {
  label: string
  /** Offset of the use in the document. */
  offset: number
}

/** A leaf unit of structure: paragraph, heading, code fence, table row, statement, line. */
export interface BlockEvent {
  type: 'block'
  kind: string
  start: number
  end: number
  text: string
  /** How to cut this block if it alone is over budget. Default `prose`. */
  cut?: CutStyle
  /**
   * The block belongs with what follows it (a heading, a decorator, a doc comment): a packer
   * cuts right after it only when nothing else fits.
   */
  attachNext?: boolean
  refs?: RefUse[]
  /**
   * Text the block needs to be read alone (a table row's header row): a chunk that starts with
   * the block carries it as `context`, as records do.
   */
  context?: string
  /** Set by the engine only (see RecordEvent.tokens). */
  tokens?: number
}

/** One complete record: a log entry, a CSV row, a JSONL line, a JSON element, an XML child. */
export interface RecordEvent {
  type: 'record'
  start: number
  end: number
  text: string
  kind?: string
  /** Shown in `path` when a chunk holds this record alone (`$[12]`, `item[3]`). */
  label?: string
  /** Text the record needs to be read alone (a CSV header row). Chunks carry it as `context`. */
  context?: string
  /**
   * Extra chunk fields (xlsx: `sheet`, `row_start`, `row_end`). A chunk takes the fields of its
   * first record, and those whose name ends in `_end` from its last record.
   */
  fields?: Record<string, string | number>
  /**
   * The tokenizer's count of `text`, when the engine counted it ahead on another core (large
   * inputs, splitters that count units one by one). Set by the engine only; parsers leave it out.
   * A packer may take it for an exact count of `text` (`Tally.add`, `Meter.count`), never for an
   * estimate: its chunks must not depend on whether counts were made ahead (on how many cores).
   */
  tokens?: number
}

/** A reference definition (markdown `[id]: url "title"`). */
export interface DefinitionEvent {
  type: 'definition'
  label: string
  url: string
  title?: string
}

/** Document-level information: `title`, `front_matter`, `columns`, `sheets`, `language`, ... */
export interface InfoEvent {
  type: 'info'
  key: string
  value: unknown
  /** `document` (default) goes to `document.info`; `metadata` goes to the response `metadata` (e.g. `syntax_aware`). */
  scope?: 'document' | 'metadata'
}

export type DocEvent = EnterEvent | ExitEvent | BlockEvent | RecordEvent | DefinitionEvent | InfoEvent

/** Events that cover text. */
export type TextEvent = BlockEvent | RecordEvent

export function coversText (event: DocEvent): event is TextEvent {
  return event.type === 'block' || event.type === 'record'
}
