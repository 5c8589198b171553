/**
 * Step 1 of fitting the approx tokenizer's weights: cuts the samples (token-samples.ts) into
 * pieces of 50-2000 tokens with several seeds, counts each piece with o200k_base and cl100k_base,
 * and writes the transition counts of model.ts for each piece. Step 2 is fit-approx.py.
 *
 *   node --import tsx bench/lib/approx-features.ts /tmp/approx-fit 42 7 99 123 11 13 17 19
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as o200k from 'gpt-tokenizer/encoding/o200k_base'
import * as cl100k from 'gpt-tokenizer/encoding/cl100k_base'
import { C, CLASS, CLASS_NAMES, NC, NEXT, NS, REPEATS, STATE_NAMES } from '../../plugins/tokenizers/approx/model.js'
import { FORMATS, cutPieces, formatTexts, rng } from './token-samples.js'

const AS_TEXT = { disallowedSpecial: new Set<string>() }

/**
 * How often each (state, class) transition occurs in `text`; RP for repeats, as count.ts (which
 * then charges a repeat at least its RUN_FLOOR, model.ts: the fit sees the runs of the samples
 * at their fitted cost, and the floors only add to it).
 */
export function transitions (text: string): number[] {
  const f = new Array<number>(NS * NC).fill(0)
  let state = 0
  let prev = -1
  for (let i = 0; i < text.length; i++) {
    const cu = text.charCodeAt(i)
    const cls = CLASS[cu]!
    const k = state * NC + cls
    f[cu === prev && REPEATS[cls] === 1 ? state * NC + C.RP : k]!++
    state = NEXT[k]!
    prev = cu
  }
  return f
}

export interface Piece { format: string, text: string, o200k: number, cl100k: number }

/** Pieces of 50-2000 tokens (by the larger of the two counts) of every sample format. */
export function samplePieces (seed: number): Piece[] {
  const out: Piece[] = []
  for (const format of FORMATS) {
    const cpt = (t: string): number => { const s = t.slice(0, 20000); return s.length / Math.max(1, o200k.countTokens(s, AS_TEXT)) }
    for (const text of cutPieces(formatTexts(format), rng(seed), cpt)) {
      const o = o200k.countTokens(text, AS_TEXT)
      const c = cl100k.countTokens(text, AS_TEXT)
      if (Math.max(o, c) >= 50 && Math.max(o, c) <= 2000) out.push({ format, text, o200k: o, cl100k: c })
    }
  }
  return out
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, ''))) {
  const [dir = '/tmp/approx-fit', ...seeds] = process.argv.slice(2)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, 'model.json'), JSON.stringify({ NEXT: [...NEXT], NC, NS, STATE_NAMES, CLASS_NAMES }))
  for (const seed of (seeds.length > 0 ? seeds : ['42']).map(Number)) {
    const pieces = samplePieces(seed)
    writeFileSync(join(dir, `features-${seed}.json`), JSON.stringify({
      X: pieces.map((p) => transitions(p.text)), o: pieces.map((p) => p.o200k), c: pieces.map((p) => p.cl100k), f: pieces.map((p) => p.format),
    }))
    console.log(`seed ${seed}: ${pieces.length} pieces`)
  }
}
