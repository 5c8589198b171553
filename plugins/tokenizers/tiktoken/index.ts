/**
 * Exact BPE tokenizers (cl100k_base, o200k_base, p50k_base, r50k_base) through the optional
 * package `gpt-tokenizer`: pure JavaScript, the same token ids as OpenAI's tiktoken, and faster
 * than the tiktoken WASM build for counting. The package is looked for on the first `load()` and
 * loaded on the first count, so a missing package is a typed DOCSPLIT_TOKENIZER_UNAVAILABLE at
 * request time, never a crash at start.
 *
 * Special-token text such as `<|endoftext|>` is counted as ordinary text: uploads are untrusted,
 * and a document that mentions a special token must neither throw nor shrink to one token.
 */
import { createRequire } from 'node:module'
import { definePlugin } from '../../../core/registry.js'
import { DocsplitError } from '../../../core/errors.js'
import type { Tokenizer, TokenizerPlugin } from '../../../core/types.js'
import { countUpToOf, installFixes } from './bpe-core.js'
import { BpeTally } from './tally.js'
import { CountPool } from './pool.js'
import { countThreads } from './count-threads.js'

export { countThreads, MAX_COUNT_THREADS } from './count-threads.js'

export const PACKAGE = 'gpt-tokenizer'

export type EncodingName = 'o200k_base' | 'cl100k_base' | 'p50k_base' | 'r50k_base'

/** Model names that select each encoding (the `tokenizer` option accepts them). */
export const MODEL_ALIASES: Readonly<Record<EncodingName, readonly string[]>> = {
  o200k_base: [
    'gpt-4o', 'gpt-4o-mini', 'chatgpt-4o-latest', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'gpt-4.5-preview',
    'o1', 'o1-mini', 'o1-pro', 'o3', 'o3-mini', 'o3-pro', 'o4-mini',
    'gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'gpt-5-chat-latest',
  ],
  cl100k_base: [
    'gpt-4', 'gpt-4-turbo', 'gpt-4-32k', 'gpt-3.5-turbo', 'gpt-3.5-turbo-16k',
    'text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002',
  ],
  p50k_base: ['text-davinci-003', 'text-davinci-002', 'code-davinci-002', 'code-davinci-001', 'code-cushman-002', 'code-cushman-001'],
  r50k_base: ['davinci', 'curie', 'babbage', 'ada', 'text-davinci-001', 'text-curie-001', 'text-babbage-001', 'text-ada-001', 'gpt-3', 'gpt2'],
}

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
function poolFor (encoding: EncodingName): CountPool | undefined {
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

let presence: Promise<boolean> | undefined

/** Whether gpt-tokenizer can be found here, without loading its tables. */
async function packageAvailable (): Promise<boolean> {
  presence ??= Promise.resolve().then(() => {
    createRequire(import.meta.url).resolve(`${PACKAGE}/encoding/r50k_base`)
    return true
  }).catch(() => false)
  return await presence
}

const DESCRIPTIONS: Record<EncodingName, string> = {
  o200k_base: 'Exact OpenAI o200k_base BPE counts (GPT-4o, GPT-4.1, GPT-5, o-series) via gpt-tokenizer.',
  cl100k_base: 'Exact OpenAI cl100k_base BPE counts (GPT-4, GPT-3.5, text-embedding-3) via gpt-tokenizer.',
  p50k_base: 'Exact OpenAI p50k_base BPE counts (text-davinci-003, code-davinci-002) via gpt-tokenizer.',
  r50k_base: 'Exact OpenAI r50k_base (GPT-3) BPE counts via gpt-tokenizer.',
}

function plugin (encoding: EncodingName): TokenizerPlugin {
  let loading: Promise<Tokenizer> | undefined
  return definePlugin({
    kind: 'tokenizer',
    name: encoding,
    docsplit: '^1',
    description: DESCRIPTIONS[encoding],
    extra: PACKAGE,
    aliases: [...MODEL_ALIASES[encoding]],
    load: async (): Promise<Tokenizer> => {
      // A failed load is not cached: installing the package fixes the next request.
      loading ??= loadEncoding(encoding, importEncoding, poolFor(encoding)).catch((err: unknown) => { loading = undefined; throw err })
      return await loading
    },
    available: packageAvailable,
  })
}

export const ENCODINGS: readonly EncodingName[] = ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base']

export default ENCODINGS.map(plugin)
