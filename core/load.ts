/**
 * Loads third-party plugin modules by name (`--plugin NAME`, `DOCSPLIT_PLUGINS=a,b`). A module
 * default-exports a plugin or a list of plugins made with definePlugin. Any failure names the
 * module and the reason, so a bad plugin stops the start with a message, not a stack trace.
 */
import { createRequire } from 'node:module'
import { pathToFileURL } from 'node:url'
import { isAbsolute, join, resolve } from 'node:path'
import { DocsplitError, isDocsplitError } from './errors.js'
import { register } from './registry.js'
import type { Plugin } from './types.js'

/**
 * A path (./x.js, /abs/x.js) is imported as a file; a package name is resolved from the
 * current directory first (the user's project), then from docsplit's own dependencies.
 */
function specifier (name: string): string {
  if (name.startsWith('.') || isAbsolute(name)) return pathToFileURL(resolve(name)).href
  try {
    return pathToFileURL(createRequire(join(process.cwd(), 'package.json')).resolve(name)).href
  } catch {
    return name
  }
}

/**
 * Plugin modules being imported now, as the caller named them. A module whose top-level
 * `await` never settles leaves its import pending forever, and Node then exits as soon as
 * nothing else is left to do: the CLI reads this to name the module instead of exiting
 * silently.
 */
const importing = new Set<string>()

/** The plugin modules whose import has started and not finished, as the caller named them. */
export function pluginsLoading (): string[] {
  return [...importing]
}

export async function loadPlugins (names: readonly string[]): Promise<void> {
  for (const name of names) {
    let mod: { default?: unknown }
    importing.add(name)
    try {
      mod = await import(specifier(name)) as { default?: unknown }
    } catch (error) {
      const notFound = (error as { code?: string }).code === 'ERR_MODULE_NOT_FOUND'
      throw new DocsplitError('DOCSPLIT_PLUGIN_LOAD_FAILED', notFound
        ? `plugin module "${name}" was not found; install it or give a path`
        : `plugin module "${name}" threw while loading: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
    } finally {
      importing.delete(name)
    }
    const exported = mod.default
    if (exported === undefined || exported === null || typeof exported !== 'object') {
      throw new DocsplitError('DOCSPLIT_PLUGIN_LOAD_FAILED', `plugin module "${name}" must default-export a plugin made with definePlugin (or a list of them)`)
    }
    try {
      register(exported as Plugin | Plugin[])
    } catch (error) {
      if (isDocsplitError(error)) throw new DocsplitError(error.code, `plugin module "${name}": ${error.message}`, { cause: error })
      throw error
    }
  }
}
