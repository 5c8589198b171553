/**
 * Real documents live in ../shared/corpus (next to the repo), never in the repo. A fresh clone
 * has no such folder: corpus tests then skip with this message, and the generated-document
 * tests still hold every invariant.
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const corpusDir = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../shared/corpus')

export const corpusMissing = existsSync(corpusDir)
  ? false
  : `corpus not found at ${corpusDir}: corpus tests skipped (generated documents are still tested)`

/** Files under corpus/<folder>, recursively, optionally filtered by extension (with the dot). */
export function corpusFiles (folder: string, extensions?: string[]): string[] {
  const root = join(corpusDir, folder)
  if (!existsSync(root)) return []
  const out: string[] = []
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name)
      if (statSync(full).isDirectory()) walk(full)
      else if (extensions === undefined || extensions.some((e) => name.toLowerCase().endsWith(e))) out.push(full)
    }
  }
  walk(root)
  return out
}
