#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=200
/**
 * The `docsplit` command: a thin front over the engine. Every split option is a flag named
 * after the option (`max_tokens` is `--max-tokens`), including options of loaded plugins.
 * Exit codes: 0 ok, 1 internal, 2 usage, 3 input error (or --verify failed), 4 missing extra.
 * The shebang's node flags keep streaming runs' memory low: a smaller young generation (64 MB
 * log: 138-150 MB peak RSS vs 203 MB with V8's default; semi-spaces of 4 MB rather than 2: a
 * 256 MB log 3.6 -> 2.8 s at the same 111 MB, 8 MB of markdown 3% slower and 5 MB larger), and
 * an old generation that may grow to 3x what was live after a full collection before the next
 * one (V8 picks up to about 4x here): 256 MB log 138-146 -> 117-126 MB, 2 GB log 156 -> 134 MB,
 * for 4-8% more time.
 */
import { statSync, writeSync } from 'node:fs'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import '../plugins/index.js'
import { DocsplitError, escapeControls, quoted } from '../core/errors.js'
import { checkDefaultSplitters, loadPluginModules, pluginsLoading } from '../core/load.js'
import { describeSchema, OPTION_ALIASES, optionsSchema } from '../core/options.js'
import { pluginStepsPending } from '../core/plugin-calls.js'
import { didYouMean } from '../core/suggest.js'
import { VERSION } from '../core/version.js'
import { printFormats } from './formats.js'
import { errorLine, outputError, readerClosed, reportError } from './output.js'
import { runOneSplit, runSplits } from './split.js'

const kebab = (name: string): string => name.replaceAll('_', '-')
const snake = (name: string): string => name.replaceAll('-', '_')

function help (): string {
  const schema = optionsSchema()
  const rows = Object.entries(schema.properties).map(([name, s]) => {
    const d = (s as { default?: unknown }).default
    const description = String((s as { description?: string }).description ?? '')
    const value = (s as { type?: string }).type === 'boolean' ? `[true|false] (or --no-${kebab(name)})` : 'VALUE'
    return `  --${kebab(name)} ${value}\n      ${description}\n      Accepts ${describeSchema(s)}${d !== undefined ? `; default ${JSON.stringify(d)}` : ''}.`
  })
  return `docsplit ${VERSION}: split documents into chunks under a token budget

Usage:
  docsplit split FILE|- [options]   print the docsplit.chunk.v1 response as JSON
  docsplit split FILE... --ndjson   several files in one process, each between its header
                                    line (naming it as "source") and its trailer
  docsplit formats [--json]         list formats, splitters and tokenizers
  docsplit serve                    start the HTTP service (needs the web extra)

Split options:
${rows.join('\n')}

Output and checks:
  --jsonl              print one chunk per line as chunks are made (constant memory)
  --ndjson             as --jsonl, between the service's NDJSON header line (format, metadata;
                       here also the FILE as "source") and trailer line (document, chunk_count),
                       or an {"error": ...} line
  --pretty             indent the JSON response
  --verify             re-check the output (lossless, offsets, overlap, budget by
                       recount); exit 3 on a violation; every chunk is checked even
                       when the reader stops early (| head)
  --plugin MODULE      load a plugin module (package name or path); repeatable, any command

Exit codes: 0 ok, 2 usage error, 3 input error, 4 missing optional dependency, 1 internal error;
stopped by SIGINT (Ctrl-C) or SIGTERM, it ends by the signal (a shell shows 130 or 143), after
a whole line of --jsonl or --ndjson output. A FILE that starts with - goes after --:
docsplit split --ndjson -- *.md
`
}

/** `docsplit serve --help`: the service takes its settings from the environment, listed from their schema. */
async function serveHelp (): Promise<string> {
  const { envSchema } = await import('../server/env.js')
  const rows = Object.entries(envSchema).map(([name, s]) => {
    const d = (s as { default?: unknown }).default
    return `  ${name}${d !== undefined ? ` (default ${JSON.stringify(d)})` : ''}\n      ${String((s as { description?: string }).description ?? '')}`
  })
  return `docsplit ${VERSION}: the HTTP service (needs the web extra)

Usage:
  docsplit serve [--plugin MODULE ...]   listen on HOST:PORT; OpenAPI docs at /docs

Settings, from the environment:
${rows.join('\n')}

Exit codes: 0 after SIGTERM or SIGINT once requests in flight end (130 at once on a second
SIGINT), 2 a setting or plugin that is not valid, 4 the web extra missing, 1 internal error.
`
}

