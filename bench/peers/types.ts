/**
 * The contract between bench/child.ts and one peer adapter. A peer either splits a string (it is
 * given the input in line-aligned windows, see child.ts) or, for the floors, consumes the file
 * stream itself. `budget` says what its chunk size counts, for the report.
 */
import type { InputKind } from '../inputs.js'

export type Budget = 'chars' | 'o200k'

export interface Peer {
  /** Stable id used on the command line and in results (`langchain-recursive-chars`). */
  id: string
  /** What the report shows. */
  label: string
  budget: Budget
  /** The inputs it applies to; undefined means every input. */
  kinds?: readonly InputKind[]
  /** Splits one text into chunk texts. */
  create?: (kind: InputKind) => Promise<(text: string) => Promise<string[]>>
  /** A floor: reads the file itself and returns a count (of lines or tokens). */
  scan?: (path: string, onProgress: (bytes: number) => void) => Promise<number>
  /** A floor's set-up (loading its tables), run before the clock. */
  prepare?: () => Promise<void>
}

/** o200k_base through the tiktoken package (WASM; a root devDependency), as a peer's length function. */
export async function tiktokenO200k (): Promise<{ count: (t: string) => number, encode: (t: string) => number[], decode: (ids: number[]) => string }> {
  const { get_encoding } = await import('tiktoken')
  const enc = get_encoding('o200k_base')
  const td = new TextDecoder()
  return {
    count: (t) => enc.encode_ordinary(t).length,
    encode: (t) => Array.from(enc.encode_ordinary(t)),
    decode: (ids) => td.decode(enc.decode(Uint32Array.from(ids))),
  }
}
