/**
 * The `markdown` parser: CommonMark + GFM block structure (headings, paragraphs, lists, code,
 * tables, block quotes, HTML blocks, thematic breaks, YAML front matter, link reference
 * definitions) as sections and blocks for the `sibling` splitter.
 *
 * Not streaming: markdown-it needs the whole text (a later line can turn a paragraph into a
 * setext heading, a definition can come after its uses), so the parser is `whole` (the pipeline
 * gathers the text) and `end` parses, then emits in steps so that chunks leave while the rest
 * is emitted.
 */
import { definePlugin } from '../../../core/registry.js'
import type { ParserContext, ParserHandler } from '../../../core/types.js'
import { loadMarkdownParser, markdownSteps } from './parse.js'

const YAMLISH = /^\s*(?:-\s+)?[\w"'.$-]+\s*:(?:\s|$)/

/** The cells of a table row: split at pipes not escaped (`\|` is a pipe in a cell), less the optional pipes at its ends. */
const cells = (line: string): string[] => line.trim().replace(/^\|/, '').replace(/(?<!\\)\|$/, '').split(/(?<!\\)\|/)

/** A delimiter cell: dashes, with alignment colons. */
const RULE_CELL = /^[ \t]*:?-+:?[ \t]*$/

/**
 * Whether a line with pipes is followed by a GFM delimiter row (cells of dashes) of as many
 * cells: a table. A rule of one cell must start with a pipe (`| --- |`): `- |` and `--- |`
 * are a list item and a YAML block scalar more often than a table of one column.
 */
function hasTable (sample: string): boolean {
  const lines = sample.split('\n', 200)
  for (let i = 1; i < lines.length; i++) {
    // cells() trims: a CRLF line's `\r` goes with the white space.
    const rule = lines[i]!
    if (!rule.includes('|') || !lines[i - 1]!.includes('|') || /^ {4}/.test(rule)) continue
    const ruleCells = cells(rule)
    if (ruleCells.length === 1 && !rule.trimStart().startsWith('|')) continue
    if (ruleCells.every((cell) => RULE_CELL.test(cell)) && cells(lines[i - 1]!).length === ruleCells.length) return true
  }
  return false
}

/**
 * Sniffs markdown from the first characters. Strong signs (links, fences, tables, code spans,
 * reference definitions) count most; `# ` lines and `- ` items also start comments and
 * sequences in YAML and scripts, so they count little, and a sample that reads as YAML
 * (mostly `key: value` lines after any front matter, directives) or JSON/XML loses points.
 */
export function detectMarkdown (sample: string): number {
  let score = 0
  if (/\[[^\]\n]+\]\([^)\s]+[^)\n]*\)/.test(sample)) score += 0.25
  if (/\[[^\]\n]+\]\[[^\]\n]*\]/.test(sample) || /^ {0,3}\[[^\]\n]+\]:[ \t]*\S/m.test(sample)) score += 0.25
  if (/^ {0,3}(?:```|~~~)/m.test(sample)) score += 0.25
  // A GFM table (a row of cells, then its delimiter row) is a strong sign; a rule alone less so.
  if (hasTable(sample)) score += 0.6
  else if (/^ {0,3}\|?[ \t]*:?-{3,}:?[ \t]*\|/m.test(sample)) score += 0.25
  if (/(?:\*\*|__)[^*_\n]+(?:\*\*|__)|`[^`\n]+`/.test(sample)) score += 0.15
  if (/^#{1,6}[ \t]+\S.*\r?\n[ \t]*\r?\n/m.test(sample)) score += 0.25
  else if (/^#{1,6}[ \t]+\S/m.test(sample)) score += 0.1
  // Headings of two levels, each before a blank line (`# Project`, `## Usage`): an outline,
  // which script comments seldom are.
  const levels = new Set([...sample.matchAll(/^(#{1,6})[ \t]+\S[^\n]*\r?\n[ \t]*\r?\n/gm)].map((m) => m[1]!.length))
  if (levels.size >= 2) score += 0.3
  if (/^ {0,3}\S.*\r?\n {0,3}(?:=+|-{2,})[ \t]*\r?$/m.test(sample)) score += 0.1
  if (/^ {0,3}[-*+][ \t]+\S/m.test(sample)) score += 0.05
  // A heading, then (after blank lines) a list: a changelog, notes, a to-do list. Read as YAML,
  // the heading would be a comment before a sequence, which YAML's own score weighs.
  if (/^#{1,6}[ \t]+\S[^\n]*\r?\n(?:[ \t]*\r?\n)*[ \t]{0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+\S/m.test(sample)) score += 0.25
  // GFM task list items (`- [ ] write docs`).
  if (/^[ \t]*[-*+][ \t]+\[[ xX]\][ \t]+\S/m.test(sample)) score += 0.25
  if (/^ {0,3}>[ \t]?\S/m.test(sample)) score += 0.1
  const front = /^---[ \t]*\r?\n[\w"'-]+[ \t]*:[\s\S]*?\n(?:---|\.\.\.)[ \t]*\r?\n/.exec(sample)
  if (front !== null) score += 0.1
  // Not markdown: JSON, XML, YAML.
  if (/^\s*(?:\{|\[\s*[[{"\d\]-]|<\?xml|<!DOCTYPE)/i.test(sample)) score -= 0.4
  // A document start with a block scalar (`--- |`, not a table's `--- | ---`), or a directive.
  if (/^(?:%YAML|%TAG|--- (?:[>!&*]|\|[-+\d]*[ \t]*(?:#.*)?\r?$))/m.test(sample)) score -= 0.3
  const lines = sample.slice(front?.[0].length ?? 0).split('\n').filter((l) => l.trim() !== '' && !/^\s*#/.test(l))
  if (lines.length > 0 && lines.filter((l) => YAMLISH.test(l)).length / lines.length >= 0.6) score -= 0.3
  return Math.max(0, Math.min(0.9, Math.round(score * 100) / 100))
}

export default definePlugin({
  kind: 'parser',
  name: 'markdown',
  docsplit: '^1',
  description: 'CommonMark and GFM: sections under headings, paragraphs, lists, code, tables, quotes, front matter, reference definitions.',
  formats: ['markdown', 'md'],
  formatAliases: { md: 'markdown' },
  // MDX is read as markdown: its JSX is HTML blocks, its imports a paragraph.
  extensions: ['.md', '.markdown', '.mdown', '.mkd', '.mdx'],
  reads: 'text',
  whole: true,
  defaultSplitter: 'sibling',
  detect: detectMarkdown,
  async create (ctx: ParserContext): Promise<ParserHandler<string>> {
    await loadMarkdownParser()
    let text = ''
    return {
      write (all: string): void {
        text += all
      },
      end (): Iterable<void> {
        const whole = text
        text = ''
        // In steps: the chunks of the first blocks leave before the last are emitted.
        return markdownSteps(whole, (event) => { ctx.emit(event) })
      },
    }
  },
})
