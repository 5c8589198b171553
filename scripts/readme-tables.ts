/**
 * The README's options, chunk-field and error tables, rendered from the one definition of
 * each (core/options.ts, core/schema.ts with the parsers' chunk fields, core/errors.ts). `node --import tsx
 * scripts/readme-tables.ts --write` rewrites them in place; a test fails when they drift.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import '../plugins/index.js'
import { errorTable } from '../core/errors.js'
import { describeSchema, optionsSchema } from '../core/options.js'
import { responseSchemas } from '../core/chunk-fields.js'
import { listParsers } from '../core/registry.js'

const readme = fileURLToPath(new URL('../README.md', import.meta.url))
const cell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ')

export function tables (): Record<string, string> {
  type Schema = { type?: string, description?: string, default?: unknown, enum?: string[], pattern?: string, anyOf?: Schema[] }
  const options = optionsSchema() as unknown as { properties: Record<string, Schema> }
  const optionRows = Object.entries(options.properties).map(([name, s]) => {
    // A long list of names is counted, not spelled out; so are the model prefixes beside it (tokenizer).
    const branches = s.anyOf ?? [s]
    const names = branches.find((b) => b.enum !== undefined)?.enum ?? []
    const prefixed = branches.some((b) => b.pattern !== undefined) ? ', or a model name that starts with a listed prefix' : ''
    const accepts = names.length > 8 ? `${names.length} names${prefixed} (see \`docsplit formats\`)` : describeSchema(s as never)
    const flag = name.replaceAll('_', '-')
    const cli = s.type === 'boolean' ? `\`--${flag} [true\\|false]\`, \`--no-${flag}\``
      : s.type === 'array' ? `\`--${flag} A --${flag} B\` or \`--${flag} A,B\``
        : `\`--${flag}\``
    return `| \`${name}\` | ${cli} | ${cell(accepts)} | ${s.default === undefined ? '' : `\`${JSON.stringify(s.default)}\``} | ${cell(s.description ?? '')} |`
  })
  // Core's fields, then those parsers declare (xlsx's).
  const chunk = responseSchemas(listParsers()).chunk as unknown as { properties: Record<string, { type?: string, description?: string, anyOf?: unknown }>, required?: string[] }
  const chunkRows = Object.entries(chunk.properties).map(([name, s]) => {
    const type = s.type ?? (s.anyOf !== undefined ? 'string' : 'value')
    const optional = chunk.required?.includes(name) === true ? '' : name.startsWith('record_') ? ' (records only)' : ' (optional)'
    return `| \`${name}\` | ${type}${optional} | ${cell(s.description ?? '')} |`
  })
  const errorRows = Object.entries(errorTable).map(([code, e]) => `| \`${code}\` | ${e.status} | ${e.exit} | ${cell(e.description)} |`)
  return {
    options: ['| option | CLI flag | accepts | default | meaning |', '|---|---|---|---|---|', ...optionRows].join('\n'),
    chunk: ['| field | type | meaning |', '|---|---|---|', ...chunkRows].join('\n'),
    errors: ['| code | HTTP | exit | meaning and fix |', '|---|---|---|---|', ...errorRows].join('\n'),
  }
}

export function render (text: string): string {
  for (const [name, table] of Object.entries(tables())) {
    const pattern = new RegExp(`(<!-- ${name}:start -->)[\\s\\S]*?(<!-- ${name}:end -->)`)
    text = text.replace(pattern, `$1\n${table}\n$2`)
  }
  return text
}

if (process.argv.includes('--write')) writeFileSync(readme, render(readFileSync(readme, 'utf8')))
