/**
 * Floors: what any JavaScript splitter of these bytes must at least pay. `linescan` reads the file
 * stream, decodes UTF-8 and finds every line end (the floor for record/line splitting);
 * `gpt-tokenizer` counts the tokens of the same bytes with o200k_base (`countTokens`, the floor
 * for exact token counting), fed in line-aligned pieces of about 64 KiB (measured: faster than
 * 1 MiB pieces or one string, and than tiktoken's WASM `encode_ordinary`).
 */
import { createReadStream } from 'node:fs'
import type { Peer } from './types.js'

async function linescan (path: string, onProgress: (bytes: number) => void): Promise<number> {
  const dec = new TextDecoder('utf-8', { fatal: true })
  let lines = 0
  let bytes = 0
  for await (const buf of createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
    const s = dec.decode(buf, { stream: true })
    let i = -1
    while ((i = s.indexOf('\n', i + 1)) !== -1) lines++
    bytes += buf.length
    if ((bytes & ((64 << 20) - 1)) < buf.length) onProgress(bytes)
  }
  dec.decode()
  return lines
}

/** The tokenizer's module and tables, loaded before the clock (prepare). */
const o200k = async (): Promise<typeof import('gpt-tokenizer/encoding/o200k_base')> => await import('gpt-tokenizer/encoding/o200k_base')

async function encode (path: string, onProgress: (bytes: number) => void): Promise<number> {
  const { countTokens } = await o200k()
  const opts = { disallowedSpecial: new Set<string>() }
  const dec = new TextDecoder('utf-8', { fatal: true })
  let tokens = 0
  let bytes = 0
  let carry = ''
  for await (const buf of createReadStream(path, { highWaterMark: 1 << 16 }) as AsyncIterable<Buffer>) {
    const s = carry + dec.decode(buf, { stream: true })
    const cut = s.lastIndexOf('\n') + 1
    tokens += countTokens(s.slice(0, cut), opts)
    carry = s.slice(cut)
    bytes += buf.length
    if ((bytes & ((16 << 20) - 1)) < buf.length) onProgress(bytes)
  }
  carry += dec.decode()
  if (carry !== '') tokens += countTokens(carry, opts)
  return tokens
}

export const peers: Peer[] = [
  { id: 'linescan', label: 'floor: stream + decode + line scan', budget: 'chars', scan: linescan },
  { id: 'gpt-tokenizer', label: 'floor: gpt-tokenizer countTokens (o200k)', budget: 'o200k', scan: encode, prepare: async () => { (await o200k()).countTokens('set-up') } },
]
