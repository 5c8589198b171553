/**
 * Calls into plugins from the pipeline: tokenizers loaded once, plugin steps known by name while
 * they are awaited, methods that must finish before they return, and a plugin's failure turned
 * into a DocsplitError that names the part that failed.
 */
import { DocsplitError, isDocsplitError, ownError, PARSER_ERROR_CODES } from './errors.js'
import { isModuleNotFound, missingPackage } from './load.js'
import { isCount, isPromise, silence, typeInWords } from './plugin-values.js'
import type { ParserHandler, Tokenizer, TokenizerPlugin } from './types.js'

const loadedTokenizers = new Map<TokenizerPlugin, Promise<Tokenizer>>()

/**
 * The package a tokenizer lacks: its `extra`, to install. A package Node could not find that is
 * not the extra is named, but not offered to `npm install`: it may be a slip in the plugin's
 * import, and a package of that name anyone's.
 */
function tokenizerUnavailable (plugin: TokenizerPlugin, cause?: unknown): DocsplitError {
  const extra = typeof plugin.extra === 'string' && plugin.extra !== '' ? plugin.extra.slice(0, 128) : undefined
  const missing = missingPackage(cause)
  const install = extra !== undefined ? `the package ${extra}: npm install ${extra}` : undefined
  const message = missing !== undefined && missing !== extra
    ? `tokenizer "${plugin.name}" could not load the package "${missing}" that it imports${install !== undefined ? `; it needs ${install}` : ''}`
    : `tokenizer "${plugin.name}" needs ${install ?? 'a package that is not installed'}`
  return new DocsplitError('DOCSPLIT_TOKENIZER_UNAVAILABLE', message, { cause })
}

/** Plugin steps being awaited (`the ini parser's create()`), with how many splits await each. */
const awaitedSteps = new Map<string, number>()

/** The plugin steps a split awaits now: what a process that can do nothing more waits for. */
export function pluginStepsPending (): string[] {
  return [...awaitedSteps.keys()]
}

/** Told the first pending plugin step (undefined: none) each time the pending steps change. */
let stepWatcher: ((first: string | undefined) => void) | undefined

/**
 * Has `watcher` told the first pending plugin step each time the pending steps change: a
 * service worker keeps it where the thread that stops a split past its budget can read it.
 */
export function watchPluginSteps (watcher: ((first: string | undefined) => void) | undefined): void {
  stepWatcher = watcher
}

/** Awaits a plugin's step, known by name while it is pending. */
export async function pluginStep<T> (what: string, step: () => T | Promise<T>): Promise<T> {
  awaitedSteps.set(what, (awaitedSteps.get(what) ?? 0) + 1)
  stepWatcher?.(awaitedSteps.keys().next().value)
  try {
    return await step()
  } finally {
    const left = awaitedSteps.get(what)! - 1
    if (left === 0) awaitedSteps.delete(what)
    else awaitedSteps.set(what, left)
    stepWatcher?.(awaitedSteps.keys().next().value)
  }
}

export function loadTokenizer (plugin: TokenizerPlugin): Promise<Tokenizer> {
  let loading = loadedTokenizers.get(plugin)
  if (loading === undefined) {
    loading = Promise.resolve().then(async () => {
      // A plugin that says its package is missing, or whose load cannot find a module, lacks a dependency.
      if (plugin.available !== undefined && await pluginStep(`the ${plugin.name} tokenizer's available()`, () => plugin.available!()) === false) throw tokenizerUnavailable(plugin)
      return await pluginStep(`the ${plugin.name} tokenizer's load()`, () => plugin.load())
    }).then((tokenizer) => {
      if (tokenizer === null || typeof tokenizer !== 'object' || typeof tokenizer.count !== 'function') {
        throw new DocsplitError('DOCSPLIT_PLUGIN_CONTRACT', `tokenizer "${plugin.name}": load() must return an object with count(text)`)
      }
      return tokenizer
    }, (error: unknown) => {
      throw isModuleNotFound(error) ? tokenizerUnavailable(plugin, error) : pluginFailure(error, `${plugin.name} tokenizer`)
    })
    loadedTokenizers.set(plugin, loading)
    // A failed load (package missing) is retried on the next request, after an install.
    loading.catch(() => loadedTokenizers.delete(plugin))
  }
  return loading
}

/**
 * The steps of a parser's end(): none when it finished at once, the iterator of a generator of
 * steps; a promise (an async end) breaks the contract, since events must come before it returns.
 */
