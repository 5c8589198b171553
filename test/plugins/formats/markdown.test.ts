import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import MarkdownIt, { type Token } from 'markdown-it'
import markdown, { detectMarkdown } from '../../../plugins/formats/markdown/index.js'
import { blockTokens, loadMarkdownParser, markdownSteps } from '../../../plugins/formats/markdown/parse.js'
import type { BlockEvent, DocEvent, EnterEvent } from '../../../core/events.js'
import { assertTiles, collectEvents } from '../../helpers/events.js'
import { corpusDir, corpusFiles, corpusMissing } from '../../helpers/corpus.js'

const blocks = (events: DocEvent[]): BlockEvent[] => events.filter((e): e is BlockEvent => e.type === 'block')
const info = (events: DocEvent[], key: string): unknown => {
  const e = events.find((x) => x.type === 'info' && x.key === key)
  return e?.type === 'info' ? e.value : undefined
}
const run = async (text: string, pieceSize = Infinity): Promise<DocEvent[]> => await collectEvents(markdown, text, {}, pieceSize)

/** enter/exit as a compact outline: `+section:A`, `-`, and block kinds. */
function outline (events: DocEvent[]): string[] {
  return events.flatMap((e) => e.type === 'enter' ? [`+${e.kind}${e.label === '' ? '' : ':' + e.label}`]
    : e.type === 'exit' ? ['-'] : e.type === 'block' ? [e.kind] : [])
}

/** Checks beyond tiling: headings attach, sections open on their heading, container offsets agree. */
function checkStructure (events: DocEvent[]): void {
  const open: Array<{ e: EnterEvent }> = []
  let pos = 0
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as DocEvent
    if (e.type === 'enter') {
      if (e.start !== pos) throw new Error(`enter ${e.kind} at ${e.start}, text position ${pos}`)
      open.push({ e })
      if (e.kind === 'section') {
        const next = events[i + 1]
        if (next?.type !== 'block' || next.kind !== 'heading') throw new Error('a section does not open on its heading')
        if (e.label !== e.label.trim() || /\s\s|\n/.test(e.label)) throw new Error(`section label not clean: ${JSON.stringify(e.label)}`)
        // NUL reads as U+FFFD (CommonMark); whitespace runs are one space in labels.
        const heading = next.text.replace(/\0/g, '\ufffd').replace(/\s+/g, ' ')
        if (!heading.includes(e.label)) throw new Error(`label ${JSON.stringify(e.label)} not in its heading`)
        if (/^#{1,6} /.test(heading) && !heading.replace(/^#+ /, '').startsWith(e.label)) {
          throw new Error(`label ${JSON.stringify(e.label)} is not the text after the #'s`)
        }
      }
    } else if (e.type === 'exit') {
      if (open.pop() === undefined) throw new Error('exit without enter')
      if (e.end !== pos) throw new Error(`exit at ${e.end}, text position ${pos}`)
    } else if (e.type === 'block') {
      if (e.kind === 'heading' && e.attachNext !== true) throw new Error('heading without attachNext')
      if (e.kind === 'table_row' || e.kind === 'table_header') {
        if (open.at(-1)?.e.kind !== 'table') throw new Error('table row outside a table')
      }
      for (const r of e.refs ?? []) {
        if (r.offset < e.start || r.offset >= e.end) throw new Error('ref offset outside its block')
      }
      pos = e.end
    }
  }
  if (open.length !== 0) throw new Error('containers left open')
}

t.test('empty input gives no events', async (t) => {
  t.same(await run(''), [])
})

t.test('blank-only and one-line documents tile', async (t) => {
  for (const text of [' ', '\n', '\n\n  \n', 'x', '#', '# ', '-', '>', '***', '```', '|a|\n|-|', '[a]: /u', '\r\n', '\t']) {
    const events = await run(text)
    t.doesNotThrow(() => { assertTiles(events, text); checkStructure(events) }, JSON.stringify(text))
  }
})

t.test('sections nest by heading level, headings attach to what follows', async (t) => {
  const text = '# A\n\ntext\n\n## B\n\nb\n\n### B1\n\n## C #\n\nc\n\nD\n=\n\n#### deep\n\n## E\n'
  const events = await run(text)
  assertTiles(events, text)
  checkStructure(events)
  t.same(outline(events), [
    '+section:A', 'heading', 'paragraph',
    '+section:B', 'heading', 'paragraph', '+section:B1', 'heading', '-', '-',
    '+section:C', 'heading', 'paragraph', '-', '-',
    '+section:D', 'heading', '+section:deep', 'heading', '-', '+section:E', 'heading', '-', '-',
  ])
  t.equal(info(events, 'title'), 'A', 'first h1 is the title')
  t.ok(blocks(events).filter((b) => b.kind === 'heading').every((b) => b.attachNext === true))
})

t.test('block kinds, containers and cut styles', async (t) => {
  const text = [
    'Para one\nstill one', '', '- a', '- b', '', '  b2', '1. x', '', '> q1', '>', '> q2', '',
    '| h | i |', '|---|:-:|', '| 1 | 2 |', '| 3 | 4 |', '', '```js', 'code', '```', '', '    indented', '',
    '<div>', 'html', '</div>', '', '***', 'end',
  ].join('\n')
  const events = await run(text)
  assertTiles(events, text)
  checkStructure(events)
  t.same(outline(events), [
    'paragraph',
    '+list', '+item', 'paragraph', '-', '+item', 'paragraph', 'paragraph', '-', '-',
    '+list', '+item', 'paragraph', '-', '-',
    '+blockquote', 'paragraph', 'paragraph', '-',
    '+table', 'table_header', 'table_row', 'table_row', '-',
    'code', 'code', 'html', 'hr', 'paragraph',
  ])
  const bs = blocks(events)
  const header = bs.find((b) => b.kind === 'table_header')!
  t.equal(header.text, '| h | i |\n|---|:-:|\n', 'header row and delimiter row are one block')
  t.equal(header.attachNext, true)
  t.ok(bs.filter((b) => ['code', 'html', 'table_row', 'table_header'].includes(b.kind)).every((b) => b.cut === 'lines'))
  t.equal(bs.find((b) => b.kind === 'paragraph' && b.text.startsWith('> q1'))?.text, '> q1\n>\n', 'quote lines stay whole')
  t.equal(bs[0]?.text, 'Para one\nstill one\n\n', 'blank lines go with the block before')
})

