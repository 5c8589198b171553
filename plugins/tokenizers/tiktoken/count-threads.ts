/**
 * DOCSPLIT_COUNT_THREADS: how many worker threads count tokens for an exact tokenizer (see
 * poolFor in index.ts). Apart from the tokenizer so that the fronts can check the setting
 * before any split (the CLI) or at start (the service), not only when an exact tokenizer loads.
 */
import { availableParallelism } from 'node:os'
import { DocsplitError } from '../../../core/errors.js'

/** The most counting threads: past one or two, more only cost memory (see poolFor). */
export const MAX_COUNT_THREADS = 8

/** DOCSPLIT_COUNT_THREADS, checked: an integer from 0 to MAX_COUNT_THREADS, or the default. */
export function countThreads (setting: string | undefined): number {
  if (setting === undefined || setting.trim() === '') return Math.max(0, Math.min(2, availableParallelism() - 2))
  const n = /^\d{1,3}$/.test(setting.trim()) ? Number(setting.trim()) : NaN
  if (!(n >= 0 && n <= MAX_COUNT_THREADS)) {
    // The operator's own setting: shown when short and printable.
    const shown = setting.length <= 64 && /^[\x20-\x7e]*$/.test(setting) ? ` (got "${setting}")` : ''
    throw new DocsplitError('DOCSPLIT_INVALID_OPTION', `DOCSPLIT_COUNT_THREADS must be an integer from 0 to ${MAX_COUNT_THREADS}${shown}`)
  }
  return n
}
