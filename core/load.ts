/**
 * Loads third-party plugin modules by name (`--plugin NAME`, `DOCSPLIT_PLUGINS=a,b`). A module
 * default-exports a plugin or a list of plugins made with definePlugin. Any failure names the
 * module and the reason, so a bad plugin stops the start with a message, not a stack trace.
 */
import { existsSync, realpathSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { DocsplitError, isDocsplitError, listValues, quoted } from './errors.js'
import { listPackers, parsersWithUnknownSplitter, register } from './registry.js'
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
 * Whether an import failed for a module that is not there. By code (MODULE_NOT_FOUND: a
 * CommonJS require()), else by Node's message: an error thrown in a module loader hook (tsx,
 * for one, in tests) can reach the importer without its code.
 */
export function isModuleNotFound (error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return true
  return error instanceof Error && /^Cannot find (?:module|package) '/.test(error.message)
}

/** The package a bare specifier names: `pkg` of `pkg/sub.js`, `@scope/pkg` of `@scope/pkg/sub.js`. */
function packageName (spec: string): string {
  const parts = spec.split('/')
  return (spec.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/')
}

/** The package a module-not-found error says is missing, when Node names one (not a file). */
export function missingPackage (error: unknown): string | undefined {
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(error instanceof Error ? error.message : '')?.[1]
  if (missing === undefined || missing.startsWith('.') || missing.startsWith('file:') || isAbsolute(missing)) return undefined
  return packageName(missing)
}

/**
 * Why importing plugin `name` (from `url`, as specifier() made it) failed with a module not
 * found: the plugin itself is missing, or one of its own imports is. Node names the missing
 * module in its message (import: `Cannot find package 'yaml' imported from /abs/plugin.js`, or
 * an absolute path for a file; require: the specifier as written); the message shows it as a
 * package name or a path relative to the plugin, never a path of this machine.
 */
function notFoundMessage (name: string, url: string, error: unknown): string {
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(error instanceof Error ? error.message : '')?.[1]
  const entry = url.startsWith('file:') ? fileURLToPath(url) : undefined
  const found = entry !== undefined
    ? existsSync(entry)
    : missing !== undefined && missing !== name && missing !== packageName(name)
  if (!found) {
    // `plugins/x.js` names a package; the file of that name is `./plugins/x.js`.
    if (entry === undefined && existsSync(resolve(name))) return `plugin module ${quoted(name)} is not a package; to load the file, give it as a path: ./${name}`
    return `plugin module ${quoted(name)} was not found; install it or give a path`
  }
  if (missing === undefined) return `plugin module ${quoted(name)} could not load one of its dependencies; install them`
  const path = missing.startsWith('file:') ? fileURLToPath(missing) : missing
  // As the plugin wrote it (require() reports that): a file relative to the importing one, or a package.
  if (path.startsWith('.')) return `plugin module ${quoted(name)} could not load "${path}", which it imports: no such file`
  if (!isAbsolute(path)) return `plugin module ${quoted(name)} could not load its dependency "${packageName(path)}"; install it`
  // A file: one inside a package (its exports point at a file that is missing) is named from
  // the package on, one of the plugin's own relative to the plugin.
  const modules = `${sep}node_modules${sep}`
  const at = path.lastIndexOf(modules)
  if (at !== -1) return `plugin module ${quoted(name)} could not load its dependency "${path.slice(at + modules.length).split(sep).join('/')}"; reinstall it`
  const own = entry !== undefined ? relative(dirname(entry), path) : ''
  const shown = own !== '' && !own.startsWith('..') && !isAbsolute(own) ? `./${own.split(sep).join('/')}` : basename(path)
  return `plugin module ${quoted(name)} could not load "${shown}", which it imports: no such file`
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

/**
 * Why a module threw while loading, without Node's paths of this machine (`imported from /...`,
 * the module's own path, which shows as the name given). TypeScript given as it is gets told
 * to compile it: Node 20 reads no `.ts`.
 */
function loadFailure (name: string, url: string, error: unknown): string {
  if ((error as { code?: unknown } | null)?.code === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[cm]?tsx?$/.test(name)) {
    return `plugin module ${quoted(name)} is TypeScript, which Node does not load: compile it (tsc) and give the .js it writes`
  }
  let message = error instanceof Error ? error.message : String(error)
  if (url.startsWith('file:')) {
    // Its own path as the name given, a file beside it (`vocab.json`) as beside that name.
    const path = fileURLToPath(url)
    message = message.replaceAll(url, name).replaceAll(path, name).replaceAll(dirname(path) + sep, `${dirname(name)}/`)
  }
  return `plugin module ${quoted(name)} threw while loading: ${message.replace(/ imported from .*/gs, '')}`
}

/** A directory given as a plugin: said before Node says it (with docsplit's own path). */
function isDirectory (url: string): boolean {
  try {
    return url.startsWith('file:') && statSync(fileURLToPath(url)).isDirectory()
  } catch {
    return false
  }
}

/** How long a plugin module may take to load (its top-level code and awaits). */
export const LOAD_TIMEOUT_MS = 30_000

/** A module that did not finish loading in time. */
class LoadTimeout extends DocsplitError {}

/** `import(url)`, or a failure once `ms` have passed (a top-level await that never settles). */
async function importWithin (url: string, name: string, ms: number): Promise<{ default?: unknown }> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new LoadTimeout('DOCSPLIT_PLUGIN_LOAD_FAILED', `plugin module ${quoted(name)} did not finish loading within ${ms / 1000} s (a top-level await that never settles?)`))
    }, ms)
    // Alone, it need not keep the process up: with nothing else left, Node ends the wait (cli/index.ts says so).
    timer.unref()
  })
  try {
    return await Promise.race([import(url) as Promise<{ default?: unknown }>, late])
  } finally {
    clearTimeout(timer)
  }
}