t.test('front matter is lexed once, and reads as yaml.parse reads it, as JSON data', async (t) => {
  const yaml = await import('yaml')
  /** What the front matter was before it was lexed once: yaml.parse, and the same fallbacks. */
  const expected = (body: string): unknown => {
    try {
      const value: unknown = yaml.parse(body, { maxAliasCount: 100, logLevel: 'error' })
      // A top-level !!binary is bytes, not a mapping.
      return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Uint8Array) ? JSON.parse(JSON.stringify(value)) : undefined
    } catch {
      return /^\s*(?:#.*\n\s*)*[^\s:#][^:\n]*:(?:\s|$)/.test(body) ? null : undefined
    }
  }
  const bodies = [
    'title: Hello\ntags: [a, b]\n',
    'a: &x {k: 1}\nb: *x\nc:\n  <<: *x\n  d: 2\n',
    'when: 2024-01-01\nn: 0x1f\nf: .inf\nnothing: ~\n',
    '? [a, b]\n: complex key\n',
    'a: 1\n--- # a second document\nb: 2\n',
    'title: [unclosed\n',
    '- a\n- b\n',
    'just a string\n',
    '# a comment\nkey: "quoted: colon"\n',
    'a: 1\na: 2\n',
    '!!binary aGVsbG8=\n',
    'k: !custom value\n',
    'a: ' + '['.repeat(40) + ']'.repeat(40) + '\n',
  ]
  const lex = yaml.Lexer.prototype.lex
  let lexed = 0
  yaml.Lexer.prototype.lex = function (...args: Parameters<typeof lex>) {
    lexed++
    return lex.apply(this, args)
  }
  try {
    for (const body of bodies) {
      lexed = 0
      const events = await run(`---\n${body}---\n# Head\n`)
      t.equal(lexed, 1, `${JSON.stringify(body)}: lexed once`)
      t.same(info(events, 'front_matter'), expected(body), `${JSON.stringify(body)}: same value`)
    }
  } finally {
    yaml.Lexer.prototype.lex = lex
  }
  // Read no further than the second document: 1 MiB of `--- x` lines took 4.7 s and 370 MB.
  let lexemes = 0
  yaml.Lexer.prototype.lex = function * (...args: Parameters<typeof lex>) {
    for (const lexeme of lex.apply(this, args)) {
      lexemes++
      yield lexeme
    }
  }
  try {
    t.same(info(await run('---\na: 1\n' + '--- x\n'.repeat(10_000) + '---\n# Head\n'), 'front_matter'), undefined, 'many documents: not front matter')
    t.ok(lexemes < 100, `lexed up to the second document only (${lexemes} lexemes)`)
  } finally {
    yaml.Lexer.prototype.lex = lex
  }
  t.equal(info(await run('---\n' + '- '.repeat(101) + 'x\n---\n'), 'front_matter'), null, 'nested past 100 levels: front matter, value null')
  t.same(info(await run('---\n' + '- '.repeat(99) + 'x\n---\n'), 'front_matter'), undefined, 'a sequence within the limit is not a mapping')
})

t.test('front matter is JSON data: what the library gives is what the CLI and the service print', async (t) => {
  const body = 'tags: !!set {a, b}\nlogo: !!binary aGVsbG8=\norder: !!omap [x: 1, y: [2]]\n' +
    'n: .nan\ni: -.inf\nts: !!timestamp 2001-12-14t21:59:43.10-05:00\nanchor: &a {k: 1}\nalias: *a\n__proto__: {p: 1}\n'
  const value = info(await run(`---\n${body}---\n# Head\n`), 'front_matter') as Record<string, unknown>
  t.same(value, {
    tags: ['a', 'b'], logo: 'aGVsbG8=', order: { x: 1, y: [2] }, n: null, i: null,
    ts: '2001-12-15T02:59:43.100Z', anchor: { k: 1 }, alias: { k: 1 }, ['__proto__']: { p: 1 },
  })
  t.equal(Object.getPrototypeOf(value), Object.prototype, 'a key __proto__ is a member, not the prototype')
  t.ok(Object.hasOwn(value, '__proto__'))
  t.same(JSON.parse(JSON.stringify(value)), value, 'unchanged by a JSON round trip')
})