const FORMATS_HELP = `Usage:
  docsplit formats [--json] [--plugin MODULE ...]   the formats, splitters and tokenizers this
                                                    install has, and whether each is available
`

/**
 * Split options as parseArgs takes them. Booleans as strings: `--header` is `--header=true`,
 * `--no-header` and `--header false` are `--header=false` (parseArgs' booleans take no value
 * and, on Node 20, no negation); the engine reads "true" and "false" as it does from a form.
 * `TRUE` and `False` are read as those; a value that only looks boolean (`no`, `0`) is refused
 * by name rather than taken for a FILE, as is a negative number. A negative number after the
 * flag of an option that takes a value is its value (`--max-tokens -1` as `--max-tokens=-1`,
 * `--sheets -1` a sheet's name), refused or used by the option's own check: parseArgs took it
 * for a flag ("argument is ambiguous").
 */
function flagValues (argv: string[], names: Set<string>, valued: Set<string>): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') {
      out.push(...argv.slice(i))
      break
    }
    if (arg.startsWith('--') && valued.has(arg.slice(2)) && /^-\.?\d/.test(argv[i + 1] ?? '')) {
      out.push(`${arg}=${argv[++i]!}`)
      continue
    }
    const m = /^--(no-)?([a-z0-9][a-z0-9-]*)(=.*)?$/s.exec(arg)
    if (m === null || !names.has(m[2]!)) {
      out.push(arg)
      continue
    }
    const [, negated, name, inline] = m
    if (negated !== undefined) {
      if (inline !== undefined) throw new DocsplitError('DOCSPLIT_INVALID_OPTION', `--no-${name} takes no value; use --${name} true|false; see docsplit --help`)
      out.push(`--${name}=false`)
      continue
    }
    const given = inline?.slice(1) ?? argv[i + 1]
    const value = given?.toLowerCase()
    if (value === 'true' || value === 'false') {
      if (inline === undefined) i++
      out.push(`--${name}=${value}`)
    } else if (inline !== undefined || (value !== undefined && BOOLEAN_LOOKALIKE.test(value))) {
      throw new DocsplitError('DOCSPLIT_INVALID_OPTION', `--${name} takes true or false (or give --no-${name}), not ${quoted(given!.slice(0, 64))}; see docsplit --help`)
    } else {
      out.push(`--${name}=true`)
    }
  }
  return out
}

/** Values meant as a boolean that the CLI does not take as one (rather than as a FILE). */
const BOOLEAN_LOOKALIKE = /^(?:yes|no|on|off|y|n|0|1|t|f|-\.?\d[\d.]*)$/

/**
 * `--plugin` values, wherever they appear before `--` (after it every argument is a file name),
 * so plugin options are known before full parsing.
 */
function pluginModules (argv: string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') break
    if (arg === '--plugin' && i + 1 < argv.length) out.push(argv[++i]!)
    else if (arg.startsWith('--plugin=')) out.push(arg.slice('--plugin='.length))
  }
  return out
}

/** What main() is doing, named if it never finishes. */
let step = 'docsplit'

/** What main() resolves to for `serve` once it listens: the process runs on, for the server. */
const SERVING = 'serving'
/** The commands, as the help lists them. */
const COMMANDS = ['split', 'formats', 'serve']

/**
 * `word` as a shell reads it back: as it is when it can be, else in single quotes; one with a
 * control character (a newline) in bash's $'...' with escapes, which keeps the message on one line.
 */
function shellWord (word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word
  if (escapeControls(word) === word) return `'${word.replaceAll("'", "'\\''")}'`
  return `$'${escapeControls(word.replace(/[\\']/g, '\\$&'))}'`
}

/** Flags every command takes. */
const COMMON_FLAGS = new Set(['help', 'version', 'plugin'])

/**
 * The flags of each command besides the common ones; `splitOptions`: the split options' flags.
 * A Map: a command read from argv may be any word (`constructor`).
 */
function commandFlags (splitOptions: string[]): Map<string, string[]> {
  return new Map([['split', [...splitOptions, 'jsonl', 'ndjson', 'pretty', 'verify']], ['formats', ['json']], ['serve', []]])
}

/**
 * Refuses a flag the command does not use: `serve --max-tokens 256` started a service whose
 * requests still split at 512, and `split --jsonl --pretty` printed no indentation, silently.
 */