export function endSteps (parser: string, steps: ReturnType<ParserHandler['end']>): Iterator<unknown> | undefined {
  if (steps == null) return undefined
  if (typeof (steps as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function') {
    silence(steps)
    throw new DocsplitError('DOCSPLIT_PLUGIN_CONTRACT', `parser "${parser}": end() must finish before it returns (or return a generator of steps), not return a promise`)
  }
  return steps[Symbol.iterator]()
}

/** A plugin method that must finish before it returns (a parser's write, a packer's push). */
export function finished (result: unknown, plugin: string, method: string): void {
  if (result === undefined) return
  silence(result)
  if (isPromise(result)) {
    throw new DocsplitError('DOCSPLIT_PLUGIN_CONTRACT', `${plugin}: ${method}() must finish before it returns, not return a promise`)
  }
}

/** A count that is not one, as a message shows it: `4.5`, `the string "4"`, `an object`. */
function shownCount (value: unknown): string {
  if (typeof value === 'number') return String(value)
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 16))}`
  if (value === undefined) return 'undefined'
  return typeInWords(value)
}

/**
 * Whose fault a count that is not a whole number is. A splitter's draft (`start` given): the
 * tokenizer's, when its own count of the draft's text is no count either, else the splitter's
 * (which counted otherwise, or changed the count). Only on this failing path does core count a
 * draft itself. A count core made (with overlap, `start` undefined) is the tokenizer's.
 */
export function countFault (tokenizer: Tokenizer, tokenizerName: string, splitter: string, text: string, count: unknown, start?: number): DocsplitError {
  let own: unknown = count
  if (start !== undefined) {
    try {
      own = tokenizer.count(text)
    } catch (error) {
      return pluginFailure(error, `${tokenizerName} tokenizer`)
    }
  }
  if (isPromise(own)) {
    silence(own)
    return new DocsplitError('DOCSPLIT_PLUGIN_CONTRACT', `tokenizer "${tokenizerName}" returned a promise from count(): count must be synchronous (load() may be async)`)
  }
  if (start === undefined || !isCount(own)) {
    return new DocsplitError('DOCSPLIT_PLUGIN_CONTRACT', `tokenizer "${tokenizerName}" returned ${shownCount(own)} from count() for a chunk's text (splitter "${splitter}"); a count is a whole number of at least 0`)
  }
  return new DocsplitError('DOCSPLIT_PLUGIN_CONTRACT', `splitter "${splitter}" emitted a chunk at ${start} with tokenCount ${shownCount(count)}, where tokenizer "${tokenizerName}" counts ${own}; a count is a whole number of at least 0`)
}

/**
 * The codes an error thrown from inside a plugin keeps: those of ctx.fail and those the engine
 * raises inside a plugin's call (a broken contract, a tokenizer that cannot load). Another,
 * thrown directly (DOCSPLIT_RATE_LIMITED, DOCSPLIT_TIMEOUT), would tell the caller something
 * untrue about the service. (DOCSPLIT_INTERNAL keeps its code too, with the part the engine
 * knows: see pluginFailure.)
 */
const PLUGIN_PASSES = new Set<string>([...PARSER_ERROR_CODES, 'DOCSPLIT_PLUGIN_CONTRACT', 'DOCSPLIT_TOKENIZER_UNAVAILABLE'])

/** Wraps a failure inside a plugin so that nothing but a DocsplitError, with a code a plugin may give, leaves the engine. */
export function pluginFailure (thrown: unknown, what: string): DocsplitError {
  const error = ownError(thrown)
  if (isDocsplitError(error)) {
    // An internal error names the part the engine knows failed, whatever the plugin set (the
    // service logs `part`: a plugin's own might hold document text).
    if (error.code === 'DOCSPLIT_INTERNAL') return new DocsplitError('DOCSPLIT_INTERNAL', error.message, { cause: error.cause ?? error, part: what })
    if (PLUGIN_PASSES.has(error.code)) return error
    return new DocsplitError('DOCSPLIT_PLUGIN_CONTRACT', `the ${what} threw ${error.code}, which is not a plugin's to give; a parser fails with ctx.fail(${PARSER_ERROR_CODES.join(', ')})`, { cause: error })
  }
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return new DocsplitError('DOCSPLIT_LIMIT_EXCEEDED', `the document is nested too deeply for the ${what}`, { cause: error })
  }
  return new DocsplitError('DOCSPLIT_INTERNAL', `the ${what} failed unexpectedly`, { cause: error, part: what })
}