t.test('front matter: parsed, a block, title from it', async (t) => {
  const text = '---\ntitle: Hello\ntags: [a, b]\n---\n\n# Not the title\n\nBody\n'
  const events = await run(text)
  assertTiles(events, text)
  t.same(info(events, 'front_matter'), { title: 'Hello', tags: ['a', 'b'] })
  t.equal(info(events, 'title'), 'Hello')
  t.same(blocks(events)[0], { type: 'block', kind: 'front_matter', start: 0, end: 35, text: '---\ntitle: Hello\ntags: [a, b]\n---\n\n', cut: 'lines' })

  const dots = '---\r\na: 1\r\n...\r\nText'
  const ev2 = await run(dots)
  assertTiles(ev2, dots)
  t.same(info(ev2, 'front_matter'), { a: 1 }, 'closed by ..., CRLF')

  const bad = '---\ntitle: [unclosed\n---\n# Head\n'
  const ev3 = await run(bad)
  assertTiles(ev3, bad)
  t.equal(info(ev3, 'front_matter'), null, 'invalid YAML: value null, still front matter')
  t.equal(blocks(ev3)[0]?.kind, 'front_matter')
  t.equal(info(ev3, 'title'), 'Head', 'then the first h1 is the title')

  const bomb = '---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n---\n'
  const ev4 = await run(bomb)
  assertTiles(ev4, bomb)
  t.equal(info(ev4, 'front_matter'), null, 'alias expansion is capped')

  // yaml warns about a collection key, quoting it: document content must not reach stderr.
  const printed: string[] = []
  const { warn } = console
  const { emitWarning } = process
  console.warn = (...args: unknown[]) => { printed.push(args.join(' ')) }
  process.emitWarning = ((warning: string | Error) => { printed.push(String(warning)) }) as typeof process.emitWarning
  try {
    const ev5 = await run('---\n? [a, secret]\n: 1\n---\n# Head\n')
    t.same(info(ev5, 'front_matter'), { '[ a, secret ]': 1 })
  } finally {
    console.warn = warn
    process.emitWarning = emitWarning
  }
  t.same(printed, [], 'no yaml warning printed')

  // A line of 400,000 spaces that is not the closing line: its check once backtracked for minutes.
  const spaces = '---\na: 1\n-' + ' '.repeat(400_000) + 'x\n---\nText\n'
  const evSpaces = await run(spaces)
  assertTiles(evSpaces, spaces)
  t.equal(blocks(evSpaces)[0]?.kind, 'front_matter', 'closed by the line after it')
  const closed = '---\na: 1\n--- \t\nText\n'
  t.same(info(await run(closed), 'front_matter'), { a: 1 }, 'a closing line may end in spaces and tabs')

  // CommonMark: a thematic break, then setext headings — not front matter.
  const hr = '---\nFoo\n---\nBar\n---\n'
  const ev5 = await run(hr)
  assertTiles(ev5, hr)
  t.equal(info(ev5, 'front_matter'), undefined)
  t.same(outline(ev5), ['hr', '+section:Foo', 'heading', '-', '+section:Bar', 'heading', '-'])

  const unclosed = '---\ntitle: x\n\n# H\n'
  const ev6 = await run(unclosed)
  assertTiles(ev6, unclosed)
  t.equal(info(ev6, 'front_matter'), undefined, 'unclosed: no front matter')
})

t.test('reference definitions and their uses', async (t) => {
  const text = [
    'See [the docs][Docs] and [Site][] and [site], not [x](y) or [nothing].', '',
    '# Head [docs]', '',
    '[docs]:  https://example.com/docs  "Docs title"', '[SITE]: <https://example.com>', '',
    '> [quoted]: /q', '',
    '| [site] | b |', '|---|---|', '| [quoted] | c |', '',
    'After [Quoted].',
  ].join('\n')
  const events = await run(text)
  assertTiles(events, text)
  checkStructure(events)
  const defs = events.filter((e) => e.type === 'definition')
  t.same(defs, [
    { type: 'definition', label: 'docs', url: 'https://example.com/docs', title: 'Docs title' },
    { type: 'definition', label: 'site', url: 'https://example.com' },
    { type: 'definition', label: 'quoted', url: '/q' },
  ])
  const bs = blocks(events)
  const defBlocks = bs.filter((b) => b.kind === 'definitions')
  t.equal(defBlocks.length, 2)
  t.equal(defBlocks[0]?.text, '[docs]:  https://example.com/docs  "Docs title"\n[SITE]: <https://example.com>\n\n')
  t.equal(defBlocks[1]?.text, '> [quoted]: /q\n\n')
  t.same(outline(events).slice(0, 7), ['paragraph', '+section:Head [docs]', 'heading', 'definitions', '+blockquote', 'definitions', '-'])
  const para = bs[0]!
  t.same(para.refs, [
    { label: 'docs', offset: text.indexOf('[the docs]') },
    { label: 'site', offset: text.indexOf('[Site][]') },
    { label: 'site', offset: text.indexOf('[site]') },
  ], 'uses before definitions, all three forms, case-folded')
  t.same(bs.find((b) => b.kind === 'heading')?.refs, [{ label: 'docs', offset: text.indexOf('[docs]') }])
  t.same(bs.find((b) => b.kind === 'table_header')?.refs, [{ label: 'site', offset: text.indexOf('| [site]') + 2 }])
  t.same(bs.find((b) => b.kind === 'table_row')?.refs, [{ label: 'quoted', offset: text.indexOf('| [quoted]') + 2 }])
  t.same(bs.at(-1)?.refs, [{ label: 'quoted', offset: text.indexOf('[Quoted]') }])

  const none = await run('Just [brackets] and [a][b].\n')
  t.notOk(blocks(none).some((b) => b.refs !== undefined), 'no definitions: no refs')
  const multi = '[Foo\n  bar]: /u\n\n[foo bar] x\n'
  const evm = await run(multi)
  assertTiles(evm, multi)
  t.same(evm.filter((e) => e.type === 'definition'), [{ type: 'definition', label: 'foo bar', url: '/u' }], 'multi-line label, whitespace collapsed')
})

t.test('CRLF, no trailing newline, NUL, BOM, lone CR', async (t) => {
  const lf = '# T\n\npara\n\n- a\n- b\n\n```\nx\n```\n\n| a |\n|---|\n| 1 |\n'
  const crlf = lf.replace(/\n/g, '\r\n')
  const a = await run(lf)
  const b = await run(crlf)
  assertTiles(b, crlf)
  t.same(outline(b), outline(a), 'CRLF gives the same structure')
  t.equal(blocks(b)[1]?.text, 'para\r\n\r\n')
  for (const text of [lf.slice(0, -1), crlf.slice(0, -2), 'a\0b\n\0\n# \0x', '\uFEFF# Title\n\ntext', '# A\rpara\r\r- x']) {
    const events = await run(text)
    t.doesNotThrow(() => { assertTiles(events, text); checkStructure(events) }, JSON.stringify(text.slice(0, 20)))
  }
  t.equal(info(await run('\uFEFF# Title\n\ntext'), 'title'), 'Title', 'a BOM does not hide the heading')
  t.same(info(await run('\uFEFF---\na: 1\n---\n# T\n'), 'front_matter'), { a: 1 }, 'nor the front matter')
  const cr = '---\ra: 1\r---\r# A\rpara\r\r- x\r- y'
  const crEvents = await run(cr)
  assertTiles(crEvents, cr)
  t.same(outline(crEvents), ['front_matter', '+section:A', 'heading', 'paragraph', '+list', '+item', 'paragraph', '-', '+item', 'paragraph', '-', '-', '-'], 'a lone CR ends a line')
  t.same(info(crEvents, 'front_matter'), { a: 1 })
  t.same(outline(await run(cr.replace(/\r/g, '\r\n'))), outline(crEvents), 'CR, CRLF: same structure')
})