function checkFlagsOf (command: string, given: string[], splitOptions: string[], ownFlags: Map<string, string[]>): void {
  const allowed = ownFlags.get(command)
  if (allowed === undefined) return
  const stray = given.find((name) => !COMMON_FLAGS.has(name) && !allowed.includes(name))
  if (stray !== undefined) {
    const why = command === 'serve' && splitOptions.includes(stray)
      ? ': split options are given with each request, in its body (JSON members or form fields), not to the service'
      : `; it takes ${[...allowed.filter((f) => !splitOptions.includes(f)), ...(command === 'split' ? ['the split options'] : []), ...COMMON_FLAGS].map((f) => f.startsWith('the ') ? f : `--${f}`).join(', ')}`
    throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', `docsplit ${command} takes no --${stray}${why} (see docsplit --help)`)
  }
  const outputs = ['jsonl', 'ndjson', 'pretty'].filter((flag) => given.includes(flag))
  if (command === 'split' && outputs.length > 1) {
    throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', `--pretty indents the JSON response, --jsonl prints one chunk per line, --ndjson adds a header and a trailer line: give only one of ${outputs.map((f) => `--${f}`).join(', ')} (see docsplit --help)`)
  }
}

/** `formats` and `serve` take no FILE or other word: a stray one was ignored, and the command ran as if it were not there. */
function refuseArguments (command: string, rest: string[]): void {
  if (rest.length === 0) return
  throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', `docsplit ${command} takes no arguments, only flags; got ${quoted(rest[0]!.slice(0, 64))}${rest.length > 1 ? ` and ${rest.length - 1} more` : ''} (see docsplit --help)`)
}

async function main (argv: string[]): Promise<number | typeof SERVING> {
  // The set is checked once the command is known: `serve` loads DOCSPLIT_PLUGINS as well.
  await loadPluginModules(pluginModules(argv))
  const schema = optionsSchema()
  const flags: NonNullable<ParseArgsConfig['options']> = {
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'v' },
    jsonl: { type: 'boolean' },
    ndjson: { type: 'boolean' },
    json: { type: 'boolean' },
    pretty: { type: 'boolean' },
    verify: { type: 'boolean' },
    plugin: { type: 'string', multiple: true },
  }
  const booleans = new Set<string>()
  const valued = new Set<string>()
  const schemaFlags = Object.keys(schema.properties).map(kebab)
  const ownFlags = commandFlags(schemaFlags)
  for (const [name, s] of Object.entries(schema.properties)) {
    const type = (s as { type?: string }).type
    // A list option (`--sheets`) may repeat, one value each; given once, it is a comma-separated list.
    flags[kebab(name)] = { type: 'string', multiple: type === 'array' }
    if (type === 'boolean') booleans.add(kebab(name))
    else valued.add(kebab(name))
  }
  const args = flagValues(argv, booleans, valued)
  let parsed
  try {
    parsed = parseArgs({ args, options: flags, allowPositionals: true, strict: true })
  } catch (error) {
    // parseArgs explains itself over several lines (an unknown option with advice about `--`
    // that reads as a broken quote); a docsplit error is one line.
    const code = (error as { code?: unknown }).code
    const unknown = /^Unknown option '([^']*)'/.exec(error instanceof Error ? error.message : '')
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown !== null) {
      // The code the library and the service give for an unknown option name, with the flags.
      const command = argv.find((arg) => ownFlags.has(arg))
      const names = command === undefined ? Object.keys(flags) : [...COMMON_FLAGS, ...ownFlags.get(command)!]
      const accepted = names.map((name) => `--${name}`).join(', ')
      const settings = command === 'serve' ? '; the service takes its settings (port, limits) from the environment (see the README)' : ''
      const given = unknown[1]!.slice(0, 64)
      throw new DocsplitError('DOCSPLIT_UNKNOWN_OPTION', `unknown option ${given}${didYouMean(given, names.map((name) => `--${name}`), OPTION_ALIASES)}; accepted: ${accepted}${settings} (see docsplit --help)`)
    }
    throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', `${(error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ')}; see docsplit --help`)
  }
  const { values, positionals } = parsed
  if (values.version === true) {
    process.stdout.write(`${VERSION}\n`)
    return 0
  }
  const [command, ...rest] = positionals
  if (command !== undefined) step = `docsplit ${command}`
  if (command !== undefined) checkFlagsOf(command, Object.keys(values).filter((name) => values[name] !== undefined), schemaFlags, ownFlags)
  if (command !== 'serve') checkDefaultSplitters()
  if (values.help === true || command === undefined || command === 'help') {
    const text = command === 'serve' ? await serveHelp() : command === 'formats' ? FORMATS_HELP : help()
    // Asked for, the help is the output; given for a missing command, it explains a usage error.
    if (command === undefined && values.help !== true) {
      process.stderr.write(text)
      return 2
    }
    process.stdout.write(text)
    return 0
  }
  switch (command) {
    case 'split': {
      if (rest.length === 0) throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'docsplit split takes a FILE (or - for standard input); see docsplit --help')
      if (rest.length > 1 && values.ndjson !== true) {
        throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', `docsplit split takes one FILE, or several with --ndjson (each file's chunks then come between its header line, which names it as "source", and its trailer); got ${rest.length}; see docsplit --help`)
      }
      if (rest.filter((file) => file === '-').length > 1) throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', 'standard input (-) can be read once; see docsplit --help')
      const options: Record<string, unknown> = {}
      for (const name of Object.keys(schema.properties)) {
        const value = values[kebab(name)]
        if (value !== undefined) options[snake(name)] = Array.isArray(value) && value.length === 1 ? value[0] : value
      }
      const command = { options, jsonl: values.jsonl === true, ndjson: values.ndjson === true, verify: values.verify === true, pretty: values.pretty === true }
      return rest.length === 1 ? await runOneSplit({ ...command, file: rest[0]! }) : await runSplits(rest, command)
    }
    case 'formats':
      refuseArguments(command, rest)
      return await printFormats(values.json === true)
    case 'serve': {
      refuseArguments(command, rest)
      // Loaded only here: the server and its `web` extra are optional (startServer says which
      // packages to install when they are missing).
      const { startServer } = await import('../server/start.js')
      await startServer(process.env, { plugins: pluginModules(argv) })
      return SERVING
    }
    default:
      // A file given without `split` is the likeliest slip of all.
      const hint = statSync(command, { throwIfNoEntry: false })?.isFile() === true ? `; to split that file: docsplit split ${shellWord(command)}` : didYouMean(command, COMMANDS)
      throw new DocsplitError('DOCSPLIT_INVALID_REQUEST', `unknown command ${quoted(command.slice(0, 64))}${hint}; commands: ${COMMANDS.join(', ')} (see docsplit --help)`)
  }
}

