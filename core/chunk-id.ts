/**
 * A chunk's id: sha256 of `char_start:char_end\n` and the text in UTF-8 (a lone surrogate as
 * U+FFFD), its first 32 hex digits. One definition for the engine and for a thread that gives
 * ids to chunks made without them (the CLI's writer): makeChunkId reads nothing from outside but
 * its argument and Node's globals, so a thread can rebuild it from its source text.
 */
import { hash } from 'node:crypto'

export type ChunkId = (loc: { char_start: number, char_end: number }, text: string) => string

/**
 * `digest`: sha256 in hex. The bytes are written into a buffer kept between chunks: joining
 * the strings copied every chunk's text once more on the heap (15 of the 107 MB that 16 MB of log
 * allocated); a chunk of more than a megabyte is hashed from the joined string.
 */
export function makeChunkId (digest: (data: string | Uint8Array) => string): ChunkId {
  const most = 1 << 20
  let bytes = Buffer.allocUnsafeSlow(1 << 16)
  return (loc, text) => {
    const prefix = `${loc.char_start}:${loc.char_end}\n`
    const size = prefix.length + text.length * 3
    if (size > most) return digest(prefix + text).slice(0, 32)
    if (size > bytes.length) bytes = Buffer.allocUnsafeSlow(most)
    const head = bytes.write(prefix, 0, 'latin1')
    const length = head + bytes.write(text, head)
    return digest(bytes.subarray(0, length)).slice(0, 32)
  }
}

export const chunkId: ChunkId = makeChunkId((data) => hash('sha256', data, 'hex'))
