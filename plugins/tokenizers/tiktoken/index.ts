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
import type { Tokenizer, TokenizerPlugin } from '../../../core/types.js'

export { countThreads, MAX_COUNT_THREADS } from './count-threads.js'

export const PACKAGE = 'gpt-tokenizer'

export type EncodingName = 'o200k_base' | 'cl100k_base' | 'p50k_base' | 'r50k_base'

/** Model names that select each encoding (the `tokenizer` option accepts them), as Python tiktoken maps them. */
export const MODEL_ALIASES: Readonly<Record<EncodingName, readonly string[]>> = {
  o200k_base: [
    'gpt-4o', 'gpt-4o-mini', 'chatgpt-4o-latest', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4.1-nano', 'gpt-4.5-preview',
    'o1', 'o1-mini', 'o1-pro', 'o3', 'o3-mini', 'o3-pro', 'o4-mini',
    'gpt-5', 'gpt-5-mini', 'gpt-5-nano', 'gpt-5-chat-latest',
  ],
  cl100k_base: [
    'gpt-4', 'gpt-4-turbo', 'gpt-4-32k', 'gpt-3.5-turbo', 'gpt-3.5-turbo-16k', 'gpt-3.5', 'gpt-35-turbo', 'davinci-002', 'babbage-002',
    'text-embedding-3-small', 'text-embedding-3-large', 'text-embedding-ada-002',
  ],
  // The edit models' encoding (p50k_edit) adds special tokens only, which docsplit counts as text.
  p50k_base: [
    'text-davinci-003', 'text-davinci-002', 'code-davinci-002', 'code-davinci-001', 'code-cushman-002', 'code-cushman-001',
    'davinci-codex', 'cushman-codex', 'text-davinci-edit-001', 'code-davinci-edit-001',
  ],
  r50k_base: [
    'davinci', 'curie', 'babbage', 'ada', 'text-davinci-001', 'text-curie-001', 'text-babbage-001', 'text-ada-001', 'gpt-3', 'gpt2', 'gpt-2',
    'text-similarity-davinci-001', 'text-similarity-curie-001', 'text-similarity-babbage-001', 'text-similarity-ada-001',
    'text-search-davinci-doc-001', 'text-search-curie-doc-001', 'text-search-babbage-doc-001', 'text-search-ada-doc-001',
    'code-search-babbage-code-001', 'code-search-ada-code-001',
  ],
}

/**
 * Starts of model names that select each encoding: dated snapshots (`gpt-4o-2024-08-06`),
 * variants (`o1-preview`, `gpt-4o-realtime-preview`), Azure deployments (`gpt-35-turbo-16k`),
 * fine-tunes (`ft:gpt-4o-mini-2024-07-18:org::id`). Python tiktoken's prefixes (the npm package
 * has none); the longest match wins.
 * Two more than tiktoken, whose `ft:gpt-4` would read a GPT-4.1 or o4-mini fine-tune as cl100k:
 * `ft:gpt-4.1` and `ft:o4-mini`. gpt-oss (o200k_harmony) differs from o200k_base only in
 * special tokens, counted as text here.
 */
export const MODEL_PREFIXES: Readonly<Record<EncodingName, readonly string[]>> = {
  o200k_base: [
    'gpt-4o-', 'chatgpt-4o-', 'gpt-4.1-', 'gpt-4.5-', 'gpt-5', 'o1-', 'o3-', 'o4-mini-', 'gpt-oss-',
    'ft:gpt-4o', 'ft:gpt-4.1', 'ft:o4-mini',
  ],
  cl100k_base: ['gpt-4-', 'gpt-3.5-turbo-', 'gpt-35-turbo-', 'ft:gpt-4', 'ft:gpt-3.5-turbo', 'ft:davinci-002', 'ft:babbage-002'],
  p50k_base: [],
  r50k_base: [],
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
    modelPrefixes: [...MODEL_PREFIXES[encoding]],
    load: async (): Promise<Tokenizer> => {
      // A failed load is not cached: installing the package fixes the next request.
      // load.js (the BPE counter, its threads) loads with the first exact tokenizer asked for.
      loading ??= import('./load.js')
        .then(async ({ importEncoding, loadEncoding, poolFor }) => await loadEncoding(encoding, importEncoding, poolFor(encoding)))
        .catch((err: unknown) => { loading = undefined; throw err })
      return await loading
    },
    available: packageAvailable,
  })
}

export const ENCODINGS: readonly EncodingName[] = ['o200k_base', 'cl100k_base', 'p50k_base', 'r50k_base']

export default ENCODINGS.map(plugin)