process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  const e = outputError(error.code)
  // --verify goes on (see verifyPastClosedOutput).
  if (!readerClosed()) process.exit(reportError(e).exitCode)
})
// A message that cannot be written (stderr to a full disk, or to a logger that died) is lost,
// but the exit code stays the one the run earned: unhandled, the error made it 1.
process.stderr.on('error', () => {})

let settled = false

// Node exits once nothing is left to run, even while main() still awaits a promise that nothing
// can settle any more (a plugin module's top-level await that never settles): it would exit 0
// with no output. Say which step was pending and fail instead. `beforeExit` comes only when the
// event loop empties (not on process.exit()), and the write is synchronous so that it adds no
// work to the loop.
process.on('beforeExit', () => {
  if (settled) return
  settled = true
  const plugin = pluginsLoading()[0]
  const e = plugin !== undefined
    ? new DocsplitError('DOCSPLIT_PLUGIN_LOAD_FAILED', `plugin module ${quoted(plugin)} never finished loading (a top-level await that never settles?)`)
    : new DocsplitError('DOCSPLIT_INTERNAL', `${step} stopped before it finished: it was waiting for ${pluginStepsPending()[0] ?? 'a step'}, which can never complete`)
  try {
    writeSync(2, `${errorLine(e)}\n`)
  } catch {
    // stderr closed: the exit code still tells.
  }
  process.exitCode = e.exitCode
})

/**
 * Ends the process with `code` once what was written to stdout and stderr has gone out (a
 * write's callback comes after the writes before it; to a pipe, stdout writes asynchronously).
 * The command is done: a plugin's timer or a module still loading (a top-level await that never
 * settles, after the load timeout) must not keep the process alive after it printed its result.
 */
function exit (code: number): void {
  process.exitCode = code
  let open = 2
  // Exits a turn of the event loop later: a write to a file that failed (a full disk under
  // `formats` or `--version`) tells its 'error', handled above, only some ticks after its call.
  const flushed = (): void => { if (--open === 0) setImmediate(() => process.exit(code)) }
  // A failed write (EPIPE) calls back too; the 'error' handler above says what it means.
  process.stdout.write('', flushed)
  process.stderr.write('', flushed)
}

main(process.argv.slice(2)).then((code) => {
  settled = true
  if (code !== SERVING) exit(code)
}, (error: unknown) => {
  settled = true
  // A failed start of `serve` too: its workers, or a plugin's timer, would keep it alive.
  exit(reportError(error).exitCode)
})