t.test('10,000-deep lists and block quotes terminate with valid tiling', async (t) => {
  const cases = {
    'bullets on one line': '- '.repeat(10_000) + 'x\n',
    'ordered on one line': '1. '.repeat(10_000) + 'x',
    'quotes on one line': '> '.repeat(10_000) + 'x\n',
    'quote markers': '>'.repeat(10_000) + ' x\n\nafter\n',
    'indented list lines': Array.from({ length: 10_000 }, (_, i) => ' '.repeat(Math.min(i, 2000) * 2) + '- x').join('\n'),
    'quote lines': Array.from({ length: 2_000 }, (_, i) => '>'.repeat(i + 1) + ' x').join('\n'),
    'mixed': '> - '.repeat(5_000) + 'x\n',
  }
  for (const [name, text] of Object.entries(cases)) {
    const events = await run(text)
    t.doesNotThrow(() => { assertTiles(events, text); checkStructure(events) }, name)
  }
})

t.test('1 MB lines', async (t) => {
  const text = 'a'.repeat(1 << 20) + '\n\n' + '['.repeat(1 << 20) + '\n\n[a]: /x\n\n' + '[a]'.repeat(1 << 18) + '\n\n| ' + 'x'.repeat(1 << 20) + ' |\n|---|\n'
  const events = await run(text)
  assertTiles(events, text)
  checkStructure(events)
  t.equal(blocks(events).find((b) => b.text.startsWith('[a][a]'))?.refs?.length, 1 << 17, 'every use found (`[a][a]` is one full reference)')
})

t.test('slow streams give identical events', async (t) => {
  const text = '---\na: 1\n---\n# T\n\n日本語 😀 [r]\n\n- a\n  - b\n\n> q\n\n| a |\n|---|\n| 1 |\n\n```\nc\n```\n[r]: /u\n'
  const whole = await run(text)
  for (const size of [1, 7, 64]) t.same(await run(text, size), whole, `piece size ${size}`)
})

// ---- generated documents -------------------------------------------------------------------

const word = fc.constantFrom('alpha', 'beta', 'gamma', '日本語', '中文', '한국어', '😀', '👩‍👩‍👧', '*em*', '`c`', '[r1]', '[x][R2]',
  '[l](u)', 'tab\there', '<b>', '&amp;', '\\', '#', '|', '>', '-', '~', '1.', '  ')
const line = fc.array(word, { minLength: 1, maxLength: 6 }).map((ws) => ws.join(' '))
const mdBlock = fc.oneof(
  fc.tuple(fc.integer({ min: 1, max: 6 }), line, fc.boolean()).map(([l, s, close]) => `${'#'.repeat(l)} ${s}${close ? ' ' + '#'.repeat(l) : ''}`),
  fc.tuple(fc.array(line, { minLength: 1, maxLength: 2 }), fc.constantFrom('===', '---', '=')).map(([ls, u]) => `${ls.join('\n')}\n${u}`),
  fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => ls.join('\n')),
  fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.constantFrom('- ', '* ', '1. ', '2) ', '- [ ] '), line), { minLength: 1, maxLength: 6 })
    .map((items) => items.map(([d, m, s]) => '  '.repeat(d) + m + s).join('\n')),
  fc.tuple(fc.integer({ min: 1, max: 4 }), fc.array(fc.array(line, { minLength: 1, maxLength: 4 }), { maxLength: 4 }), fc.boolean())
    .map(([n, rows, outer]) => {
      const row = (cells: string[]): string => (outer ? '| ' : '') + Array.from({ length: n }, (_, i) => (cells[i] ?? '').replace(/\|/g, '\\|')).join(' | ') + (outer ? ' |' : '')
      return [row(Array.from({ length: n }, (_, i) => `h${i}`)), (outer ? '|' : '') + Array(n).fill('---').join('|') + (outer ? '|' : ''), ...rows.map(row)].join('\n')
    }),
  fc.tuple(fc.constantFrom('```', '~~~', '````'), fc.constantFrom('', 'js', 'python'), fc.array(line, { maxLength: 4 }), fc.boolean())
    .map(([f, info, ls, closed]) => [f + info, ...ls, ...(closed ? [f] : [])].join('\n')),
  line.map((s) => '    ' + s),
  fc.tuple(fc.array(fc.tuple(fc.integer({ min: 1, max: 4 }), line), { minLength: 1, maxLength: 4 }), fc.boolean())
    .map(([ls, space]) => ls.map(([d, s]) => '>'.repeat(d) + (space ? ' ' : '') + s).join('\n')),
  line.map((s) => `<div>\n${s}\n</div>`),
  fc.constantFrom('<!-- comment -->', '***', '---', '___', '[r1]: /one', '[R2]: <two> "Two"', '[r1]:\n/url\n"title"', '   ', '>', '-', '1.'),
)
const markdownDoc = fc.record({
  front: fc.option(fc.constantFrom('---\ntitle: Gen\n---', '---\n---', '---\n: bad\n---', '---\nlist: [a, b]\n...'), { nil: undefined }),
  body: fc.array(mdBlock, { maxLength: 12 }),
  sep: fc.constantFrom('\n', '\n\n', '\n\n\n', '\n  \n'),
  crlf: fc.boolean(),
  trailing: fc.boolean(),
}).map(({ front, body, sep, crlf, trailing }) => {
  let text = [...(front !== undefined ? [front] : []), ...body].join(sep) + (trailing ? '\n' : '')
  if (crlf) text = text.replace(/\n/g, '\r\n')
  return text
})
/** Raw markdown-ish noise: any mix of structure characters. */
const noise = fc.string({ unit: fc.constantFrom('#', '-', '*', '>', ' ', '\n', '\n', '|', '`', '~', '[', ']', ':', '1', '.', 'a', '\t', '\r', '<', '=', '\0', '😀'), maxLength: 300 })

