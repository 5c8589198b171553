/**
 * Loading an encoding: gpt-tokenizer's module (required on the first count), wrapped as a
 * docsplit Tokenizer, with a pool of counting threads on large inputs. Loaded with the first
 * exact tokenizer a split asks for (index.ts holds only the plugins' declarations).
 */
import { createRequire } from 'node:module'
import { DocsplitError } from '../../../core/errors.js'
import type { Tokenizer } from '../../../core/types.js'
import { countUpToOf, installFixes } from './bpe-core.js'
import { BpeTally } from './tally.js'
import { CountPool } from './pool.js'
import { countThreads } from './count-threads.js'
import { PACKAGE, type EncodingName } from './index.js'

/** The part of a gpt-tokenizer encoding module that docsplit uses. */
export interface EncodingModule {
  countTokens (input: string, options?: { disallowedSpecial?: Set<string>, allowedSpecial?: Set<string> }): number
  encode (input: string, options?: { disallowedSpecial?: Set<string>, allowedSpecial?: Set<string> }): number[]
  /** Encodes piece by piece and stops past the limit: false then, else the count. */
  isWithinTokenLimit? (input: string, limit: number, options?: { disallowedSpecial?: Set<string> }): false | number
  /** bpe-core's count that stops past the limit (special tokens as text); undefined where it cannot tell. */
  countUpTo? (input: string, limit: number): number | undefined
}

export type Importer = (encoding: EncodingName) => Promise<unknown>

/**
 * The real loader: finds the package now (a missing one fails the load) and requires its
 * CommonJS build of the encoding on the first count. On a large input the first counts are
 * made on worker threads, so the main thread no longer loads its tables (about 150 ms for
 * o200k) before it starts to parse: 8.6 MB of markdown with o200k, 1435 -> 1347 ms.
 */
export const importEncoding: Importer = async (encoding) => {
  const require = createRequire(import.meta.url)
  const id = `${PACKAGE}/cjs/encoding/${encoding}`
  require.resolve(id)
  let mod: EncodingModule | undefined
  let upTo: EncodingModule['countUpTo']
  const loaded = (): EncodingModule => {
    if (mod === undefined) {
      let m: unknown
      try {
        m = require(id)
      } catch (err) {
        throw unavailable(encoding, err)
      }
      if (!isEncodingModule(m)) throw unavailable(encoding)
      installFixes(m)
      upTo = countUpToOf(m)
      mod = m
    }
    return mod
  }
  const lazy: EncodingModule = {
    countTokens: (input, options) => loaded().countTokens(input, options),
    encode: (input, options) => loaded().encode(input, options),
    isWithinTokenLimit: (input, limit, options) => loaded().isWithinTokenLimit!(input, limit, options),
    // Found once: count() reads it for every record.
    countUpTo: (input, limit) => {
      loaded()
      return upTo?.(input, limit)
    },
  }
  return lazy
}

/** The error for a missing (or broken) gpt-tokenizer. The message names the package, never a path. */
export function unavailable (encoding: EncodingName, cause?: unknown): DocsplitError {
  return new DocsplitError('DOCSPLIT_TOKENIZER_UNAVAILABLE',
    `tokenizer "${encoding}" needs the optional package ${PACKAGE}: npm install ${PACKAGE}`, { cause })
}

/** No special token is recognised: `<|endoftext|>` in a document is ordinary text. */
const AS_TEXT = Object.freeze({ disallowedSpecial: new Set<string>() })

function isEncodingModule (m: unknown): m is EncodingModule {
  return typeof m === 'object' && m !== null &&
    typeof (m as EncodingModule).countTokens === 'function' && typeof (m as EncodingModule).encode === 'function'
}

/** Wraps an encoding module as a docsplit Tokenizer; with a `pool`, it counts batches on other cores. */
export function tokenizerFrom (encoding: EncodingName, mod: EncodingModule, pool?: CountPool): Tokenizer & { encode (text: string): number[] } {
  const upTo = mod.countUpTo?.bind(mod)
  // bpe-core's count straight away, without gpt-tokenizer's special-token set-up on every call.
  const count = (text: string): number => text.length === 0 ? 0 : upTo?.(text, Infinity) ?? mod.countTokens(text, AS_TEXT)
  const tokenizer: Tokenizer & { encode (text: string): number[] } = {
    name: encoding,
    cheap: false,
    count,
    encode: (text: string): number[] => mod.encode(text, AS_TEXT),
    tally: () => new BpeTally(count, encoding === 'o200k_base' || encoding === 'cl100k_base'),
  }
  const within = mod.isWithinTokenLimit?.bind(mod)
  if (upTo !== undefined) tokenizer.exceeds = (text, limit) => text.length > 0 && (upTo(text, limit) ?? count(text)) > limit
  else if (within !== undefined) tokenizer.exceeds = (text, limit) => text.length > 0 && within(text, limit, AS_TEXT) === false
  if (pool !== undefined) tokenizer.countMany = (texts) => pool.countMany(texts)
  return tokenizer
}

/**
 * Worker threads counting for the main thread while it parses and packs: DOCSPLIT_COUNT_THREADS
 * of them (0: the main thread counts alone), by default one per core beyond two, at most two.
 * One worker counts logs at about 90 MB/s, as fast as the main thread does the rest, so more
 * cannot help; and a worker costs its own tables (about 230 ms to load, 70-100 MB). Measured on
 * 2 cores, 64 MB log with o200k: the main thread alone 1.7 s wall, 1.9 s CPU, 180 MB; with one
 * worker 1.5-1.6 s, 2.4-2.6 s, 330 MB; with two 1.5-1.6 s, 2.8-3.0 s, 370 MB; and with another
 * process busy on one core, the workers made it 1.5-1.9x slower (8.6 MB of markdown alike).
 */
export function poolFor (encoding: EncodingName): CountPool | undefined {
  const size = countThreads(process.env.DOCSPLIT_COUNT_THREADS)
  if (!CountPool.usable() || size === 0) return undefined
  return new CountPool(() => ({ encoding: import.meta.resolve(`gpt-tokenizer/encoding/${encoding}`), fixes: import.meta.resolve('./bpe-core.js') }), size)
}

/**
 * Loads one encoding through `importer` (injectable for tests). A failed import becomes
 * DOCSPLIT_TOKENIZER_UNAVAILABLE; a successful one is cached by the caller.
 */
export async function loadEncoding (encoding: EncodingName, importer: Importer = importEncoding, pool?: CountPool): Promise<Tokenizer & { encode (text: string): number[] }> {
  let mod: unknown
  try {
    mod = await importer(encoding)
  } catch (err) {
    throw unavailable(encoding, err)
  }
  if (!isEncodingModule(mod)) throw unavailable(encoding)
  return tokenizerFrom(encoding, mod, pool)
}
