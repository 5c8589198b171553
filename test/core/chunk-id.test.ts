/**
 * Chunk ids: sha256 of `char_start:char_end\n` and the text, first 32 hex digits, the same
 * whether made by the engine or by a thread that rebuilt makeChunkId from its source text (the
 * CLI's writer does).
 */
import t from 'tap'
import fc from 'fast-check'
import { hash } from 'node:crypto'
import { chunkId, makeChunkId } from '../../core/chunk-id.js'

const byDefinition = (start: number, end: number, text: string): string => hash('sha256', `${start}:${end}\n${text}`, 'hex').slice(0, 32)
// Rebuilt from its source text, as the writer thread does.
const rebuilt = (new Function('digest', `return (${makeChunkId.toString()})(digest)`) as (d: (data: string | Uint8Array) => string) => typeof chunkId)((data) => hash('sha256', data, 'hex'))

t.test('the id is the definition, in the engine and rebuilt from source, for any text', async (t) => {
  fc.assert(fc.property(fc.nat(), fc.nat(), fc.string({ unit: fc.oneof(fc.constant('\uD800'), fc.constant('\uDC00'), fc.constant('é'), fc.constant('😀'), fc.string({ maxLength: 3 })) }), (start, end, text) => {
    const want = byDefinition(start, end, text)
    return chunkId({ char_start: start, char_end: end }, text) === want && rebuilt({ char_start: start, char_end: end }, text) === want
  }), { numRuns: 2000, seed: 7 })
  for (const size of [70_000, 400_000, 2_000_000]) {
    const text = 'é'.repeat(size)
    t.equal(chunkId({ char_start: 1, char_end: 2 }, text), byDefinition(1, 2, text), `${size} characters`)
  }
})
