/**
 * The `yaml` parser plugin: the documents of a stream, or the top-level items of a document, as
 * records (see handler.ts for how records are found and opened).
 */
import { definePlugin } from '../../../core/registry.js'
import type { ParserPlugin } from '../../../core/types.js'

/** A line that reads as YAML: a document marker, a sequence item, or a key (not `[label]:`). */
const YAML_LINE = /^(---|\.\.\.)(\s|$)|^\s*(- |-$)|^\s*("[^"]*"|'[^']*'|[^\s:#[{][^:#]*?):(\s|$)/
/**
 * A key or item that starts with a timestamp and goes on (`- 1117838570 2005.06.03 R02-M1 ...`,
 * `081109 203615 148 INFO dfs.DataNode: ...`): a log line whose message holds `: `, not YAML.
 */
const LOG_LINE = /^(- )?(\d{4}[-./]\d{2}[-./]\d{2}[-T ]\d{2}[:.]\d{2}|1\d{9}([.,]\d{1,9})? |\d{6} \d{6} )/
/** Brackets, `=` or `;`: an indented line that is code, not a YAML scalar's continuation. */
const CODE_LIKE = /[()={};]/
/**
 * A line at the left margin that starts with a letter or digit and is no key or item: where keys
 * or items also stand at the margin, YAML has no place for it (a scalar's next lines are
 * indented), while markdown and prose are made of such lines (`# Title`, a paragraph, `- item`
 * read as comments, a plain scalar and a sequence).
 */
const MARGIN_TEXT = /^[\p{L}\p{N}]/u
/** A key that YAML_LINE does not read (`C#: x`, `urn:a:b: 1`, `12:30: lunch`): not prose. */
const KEY_LIKE = /:(\s|$)/
/** An item whose value is a plain scalar at the margin (`- milk`, `- fix issue #2: ...`), not a key, a nested item or a flow collection. */
const PLAIN_ITEM = /^- +[^\s\-[{"'&*!|>%@`]/
/** An item that is a mapping (`- name: web`). */
const KEYED_ITEM = /^- +[^\s:#[{][^:#]*?:(\s|$)/
/** A document's start (`---`, `--- |`): what follows at the margin may be its scalar. */
const DOCUMENT_START = /^---(\s|$)/
/** A key at the margin and the space after its colon (on a line's first 1024 characters). */
const MARGIN_KEY = /^(?:"([^"]{0,200})"|'([^']{0,200})'|([^\s:#[{][^:#]{0,200}?)):\s+/
/** A sentence's stop and the capital that starts the next one. */
const NEXT_SENTENCE = /[.!?]["'”’)]?\s+\p{Lu}/u
const STOP_AT_END = /[.!?]["'”’)]?\s*$/
/**
 * A key of words at the margin whose value reads as prose: two sentences (`THE COURT: Good
 * morning. Please be seated.`), or six words or more ending with a stop (`"Confidential
 * Information": means ...`). A key of one word (`welcome: Welcome back! Please sign in.`, an
 * i18n file) is YAML's own.
 */
function proseKey (line: string): boolean {
  const head = line.slice(0, 1024)
  const key = MARGIN_KEY.exec(head)
  if (key === null || !(key[1] ?? key[2] ?? key[3] ?? '').trim().includes(' ')) return false
  const value = head.slice(key[0].length)
  return NEXT_SENTENCE.test(value) || (value.split(/\s+/, 6).length >= 6 && STOP_AT_END.test(value))
}
/** A key or item whose value is a block scalar: the more indented lines after it are its text. */
const BLOCK_SCALAR = /[|>][1-9]?[-+]?[1-9]?\s*(#.*)?$/

const yaml: ParserPlugin = definePlugin({
  kind: 'parser',
  name: 'yaml',
  docsplit: '^1',
  description: 'YAML: the documents of a stream, or the top-level items of a document, as records with their comments (an item over budget whose value is a block mapping or sequence is opened).',
  formats: ['yaml', 'yml'],
  formatAliases: { yml: 'yaml' },
  extensions: ['.yaml', '.yml'],
  reads: 'text',
  whole: true,
  defaultSplitter: 'record',
  detect (sample: string): number {
    if (sample.startsWith('%YAML')) return 0.95
    // most content lines look like YAML: `key: value`, `- item`, `---`, or indented continuations
    // Lines end with LF, CRLF or a lone CR (YAML 1.2's three line breaks).
    const lines = sample.split(/\r\n?|\n/).slice(0, 50).filter((l) => l.trim() !== '' && !l.trimStart().startsWith('#'))
    if (!/[\r\n]$/.test(sample) && lines.length > 1) lines.pop() // the sample may end mid-line
    if (lines.length < 2) return 0
    // An indented line counts when it is an item or a key, inside a block scalar (`|`, `>`), or
    // a scalar's continuation that does not read as code: Python's `class A:` then
    // `    def f(self):` and `        self.x = 1`, or a markdown `[label]: url`, are not YAML.
    let yamlish = 0
    let scalarIndent = -1
    /** The last YAML line started a document: text at the margin may be that document. */
    let scalarDocument = false
    for (const l of lines) {
      const indent = l.length - l.trimStart().length
      if (scalarIndent >= 0 && indent > scalarIndent) {
        yamlish++
        continue
      }
      scalarIndent = -1
      if (!YAML_LINE.test(l) || LOG_LINE.test(l)) {
        if (indent > 0 && !CODE_LIKE.test(l)) yamlish++
        else if (indent === 0 && MARGIN_TEXT.test(l) && !KEY_LIKE.test(l) && !scalarDocument) return 0
        continue
      }
      scalarDocument = DOCUMENT_START.test(l)
      yamlish++
      if (BLOCK_SCALAR.test(l)) scalarIndent = indent
    }
    const keyed = lines.some((l) => /^\s*(- |-$)|^\s*[^\s:#[{][^:#]*?:(\s|$)/.test(l))
    // Flat keys whose values are mostly sentences: a transcript's speakers or a glossary, prose
    // that YAML would refuse (a second `: `) or read as one long record.
    const prose = lines.filter(proseKey).length
    if (prose * 2 >= lines.length && lines.every((l) => !/^\s/.test(l))) return 0
    if (!keyed || yamlish / lines.length < 0.9) return 0
    if (sample.startsWith('---')) return 0.8
    // Items only, each a plain scalar (`- milk`), under a comment at the margin (`# Shopping`):
    // as often a list under a heading in markdown, so not enough to be told YAML by content.
    if (/^#/m.test(sample) && lines.every((l) => PLAIN_ITEM.test(l) && !KEYED_ITEM.test(l))) return 0.45
    return 0.6
  },
  // The handler (and the yaml library under it) loads with the first YAML document.
  create: async (ctx) => await (await import('./handler.js')).createYamlHandler(ctx),
})

export default yaml