t.test('generated markdown: tiles, balanced, headings attach, slow stream twin', async (t) => {
  await fc.assert(fc.asyncProperty(fc.oneof({ arbitrary: markdownDoc, weight: 3 }, { arbitrary: noise, weight: 1 }), fc.integer({ min: 1, max: 64 }), async (text, size) => {
    const events = await run(text)
    assertTiles(events, text)
    checkStructure(events)
    const slow = await run(text, size)
    if (JSON.stringify(slow) !== JSON.stringify(events)) throw new Error(`piece size ${size} gives other events`)
  }), { numRuns: 400 })
  t.pass('400 documents')
})

// ---- corpus --------------------------------------------------------------------------------

t.test('corpus markdown: tiles, structure, slow streams', { skip: corpusMissing }, async (t) => {
  const files = corpusFiles('markdown', ['.md', '.markdown'])
  t.ok(files.length >= 8, 'markdown corpus present')
  for (const file of files) {
    const text = readFileSync(file, 'utf8')
    const whole = await run(text)
    t.doesNotThrow(() => { assertTiles(whole, text); checkStructure(whole) }, `${basename(file)} tiles`)
    t.ok(blocks(whole).length > 10, `${basename(file)} has structure`)
    const crlf = text.replace(/\n/g, '\r\n')
    const crlfEvents = await run(crlf)
    t.doesNotThrow(() => { assertTiles(crlfEvents, crlf) }, `${basename(file)} CRLF tiles`)
    t.same(outline(crlfEvents), outline(whole), `${basename(file)} CRLF: same structure`)
  }
  const small = files.filter((f) => /markdown-test-file|vite-announcing/.test(f))
  for (const file of small) {
    const text = readFileSync(file, 'utf8')
    const whole = await run(text)
    for (const size of [1, 7, 64]) t.same(await run(text, size), whole, `${basename(file)}: piece size ${size}`)
  }
  const readme = files.find((f) => f.endsWith('micromark-readme.md'))
  if (readme !== undefined) {
    const events = await run(readFileSync(readme, 'utf8'))
    const defs = events.filter((e) => e.type === 'definition')
    t.ok(defs.length >= 50, `micromark readme: ${defs.length} definitions`)
    const used = new Set(blocks(events).flatMap((b) => (b.refs ?? []).map((r) => r.label)))
    t.ok(used.size >= 20, `micromark readme: ${used.size} labels used`)
    t.ok([...used].every((l) => defs.some((d) => d.type === 'definition' && d.label === l)), 'every use is defined')
  }
})

// ---- CommonMark / GFM spec examples ----------------------------------------------------------

const FENCE = '`'.repeat(32)
function specExamples (spec: string): Array<{ markdown: string, html: string, line: number }> {
  const out: Array<{ markdown: string, html: string, line: number }> = []
  const lines = spec.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (!(lines[i] as string).startsWith(FENCE + ' example')) continue
    const md: string[] = []
    const html: string[] = []
    let j = i + 1
    for (; j < lines.length && lines[j] !== '.'; j++) md.push(lines[j] as string)
    for (j++; j < lines.length && lines[j] !== FENCE; j++) html.push(lines[j] as string)
    out.push({ markdown: md.map((l) => l + '\n').join('').replace(/→/g, '\t'), html: html.join('\n'), line: i + 1 })
    i = j
  }
  return out
}

