/** `docsplit formats`: what this installation can split, with defaults and availability. */
import { listPackers, listParsers, listTokenizers } from '../core/registry.js'
import { DEFAULT_TOKENIZER } from '../core/options.js'
import type { Plugin } from '../core/types.js'

async function available (plugin: Plugin): Promise<boolean> {
  try {
    return plugin.available === undefined ? true : await plugin.available()
  } catch {
    return false
  }
}

export async function describeFormats (): Promise<Record<string, unknown>> {
  return {
    formats: await Promise.all(listParsers().map(async (p) => ({
      name: p.name,
      description: p.description ?? '',
      formats: p.formats,
      extensions: p.extensions,
      reads: p.reads,
      default_splitter: p.defaultSplitter,
      extra: p.extra ?? null,
      available: await available(p),
      options: Object.keys(p.options?.properties ?? {}),
    }))),
    splitters: await Promise.all(listPackers().map(async (p) => ({ name: p.name, description: p.description ?? '', available: await available(p), options: Object.keys(p.options?.properties ?? {}) }))),
    tokenizers: await Promise.all(listTokenizers().map(async (t) => ({
      name: t.name,
      description: t.description ?? '',
      aliases: t.aliases ?? [],
      model_prefixes: t.modelPrefixes ?? [],
      extra: t.extra ?? null,
      available: await available(t),
      default: t.name === DEFAULT_TOKENIZER,
    }))),
  }
}

/** A description under its entry: indented, wrapped at word boundaries to stay under 100 columns. */
function describe (lines: string[], description: string): void {
  const indent = '      '
  let line = ''
  for (const word of description.split(/\s+/).filter((w) => w !== '')) {
    if (line !== '' && indent.length + line.length + 1 + word.length > 100) {
      lines.push(indent + line)
      line = word
    } else {
      line = line === '' ? word : `${line} ${word}`
    }
  }
  if (line !== '') lines.push(indent + line)
}

export async function printFormats (json: boolean): Promise<number> {
  const info = await describeFormats() as {
    formats: Array<{ description: string, formats: string[], extensions: string[], default_splitter: string, extra: string | null, available: boolean, options: string[] }>
    splitters: Array<{ name: string, description: string, options: string[] }>
    tokenizers: Array<{ name: string, description: string, aliases: string[], model_prefixes: string[], extra: string | null, available: boolean, default: boolean }>
  }
  if (json) {
    process.stdout.write(JSON.stringify(info, null, 2) + '\n')
    return 0
  }
  const state = (ok: boolean, extra: string | null): string => ok ? 'available' : `needs ${extra ?? 'an optional package'}`
  const lines = ['Formats (input_format):']
  for (const f of info.formats) {
    lines.push(`  ${f.formats.join(', ')}  [${f.extensions.join(' ')}]  splitter: ${f.default_splitter}  ${state(f.available, f.extra)}`)
    describe(lines, f.description)
    if (f.options.length > 0) describe(lines, `options: ${f.options.join(', ')}`)
  }
  lines.push('', 'Splitters (splitter):')
  for (const s of info.splitters) {
    lines.push(`  ${s.name}  ${s.description}`)
    if (s.options.length > 0) describe(lines, `options: ${s.options.join(', ')}`)
  }
  lines.push('', 'Tokenizers (tokenizer):')
  for (const t of info.tokenizers) {
    lines.push(`  ${t.name}${t.default ? ' (default)' : ''}  ${state(t.available, t.extra)}${t.aliases.length > 0 ? `  models: ${t.aliases.join(', ')}` : ''}`)
    // Under the models on the entry's line, which they continue.
    if (t.model_prefixes.length > 0) describe(lines, `and any model name that starts with: ${t.model_prefixes.join(', ')}`)
    describe(lines, t.description)
  }
  process.stdout.write(lines.join('\n') + '\n')
  return 0
}