/** The module each plugin loaded by name came from, for messages about the plugin later. */
const moduleOf = new WeakMap<Plugin, string>()

/**
 * Every parser's default splitter is registered: DOCSPLIT_PLUGIN_LOAD_FAILED naming the first
 * parser whose is not (and its module), with the splitters there are. Run once all plugins are
 * loaded: at the end of loadPlugins, and before the first split.
 */
export function checkDefaultSplitters (): void {
  const parser = parsersWithUnknownSplitter()[0]
  if (parser === undefined) return
  const from = moduleOf.get(parser)
  throw new DocsplitError('DOCSPLIT_PLUGIN_LOAD_FAILED', `${from !== undefined ? `plugin module ${quoted(from)}: ` : ''}parser "${parser.name}" names defaultSplitter "${parser.defaultSplitter.slice(0, 64)}", which is not a registered splitter; registered: ${listValues(listPackers().map((p) => p.name))}`)
}

/**
 * Loads plugin modules by name or path, then checks the whole set (checkDefaultSplitters): a
 * parser may name a splitter of a module later in the list, not of a later call.
 */
export async function loadPlugins (names: readonly string[], timeoutMs = LOAD_TIMEOUT_MS): Promise<void> {
  await loadPluginModules(names, timeoutMs)
  checkDefaultSplitters()
}

/**
 * The modules loaded, by the file they resolve to: one given again, under the same name or
 * another (a package name and the path of its file, `./x.js` and `/abs/x.js`, a link to it), is
 * loaded once; registering its plugins again would clash with themselves.
 */
const loadedModules = new Set<string>()

/** The file behind a module URL, links followed (Node imports a linked file by its real path). */
function moduleKey (url: string): string {
  if (!url.startsWith('file:')) return url
  try {
    return realpathSync(fileURLToPath(url))
  } catch {
    return url
  }
}

/** loadPlugins without the check of the set: for a caller that loads more before it checks (docsplit serve). */
export async function loadPluginModules (names: readonly string[], timeoutMs = LOAD_TIMEOUT_MS): Promise<void> {
  for (const name of names) {
    if (name.trim() === '') throw new DocsplitError('DOCSPLIT_PLUGIN_LOAD_FAILED', 'a plugin module needs a name: a package name or a path')
    const url = specifier(name)
    const module = moduleKey(url)
    if (loadedModules.has(module)) continue
    if (isDirectory(url)) {
      throw new DocsplitError('DOCSPLIT_PLUGIN_LOAD_FAILED', `plugin module ${quoted(name)} is a directory; give the file to load (such as ${name.replace(/\/+$/, '')}/index.js) or a package name`)
    }
    let mod: { default?: unknown }
    importing.add(name)
    try {
      mod = await importWithin(url, name, timeoutMs)
    } catch (error) {
      if (error instanceof LoadTimeout) throw error
      throw new DocsplitError('DOCSPLIT_PLUGIN_LOAD_FAILED', isModuleNotFound(error)
        ? notFoundMessage(name, url, error)
        : loadFailure(name, url, error), { cause: error })
    } finally {
      importing.delete(name)
    }
    const exported = mod.default
    if (exported === undefined || exported === null || typeof exported !== 'object') {
      throw new DocsplitError('DOCSPLIT_PLUGIN_LOAD_FAILED', `plugin module ${quoted(name)} must default-export a plugin made with definePlugin (or a list of them)`)
    }
    // Loading it would do nothing, silently: as for a module that exports no plugin.
    if (Array.isArray(exported) && exported.length === 0) {
      throw new DocsplitError('DOCSPLIT_PLUGIN_LOAD_FAILED', `plugin module ${quoted(name)} default-exports an empty list; it must export a plugin made with definePlugin (or a list of them)`)
    }
    try {
      register(exported as Plugin | Plugin[])
      loadedModules.add(module)
      for (const plugin of [exported as Plugin | Plugin[]].flat()) moduleOf.set(plugin, name)
    } catch (error) {
      if (isDocsplitError(error)) throw new DocsplitError(error.code, `plugin module ${quoted(name)}: ${error.message}`, { cause: error })
      // The registry checks what it reads; should a malformed plugin still get past that, it is the module that is named.
      throw new DocsplitError('DOCSPLIT_PLUGIN_LOAD_FAILED', `plugin module ${quoted(name)} could not be registered: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
    }
  }
}