const BLOCK_TAGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'ul', 'ol', 'pre', 'table', 'blockquote', 'hr'])
/** Top-level block kinds of expected HTML; raw HTML (any other tag or text) is `html`, merged when adjacent. */
function htmlKinds (html: string): string[] {
  const kinds: string[] = []
  const push = (k: string): void => { if (!(k === 'html' && kinds.at(-1) === 'html')) kinds.push(k) }
  const tag = /<(\/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g
  let depth = 0
  let open = ''
  let pos = 0
  for (let m = tag.exec(html); m !== null; m = tag.exec(html)) {
    const close = m[1] === '/'
    const name = (m[2] as string).toLowerCase()
    if (depth === 0 && html.slice(pos, m.index).trim() !== '') push('html')
    pos = m.index + m[0].length
    if (depth > 0) {
      if (name === open) depth += close ? -1 : 1
      continue
    }
    if (!close && BLOCK_TAGS.has(name)) {
      push(/^h\d$/.test(name) ? 'heading' : name === 'ol' || name === 'ul' ? 'list' : name === 'pre' ? 'code' : name === 'p' ? 'paragraph' : name)
      if (name !== 'hr') { depth = 1; open = name }
    } else push('html')
  }
  if (depth === 0 && html.slice(pos).trim() !== '') push('html')
  return kinds
}
/** Top-level kinds of our events, in the same terms (sections are transparent). */
function eventKinds (events: DocEvent[]): string[] {
  const kinds: string[] = []
  const stack: string[] = []
  let depth = 0
  for (const e of events) {
    if (e.type === 'enter') {
      stack.push(e.kind)
      if (e.kind !== 'section') {
        if (depth === 0) kinds.push(e.kind)
        depth++
      }
    } else if (e.type === 'exit') {
      if (stack.pop() !== 'section') depth--
    } else if (e.type === 'block' && depth === 0 && !['definitions', 'front_matter', 'blank'].includes(e.kind)) {
      if (!(e.kind === 'html' && kinds.at(-1) === 'html')) kinds.push(e.kind)
    }
  }
  return kinds
}

t.test('CommonMark and GFM spec examples: top-level block kinds agree with the expected HTML', { skip: corpusMissing }, async (t) => {
  for (const name of ['commonmark-spec.md', 'gfm-spec.md']) {
    const examples = specExamples(readFileSync(join(corpusDir, 'markdown', name), 'utf8'))
    t.ok(examples.length > 600, `${name}: ${examples.length} examples`)
    let agree = 0
    const unexplained: string[] = []
    for (const ex of examples) {
      const events = await run(ex.markdown)
      assertTiles(events, ex.markdown)
      checkStructure(events)
      const ours = eventKinds(events)
      const spec = htmlKinds(ex.html)
      if (ours.join(' ') === spec.join(' ')) {
        agree++
        continue
      }
      // Known, explained differences: raw HTML blocks whose tags look like blocks in the
      // expected HTML (`<table>`, `<pre>`, `<blockquote>` written as HTML), and `---\n---\n`,
      // which we read as empty front matter (Jekyll) where CommonMark sees two breaks.
      const rawHtml = ours.includes('html') && spec.some((k) => k !== 'html' && !ours.includes(k))
      const emptyFrontMatter = ex.markdown === '---\n---\n'
      if (!rawHtml && !emptyFrontMatter) unexplained.push(`${name}:${ex.line} ours [${ours.join(' ')}] spec [${spec.join(' ')}]`)
    }
    t.same(unexplained, [], `${name}: ${agree} of ${examples.length} agree; the rest are raw HTML or empty front matter`)
    t.ok(agree / examples.length > 0.98, `${name}: ${agree}/${examples.length} agree`)
  }
})

t.test('plain tokens are markdown-it\'s tokens', { skip: corpusMissing }, async (t) => {
  await loadMarkdownParser()
  const md = new MarkdownIt('default', { html: true })
  // Our parse copies no block's content (nothing reads it) but a heading's, its label.
  const fields = (tokens: Token[]): unknown[] =>
    tokens.map((x, i) => ({ ...x, content: tokens[i - 1]?.type === 'heading_open' ? x.content : '' }))
  const reference = (src: string): unknown[] => {
    const tokens: ReturnType<typeof md.parse> = []
    md.block.parse(src, md, {}, tokens)
    return fields(tokens)
  }
  const ours = (src: string): unknown[] => fields(blockTokens(src))
  const docs = corpusFiles('markdown', ['.md']).map((f) => readFileSync(f, 'utf8'))
  docs.push(...specExamples(readFileSync(join(corpusDir, 'markdown', 'commonmark-spec.md'), 'utf8')).map((e) => e.markdown))
  docs.push('a\n  ', 'a\n\t \t', '  ', '\n', '\n\n', 'x', '\t\tx\n  \t', 'a\r\nb\r\n', '- a\n\t- b\n   \t c\n', '>\t> x\n>  \ty', '   code?\n\n    code\n \n')
  let differ = 0
  for (const src of docs) if (!isDeepStrictEqual(ours(src), reference(src))) differ++
  t.equal(differ, 0, `${docs.length} documents: same tokens, field for field`)
  const token = blockTokens('# x\n')[0]!
  t.equal(typeof token.attrGet, 'function', 'Token methods are there')
  t.ok(token instanceof new md.block.State('', md, {}, []).Token, 'instanceof Token')
})

t.test('an anchor or a comment alone goes with the block after it, as a heading does', async (t) => {
  const doc = '## `trustProxy`\n<a id="factory-trust-proxy"></a>\n\n' +
    Array.from({ length: 12 }, (_, i) => `+ Item ${i}: trust the given proxies, a list of addresses separated by commas.\n`).join('') +
    '\n<!-- generated -->\n\nClosing words.\n'
  const marks = blocks(await run(doc)).filter((b) => /^(<a |<!--)/.test(b.text))
  t.same(marks.map((b) => b.attachNext), [true, true], 'the anchor and the comment attach to what follows')
  const { split } = await import('../../../index.js')
  const r = await split(doc, { input_format: 'markdown', max_tokens: 96 })
  t.match(r.chunks[0]!.text, /^## `trustProxy`\n<a id="factory-trust-proxy"><\/a>\n\n\+ Item 0/, 'the heading and its anchor start a chunk with the first items')
  t.notOk(r.chunks.some((c) => /<!-- generated -->\n\n$/.test(c.text)), 'no chunk ends with the comment')
  t.ok(blocks(await run('A paragraph with <a id="x"></a> inside.\n\nNext.\n')).every((b) => b.attachNext !== true), 'text around an anchor is a paragraph like any other')
})

t.test('MDX and docs-site markup: openers go with what they open, `:::` introduces nothing, headings lose anchors and components', async (t) => {
  const doc = '# Install {#install} <Badge type="tip" />\n\n<Tabs>\n<TabItem value="npm">\n\n```bash\nnpm i pkg\n```\n\n</TabItem>\n<TabItem value="yarn" label="Yarn">\n\n```bash\nyarn add pkg\n```\n\n</TabItem>\n</Tabs>\n\n' +
    ':::note\n\nA note.\n\n:::\n\n!!! warning "Careful"\n\nText.\n\n<img src="x.png">\n\nAfter.\n\n## `Promise<T>` and Map<K, V>\n\nGenerics stay.\n'
  const attached = blocks(await run(doc)).filter((b) => b.attachNext === true).map((b) => b.text.trim())
  t.same(attached, ['# Install {#install} <Badge type="tip" />', '<Tabs>\n<TabItem value="npm">', '</TabItem>\n<TabItem value="yarn" label="Yarn">', ':::note', '!!! warning "Careful"', '## `Promise<T>` and Map<K, V>'],
    'headings, start tags (after closing ones) and admonition openers; not `:::`, not a void element')
  const { split } = await import('../../../index.js')
  const r = await split(doc, { input_format: 'markdown', max_tokens: 512 })
  t.equal(r.document.title, 'Install', 'the title without its anchor and component')
  t.same(r.chunks[0]!.path, ['Install'])
  const paths = (await split(doc, { input_format: 'markdown', max_tokens: 16 })).chunks.map((c) => c.path)
  t.ok(paths.some((p) => p[1] === '`Promise<T>` and Map<K, V>'), 'a generic\'s parameters are no component')
  t.equal((await split(doc, { filename: 'guide.mdx', max_tokens: 512 })).document.input_format, 'markdown', '.mdx is markdown')
})

t.test('a list item\'s lead line goes with the nested list it introduces', async (t) => {
  const doc = '- [Factory](#factory)\n  - [logger](#logger)\n  - [trustProxy](#trust-proxy)\n- [Instance](#instance)\n- Plain item\n\n  Its second paragraph.\n  - a nested list after it\n'
  const attached = blocks(await run(doc)).filter((b) => b.attachNext === true).map((b) => b.text.trim())
  t.same(attached, ['- [Factory](#factory)'], 'only the lead line directly followed by its nested list')
})

t.test('a paragraph ending in a colon goes with what it introduces', async (t) => {
  const doc = '# Options\n\nThe options are:\n\n' +
    Array.from({ length: 12 }, (_, i) => `- option ${i}: what it does, said in a sentence of a dozen words or so.\n`).join('') +
    '\nAn example:\n\n```js\nsplit(text)\n```\n\n> Quoted:\n>\n> - a list in a quote\n\nThe end:\n\n## Next\n\nText.\n'
  const attached = blocks(await run(doc)).filter((b) => b.attachNext === true).map((b) => b.text.trim())
  t.same(attached, ['# Options', 'The options are:', 'An example:', '> Quoted:\n>', '## Next'], 'before a list, a code block, a list in the same quote; not before a heading (which attaches as headings do)')
  const { split } = await import('../../../index.js')
  const r = await split(doc, { input_format: 'markdown', max_tokens: 64 })
  t.match(r.chunks[0]!.text, /^# Options\n\nThe options are:\n\n- option 0:/, 'the heading and the introduction start a chunk with the first items')
  t.notOk(r.chunks.slice(0, -1).some((c) => /(are|example):\n\n$/.test(c.text)), 'no chunk ends with an introduction')
})

t.test('a chunk that starts inside a table carries the table\'s header as context', async (t) => {
  const header = '| name | value |\n|---|---|\n'
  const doc = '# T\n\nIntro.\n\n' + header + Array.from({ length: 30 }, (_, i) => `| row ${i} | some value that takes a few tokens ${i} |\n`).join('') + '\nAfter.\n'
  const rows = blocks(await run(doc)).filter((b) => b.kind === 'table_row')
  t.ok(rows.length === 30 && rows.every((b) => b.context === header), 'every row event names its header')
  const { split } = await import('../../../index.js')
  const r = await split(doc, { input_format: 'markdown', max_tokens: 64 })
  const inside = r.chunks.filter((c) => c.text.startsWith('| row'))
  t.ok(inside.length > 3 && inside.every((c) => c.context === header), `the ${inside.length} chunks that start at a row carry the header`)
  t.ok(r.chunks.filter((c) => !c.text.startsWith('| row')).every((c) => c.context === undefined), 'the others carry none')
  t.equal(r.chunks.map((c) => c.text).join(''), doc, 'context is not part of the text')
})

t.test('detect', async (t) => {
  t.ok(detectMarkdown('# Title\n\nSome *text* and a [link](http://x).\n\n```js\nx\n```\n') >= 0.7)
  t.ok(detectMarkdown('| a | b |\n|---|---|\n| 1 | 2 |\n\n- item\n') >= 0.3)
  t.ok(detectMarkdown('{"a": 1}') < 0.2, 'JSON')
  t.ok(detectMarkdown('# Project\n\nIntro paragraph here.\n\n## Usage\n\nMore text about usage.\n') > 0.5, 'headings of two levels and prose: markdown')
  t.ok(detectMarkdown('# config\n\n# more\nexport A=1\n') < 0.5, 'script comments of one level: not')
  t.ok(detectMarkdown('2024-01-01 12:00:00 INFO started\n2024-01-01 12:00:01 WARN slow\n') < 0.2, 'log')
  t.ok(detectMarkdown('a,b,c\n1,2,3\n') < 0.2, 'CSV')
  t.ok(detectMarkdown('# settings\nname: x\nitems:\n  - a\n  - b\nport: 80\n') < 0.2, 'YAML with a comment')
  t.ok(detectMarkdown('---\ntitle: Post\n---\n\n# Post\n\nText with `code`.\n') >= 0.5, 'front matter and a post')
})

t.test('detect on the corpus: markdown scores above every YAML, JSON, XML, CSV and log sample', { skip: corpusMissing }, async (t) => {
  const sample = (f: string): string => readFileSync(f).subarray(0, 4096).toString('utf8')
  const md = corpusFiles('markdown', ['.md']).map((f) => detectMarkdown(sample(f)))
  const others = ['yaml', 'json', 'xml', 'csv', 'log'].flatMap((d) => corpusFiles(d).map((f) => detectMarkdown(sample(f))))
  t.ok(Math.min(...md) >= 0.5, `markdown: lowest ${Math.min(...md)}`)
  t.ok(Math.max(...others) < 0.5, `others (${others.length}): highest ${Math.max(...others)}`)
})

// ---- end to end (through the engine: pipeline, sibling splitter, approx tokenizer) ----------

interface Engine {
  split: typeof import('../../../core/split.js').split
  checkParser: typeof import('../../../core/testing.js').checkParser
}
async function engine (): Promise<Engine | string> {
  try {
    const lib = await import('../../../index.js')
    const registry = await import('../../../core/registry.js')
    const testing = await import('../../../core/testing.js')
    await registry.tokenizerByName('approx').load()
    await lib.split('# probe\n\ntext\n', { input_format: 'markdown', max_tokens: 64 })
    return { split: lib.split, checkParser: testing.checkParser }
  } catch (err) {
    return `the engine cannot split markdown here yet: ${(err as Error).message}`
  }
}
const eng = await engine()
const engineMissing = typeof eng === 'string' ? eng : false

t.test('end to end: split(text, { input_format: markdown })', { skip: engineMissing }, async (t) => {
  const { split } = eng as Engine
  const text = '---\ntitle: Doc\n---\n# Intro\n\nSome text with a [ref][r].\n\n## Part\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```\n\n[r]: https://example.com "R"\n'
  const r = await split(text, { input_format: 'markdown', max_tokens: 64 })
  t.equal(r.schema_version, 'docsplit.chunk.v1')
  t.equal(r.chunks.map((c) => c.text).join(''), text, 'lossless')
  t.ok(r.chunks.every((c) => c.token_count <= 64), 'budget')
  t.equal(r.document.title, 'Doc')
  t.same(r.document.front_matter, { title: 'Doc' })
  t.same(r.reference_definitions.map((d) => [d.label, d.url, d.title]), [['r', 'https://example.com', 'R']])
  t.ok(r.reference_definitions[0]!.chunks.length > 0, 'the definition knows the chunk that uses it')

  const small = await split(text, { input_format: 'markdown', max_tokens: 8 })
  t.equal(small.chunks.map((c) => c.text).join(''), text, 'lossless at 8 tokens')
  t.ok(small.chunks.some((c) => c.path[0] === 'Intro' && c.path[1] === 'Part'), 'heading path')
  for (const c of small.chunks) {
    const last = c.text.trimEnd().split('\n').at(-1) ?? ''
    if (/^#{1,6} /.test(last) && c.index < small.chunks.length - 1 && c.kinds.length > 1) t.fail(`chunk ${c.index} ends with its heading`)
  }
})

t.test('end to end: corpus files split losslessly at 512 tokens', { skip: engineMissing || corpusMissing }, async (t) => {
  const { split } = eng as Engine
  for (const file of corpusFiles('markdown', ['.md'])) {
    const text = readFileSync(file, 'utf8')
    const r = await split(text, { input_format: 'markdown', max_tokens: 512 })
    t.ok(r.chunks.map((c) => c.text).join('') === text && r.chunks.every((c) => c.token_count <= 512), `${basename(file)}: ${r.chunk_count} chunks`)
  }
})

t.test('conformance kit (docsplit/testing checkParser)', { skip: engineMissing }, async (t) => {
  const { checkParser } = eng as Engine
  await checkParser(markdown, [
    { name: 'structure', input: '# A\n\ntext [r]\n\n## B\n\n- x\n- y\n\n| a |\n|---|\n| 1 |\n\n```\nx\n```\n' },
    { name: 'crlf, no final newline', input: '> q\r\n\r\n[r]: /u\r\n\r\n[r]' },
  ], { numRuns: 25, arbitrary: markdownDoc })
  t.pass('conformance kit passed')
})

t.test('blocks go out while the document is still being parsed', async (t) => {
  await loadMarkdownParser()
  const sections = Array.from({ length: 400 }, (_, i) => `## Part ${i}\n\nText of part ${i} with [a ref][later].\n`)
  const text = sections.join('\n') + '\n[later]: /defined-at-the-end\n\n# A title at the end\n'
  const events: DocEvent[] = []
  const steps = markdownSteps(text, (e) => { events.push(e) })[Symbol.iterator]()
  t.notOk(steps.next().done, 'a first step')
  const out = blocks(events)
  t.ok(out.length >= 64 && out.length < 400, `${out.length} blocks out at the first step`)
  t.notOk(events.some((e) => e.type === 'info' || e.type === 'definition'), 'the title and the definition at the end are not parsed yet')
  t.same(out[1]?.refs, [{ label: 'later', offset: text.indexOf('[a ref]') }], 'a use of a label defined further on is found')
  while (steps.next().done !== true);
  t.ok(events.some((e) => e.type === 'definition' && e.label === 'later'), 'the definition comes at the end')
  const whole = await run(text)
  t.same(events, whole, 'the same events as through the parser plugin')
})

t.test('container markers with runs of spaces do not make the definition scans backtrack', async (t) => {
  // Each `-  ` could split its spaces two ways: 2^n tries per line for a pattern that lets it.
  for (const unit of ['-  ', '1.  ', '- > ', '*\t ']) {
    const prefix = unit.repeat(60)
    const text = `[a]: /u\n[b]:\n/w\n\n${prefix}x\n\n${prefix}[a]: /v\n\n${prefix}[a] and [b]\n`
    const events = await run(text)
    t.doesNotThrow(() => { assertTiles(events, text); checkStructure(events) }, JSON.stringify(unit))
    t.ok(events.some((e) => e.type === 'definition' && e.label === 'b'), 'a definition over two lines')
  }
})

t.test('uses of labels defined later are found however the definition is written', async (t) => {
  const { split } = await import('../../../index.js')
  const long = 'x'.repeat(990)
  const cases: Array<[string, string, string]> = [
    ['a label over two lines of a quote', '> [foo\n> bar]: /url\n\nSee [foo bar].\n', 'foo bar'],
    ['a label over lines of a list in a quote', '- > [a\n  > b]: /u\n\nSee [a b].\n', 'a b'],
    ['a definition right after a BOM', '\uFEFF[a]: /u\n\nSee [a].\n', 'a'],
    ['a long label continued in a list item', `- [${long}\n            y]: /u\n\nSee [${long} y].\n`, `${long} y`],
    ['a NUL in the label (read as U+FFFD)', '[a\0]: /u\n\nSee [a\uFFFD].\n', 'a\uFFFD'],
  ]
  for (const [name, text, label] of cases) {
    const response = await split(text, { input_format: 'markdown', max_tokens: 1024 })
    const def = response.reference_definitions.find((d) => d.label === label)
    t.same(def?.chunks, [0], name)
  }
})

t.test('a [label] inside a code span is code, not a use of the reference', async (t) => {
  const { split } = await import('../../../index.js')
  const filler = 'filler words '.repeat(40) + '\n\n'
  const md = 'See [foo] here.\n\n' + filler + 'Code: `[foo]` and ``x [foo] y`` only, with more words to fill it.\n\n' + filler + 'Real [foo] again, and \\`[foo]\\` outside a span.\n\n[foo]: https://example.com\n'
  const r = await split(md, { input_format: 'markdown', max_tokens: 40 })
  const code = r.chunks.findIndex((c) => c.text.startsWith('Code:'))
  t.ok(code > 0)
  const uses = r.reference_definitions[0]!.chunks
  t.notOk(uses.includes(code), `the chunk with only code spans is not a use (uses: ${uses.join(', ')})`)
  t.equal(uses[0], 0)
  t.ok(uses.includes(r.chunks.findIndex((c) => c.text.includes('Real [foo]'))), 'a use after escaped backticks counts')
})
