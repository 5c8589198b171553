import t from 'tap'
import fc from 'fast-check'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import xml from '../../../plugins/formats/xml/index.js'
import type { DocEvent, RecordEvent } from '../../../core/events.js'
import { DocsplitError } from '../../../core/errors.js'
import { split } from '../../../index.js'
import { tokenizerByName } from '../../../core/registry.js'
import { assertTiles, collectEvents, recordBoundaries } from '../../helpers/events.js'
import { corpusFiles, corpusMissing } from '../../helpers/corpus.js'
import { checkParser, invariantProblems, parserEvents } from '../../../testing.js'

const records = (events: DocEvent[]): RecordEvent[] => events.filter((e): e is RecordEvent => e.type === 'record')
/** A record's label, or `header` for the text before the first record. */
const labelOf = (r: RecordEvent): string | undefined => r.label ?? r.kind
const summary = (events: DocEvent[]): unknown[] => events.filter((e) => e.type !== 'info').map((e) =>
  e.type === 'record' ? [e.label ?? e.kind, e.text] : e.type === 'block' ? [e.kind, e.text] : e.type === 'enter' ? ['enter', e.label] : e.type)
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

async function rejects (text: string, options = {}, pieceSize = Infinity): Promise<DocsplitError> {
  try {
    await collectEvents(xml, text, options, pieceSize)
  } catch (e) {
    if (e instanceof DocsplitError) return e
    throw e
  }
  throw new Error('accepted')
}

async function eventsWithCuts (text: string, cuts: number[], options: Record<string, unknown> = {}): Promise<DocEvent[]> {
  return await parserEvents(xml, text, { splitter: 'record', ...options }, cuts)
}

t.test('plugin', async (t) => {
  t.same(xml.formats, ['xml'])
  for (const ext of ['.xml', '.rss', '.atom', '.rdf', '.svg', '.osm', '.xhtml', '.tei']) t.ok(xml.extensions.includes(ext), ext)
  t.equal(xml.defaultSplitter, 'record')
  t.ok(xml.options?.properties.record_element !== undefined, 'record_element option')
  t.ok(xml.detect!('<?xml version="1.0"?><a/>') > 0.9)
  t.equal(xml.detect!('# title\n'), 0)
  // without a declaration (MSBuild, XAML): by the extension, or by a root the sample closes
  const csproj = '<Project Sdk="Microsoft.NET.Sdk">\n  <PropertyGroup>\n    <TargetFramework>net8.0</TargetFramework>\n  </PropertyGroup>\n</Project>\n'
  for (const filename of ['app.csproj', 'Directory.Build.props', 'build.targets', 'MainWindow.xaml', 'Strings.resx', 'web.config', undefined]) {
    t.equal((await split(csproj, filename === undefined ? {} : { filename })).document.input_format, 'xml', filename ?? 'by content')
  }
  t.equal(xml.detect!('<!-- c -->\n' + csproj), 0.8, 'after a comment')
  t.equal(xml.detect!(csproj.slice(0, -12)), 0.5, 'not when the root is not closed in the sample')
  // nor what only looks like it: no root, HTML, JSX (before, such inputs split as text: keep them so)
  for (const [name, sample] of [
    ['log4j XMLLayout (records, no root)', '<log4j:event level="INFO"><log4j:message><![CDATA[started]]></log4j:message></log4j:event>\n<log4j:event level="WARN"><log4j:message>slow</log4j:message></log4j:event>\n'],
    ['wevtutil export', '<Event><System><EventID>4624</EventID></System></Event><Event><System><EventID>4634</EventID></System></Event>'],
    ['HTML with void elements', '<section>\n  <p>First line<br>second line</p>\n</section>\n'],
    ['well-formed HTML', '<html><body><p>x</p></body></html>'],
    ['a prefixed html root', '<xhtml:html><xhtml:body>x</xhtml:body></xhtml:html>'],
    ['an HTML fragment', '<div class="note"><p>Hello <b>world</b></p></div>'],
    ['JSX', '<Layout title="Home"><Header user={user} /></Layout>'],
    ['a bare ampersand', '<note><to>Tom & Jerry</to></note>'],
  ] as const) {
    t.equal(xml.detect!(sample), 0.5, name)
    t.equal((await split(sample, {})).document.input_format, 'text', `${name}: split as text`)
  }
})

const feed = '<?xml version="1.0"?>\n<!-- feed -->\n<rss version="2.0"><channel><title>T &amp; U</title>\n' +
  '<item id="1"><t>aaaaaaaaaaaaaaaaaaaaaaa</t><u>bbbbbbbbbbbbbbbbbbbbbbbbbbb</u></item>\n' +
  '<item id="2"><![CDATA[<not a tag>]]></item>\n<!-- between -->\n<item id="3"/>\n</channel>\n<foot>z</foot></rss>\n<!-- tail -->\n'

t.test('records: children of the root after the header record, trailing text with the one before, end tags after the last as markup', async (t) => {
  const ev = await collectEvents(xml, feed, { max_tokens: 100000 })
  assertTiles(ev, feed)
  t.same(summary(ev), [
    ['enter', 'rss'],
    ['header', feed.slice(0, feed.indexOf('<channel>'))],
    ['channel[1]', feed.slice(feed.indexOf('<channel>'), feed.indexOf('<foot>'))],
    ['foot[1]', '<foot>z</foot>'],
    ['markup', '</rss>\n<!-- tail -->\n'],
    'exit',
  ])
  const enter = ev.find((e) => e.type === 'enter')
  t.equal(enter?.type === 'enter' && enter.start, feed.indexOf('<rss'), 'enter start is the element start')
})

t.test('a record over the budget is opened into its children, recursively', async (t) => {
  const ev = await collectEvents(xml, feed, { max_tokens: 8 })
  assertTiles(ev, feed)
  t.same(summary(ev).filter((x) => Array.isArray(x)).map((x) => (x as string[])[0]), [
    // an opened element's end tags are markup inside it, the spaces after them outside
    'enter', 'header', 'enter', 'markup', 'title[1]', 'markup', 'enter', 'markup', 't[1]', 'u[1]', 'markup', 'markup', 'item[2]', 'markup', 'item[3]', 'markup', 'markup', 'foot[1]', 'markup',
  ])
  // An opened record keeps its label as a record (`item[1]`, beside `item[2]`).
  t.same(ev.filter((e) => e.type === 'enter').map((e) => e.type === 'enter' && e.label), ['rss', 'channel[1]', 'item[1]'])
  for (const size of [1, 7]) t.same(await collectEvents(xml, feed, { max_tokens: 8 }, size), ev, `piece size ${size}`)
})

t.test('an element is opened by its tokens, not its length: dense text in few characters, sparse text in many', async (t) => {
  const para = '自然语言处理是计算机科学领域与人工智能领域中的一个重要方向。'
  const dense = `<?xml version="1.0"?>\n<doc>\n<chapter>\n${Array.from({ length: 40 }, (_, i) => `<p n="${i}">${para}</p>`).join('\n')}\n</chapter>\n</doc>\n`
  t.ok(dense.length < 512 * 4, `${dense.length} characters, under 4 a token of the budget`)
  const r = await split(dense, { input_format: 'xml', max_tokens: 512 })
  t.ok(r.chunks.every((c) => !c.protected && c.token_count <= 512), `no chunk over the budget (${r.chunks.map((c) => c.token_count).join(', ')})`)
  t.ok(r.chunks.some((c) => c.path.join('/') === 'doc/chapter[1]'), 'the chapter was opened into its paragraphs')
  // Indentation costs approx little: 3,000 characters of it and a few words fit one record.
  const sparse = `<doc>\n<chapter>\n${Array.from({ length: 10 }, (_, i) => `${' '.repeat(300)}<p>word ${i}</p>`).join('\n')}\n</chapter>\n</doc>\n`
  t.ok(sparse.length > 512 * 4)
  const whole = await collectEvents(xml, sparse, { max_tokens: 512 })
  t.same(whole.filter((e) => e.type === 'record' && e.kind !== 'header').length, 1, 'the sparse chapter stays one record')
  for (const size of [1, 97]) t.same(await collectEvents(xml, dense, { max_tokens: 512 }, size), await collectEvents(xml, dense, { max_tokens: 512 }), `piece size ${size}: the same events`)
})


t.test('a record found too long at its end is opened down its last children: through elements of one child, and again while still over', async (t) => {
  const problems: string[] = []
  for (const maxTokens of [32, 64, 128]) {
    for (let n = 2; n < 24; n++) {
      const items = Array.from({ length: n }, (_, i) => `<li n="${i}">${51.5 + i / 997}</li>`).join(n % 2 === 0 ? '' : '\n')
      for (const doc of [`<r><data><items>${items}</items></data></r>`, `<r><a><b><c>${items}</c></b></a></r>`,
        `<r><rec><id>1</id><payload><rows>${items}</rows></payload></rec></r>`]) {
        const r = await split(doc, { input_format: 'xml', max_tokens: maxTokens })
        if (r.chunks.some((c) => c.protected)) problems.push(`${maxTokens} tokens, ${n} items: ${doc.slice(0, 24)}…`)
        if (r.chunks.map((c) => c.text).join('') !== doc) problems.push(`lost text: ${doc}`)
        const events = await collectEvents(xml, doc, { max_tokens: maxTokens })
        if (!same(await collectEvents(xml, doc, { max_tokens: maxTokens }, 7), events)) problems.push(`pieces of 7 changed the events: ${doc}`)
        // opened while it streamed or at its end, the end tags after the last record are markup
        const glued = records(events).find((e) => e.label?.startsWith('li[') === true && /<\/(items|c|rows)>/.test(e.text))
        if (r.chunks.length > 1 && glued !== undefined) problems.push(`${maxTokens} tokens, ${n} items: end tags in ${glued.label ?? glued.kind}`)
      }
    }
  }
  t.same(problems, [], 'no record of small elements left whole over the budget')
  // the tags that open and close the elements around records are markup, not part of the first
  // and last records: records that fit are not pushed over the budget by them
  const items = Array.from({ length: 40 }, (_, i) => `      <item><id>${i}</id><text>item number ${i} with some words</text></item>\n`).join('')
  const envelope = `<?xml version="1.0"?>\n<root>\n  <data>\n    <items>\n${items}    </items>\n  </data>\n</root>\n`
  const rss = '<?xml version="1.0"?><rss version="2.0"><channel><title>Feed T</title><link>http://x</link>' +
    Array.from({ length: 30 }, (_, i) => `<item><title>Item ${i}</title><description><![CDATA[<p>Para ${i} with some text</p>]]></description></item>`).join('') + '</channel></rss>'
  for (const [doc, options] of [[envelope, { max_tokens: 32 }], [rss, { max_tokens: 40, record_element: 'item' }]] as const) {
    const r = await split(doc, { input_format: 'xml', ...options })
    t.same(r.chunks.filter((c) => c.protected).map((c) => c.token_count), [], `${doc.slice(22, 40)}…: no record over the budget`)
    t.ok(r.chunks.at(-1)!.kinds.includes('markup'), 'the end tags are markup')
    t.equal(r.chunks.map((c) => c.text).join(''), doc)
  }
  // the spaces between records are markup too: a record that fits exactly is not pushed over
  const indented = Array.from({ length: 5 }, (_, i) => `<item><title>Item ${i}</title><text>some words here ${i}</text></item>`)
  const spaced = `<root>\n    ${indented.join('\n    ')}\n</root>\n`
  const approx = await tokenizerByName('approx').load()
  const exact = Math.max(...indented.map((i) => approx.count(i)))
  const fits = await split(spaced, { input_format: 'xml', max_tokens: exact })
  t.same(fits.chunks.filter((c) => c.protected).map((c) => c.token_count), [], `no record over ${exact} tokens`)
  t.same(fits.chunks.filter((c) => c.kinds.includes('record')).map((c) => c.text), indented, 'each record alone, without the spaces after it')
  // an element of text and one child is not opened: that would be the same text under the child's label
  const mixed = '<r><item>Some long text here before the bold part <b>bold</b> and after it more text here</item><item>x</item></r>'
  for (const maxTokens of [8, 12, 16]) {
    const one = await split(mixed, { input_format: 'xml', max_tokens: maxTokens })
    t.same(one.chunks.filter((c) => c.text.includes('bold')).map((c) => c.path), [['r', 'item[1]']], `${maxTokens} tokens: labelled item[1], not b[1]`)
  }
  // an RSS 1.0 channel's <items><rdf:Seq> of links
  const seq = `<rdf:RDF><channel><title>t</title><items><rdf:Seq>${Array.from({ length: 60 }, (_, i) => `<rdf:li resource="https://example.com/post/${i}"/>`).join('\n')}</rdf:Seq></items></channel></rdf:RDF>`
  const r = await split(seq, { input_format: 'xml', max_tokens: 256 })
  t.ok(r.chunks.every((c) => !c.protected), `${r.chunks.map((c) => c.token_count).join(', ')} tokens`)
  t.ok(r.chunks.some((c) => c.path.join('/') === 'rdf:RDF/channel[1]/items[1]/rdf:Seq[1]'), 'split by rdf:li')
})
t.test('an element opened: its children over the budget are opened too, its last child measured to its own end, its end tag inside it', async (t) => {
  // k ended before r was found too long (the elements in it all start near its start): still opened
  const nested = `<root><r><k><a>x</a><b>${'word '.repeat(400)}</b></k><z>end</z></r></root>`
  const n = await split(nested, { input_format: 'xml', max_tokens: 64 })
  t.same(n.chunks.filter((c) => c.protected).map((c) => c.path.join('/')), ['root/r[1]/k[1]/b[1]'], 'only b, text without elements, is over the budget')
  t.same(invariantProblems(n, nested, { tokenizer: await tokenizerByName('approx').load() }), [])
  // the last child of a record opened at its end fits with its own end tag: it stays whole,
  // though with the comment and end tags after it, it would not
  const words = 'alpha beta gamma delta epsilon zeta eta theta iota kappa '.repeat(3)
  const execution = `<execution>\n      <id>plain</id>\n      <configuration><include>${words.slice(0, 100)}</include><trim>false</trim></configuration>\n    </execution>`
  const pom = `<project>\n  <plugin>\n    <artifactId>${words}</artifactId>\n    ${execution}\n    <!-- ${words} ${words} ${words} -->\n  </plugin>\n</project>\n`
  const p = await split(pom, { input_format: 'xml', max_tokens: 64 })
  const from = pom.indexOf(execution)
  t.same(p.chunks.slice(0, -1).map((c) => c.char_end).filter((end) => end > from && end < from + execution.length), [], '<execution> is not cut')
  // with an exact tokenizer an element that fits it may still be opened (approx decides, and
  // counts prose higher): its end tag then goes with its children, not with the next item
  const o200k = await tokenizerByName('o200k_base').load().catch(() => undefined)
  if (o200k !== undefined) {
    const prose = 'The council approved the new budget on Tuesday after a long debate about schools, roads and the future of the harbour district. '
    const item = (i: number): string => `<item>\n      <title>Story ${i}: council approves budget</title>\n      <description>${prose.repeat(3)}</description>\n    </item>`
    const feed = `<rss>\n  <channel>\n    <title>Feed</title>\n    ${item(1)}\n    ${item(2)}\n  </channel>\n</rss>\n`
    const max = o200k.count(item(1))
    const r = await split(feed, { input_format: 'xml', max_tokens: max, tokenizer: 'o200k_base' })
    t.ok(r.chunks.some((c) => c.text === item(1)), `item 1 (${max} o200k tokens) is one chunk, end tag included`)
  }
})

/** An element of words and child elements. */
interface Tree { name: string, words: string | undefined, kids: Tree[], indent: boolean }
const treeWords = fc.array(fc.constantFrom('lorem', 'ipsum', 'council', 'budget', 'é', '中文', '&amp;'), { minLength: 1, maxLength: 60 }).map((w) => w.join(' '))
const tree = fc.letrec<{ el: Tree }>((tie) => ({
  el: fc.record({
    name: fc.constantFrom('a', 'sec', 'item', 'p'),
    words: fc.option(treeWords, { nil: undefined }),
    kids: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant([]), fc.array(tie('el'), { minLength: 1, maxLength: 3 })),
    indent: fc.boolean(),
  }),
})).el
/** Opening it splits it: it, or an element down its only children, has two children or more. */
const splitsTree = (el: Tree): boolean => el.kids.length >= 2 || (el.kids.length === 1 && splitsTree(el.kids[0]!))
/** The element's text, and the span of every element in it (`at`: where it starts in the document). */
function render (el: Tree, at: number, spans: Array<{ start: number, end: number, splits: boolean }>): string {
  let text = `<${el.name}>${el.words ?? ''}`
  for (const k of el.kids) text += (el.indent ? '\n  ' : '') + render(k, at + text.length + (el.indent ? 3 : 0), spans)
  text += `</${el.name}>`
  spans.push({ start: at, end: at + text.length, splits: splitsTree(el) })
  return text
}

t.test('generated nested XML: no boundary inside an element that fits, no protected chunk that could be split', async (t) => {
  const approx = await tokenizerByName('approx').load()
  await fc.assert(fc.asyncProperty(fc.array(tree, { minLength: 1, maxLength: 5 }), fc.constantFrom(20, 40, 80, 150), async (children, max) => {
    let doc = '<root>'
    const spans: Array<{ start: number, end: number, splits: boolean }> = []
    for (const c of children) doc += render(c, doc.length, spans)
    doc += '</root>\n'
    const r = await split(doc, { input_format: 'xml', max_tokens: max })
    const ends = r.chunks.slice(0, -1).map((c) => c.char_end) // BMP only: code points are UTF-16 units
    for (const s of spans) {
      if (approx.count(doc.slice(s.start, s.end)) > max) continue
      const inside = ends.find((e) => e > s.start && e < s.end)
      if (inside !== undefined) throw new Error(`a chunk ends at ${inside}, inside ${doc.slice(s.start, s.end).slice(0, 40)}… (${s.start}..${s.end}), which fits ${max}`)
    }
    for (const c of r.chunks.filter((c) => c.protected)) {
      const whole = spans.filter((s) => s.start >= c.char_start && s.end <= c.char_end && s.splits)
      if (whole.some((s) => !whole.some((o) => o !== s && o.start <= s.start && o.end >= s.end))) throw new Error(`protected chunk ${c.index} (${c.token_count} tokens) holds an element that opens into two or more`)
    }
    return true
  }), { numRuns: 300 })
  t.pass('300 generated documents')
})

t.test('an opened element\'s first child, a short leaf such as its title, is the context of its records', async (t) => {
  const prose = 'The council approved the new budget on Tuesday after a long debate about schools. '
  const item = (i: number, n: number): string => `<item>\n      <title>Story ${i}</title>\n      <description>${prose.repeat(n)}</description>\n    </item>`
  const feed = `<rss>\n  <channel>\n    <title>Feed</title>\n    ${item(1, 12)}\n    ${item(2, 2)}\n  </channel>\n</rss>\n`
  const r = await split(feed, { input_format: 'xml', max_tokens: 64 })
  const description = r.chunks.find((c) => c.path.join('/') === 'rss/channel[1]/item[1]/description[1]')!
  t.equal(description.context, '<title>Feed</title>\n<title>Story 1</title>', 'the feed\'s title, then the item\'s')
  t.equal(r.chunks.find((c) => c.text.includes('Story 2'))!.context?.endsWith('<title>Story 2</title>'), true)
  t.equal(r.chunks[0]!.context, undefined, 'the header record: none')
  // not a first child with elements of its own, or a long one
  const book = `<book><chapter><section><para>${prose.repeat(3)}</para><para>${prose.repeat(3)}</para></section><title>T</title><para>${prose.repeat(3)}</para></chapter></book>`
  t.same((await split(book, { input_format: 'xml', max_tokens: 64 })).chunks.map((c) => c.context).filter((c) => c !== undefined), [])
})

t.test('the document title: an RSS channel\'s, an Atom feed\'s, an XHTML head\'s; not an item\'s', async (t) => {
  const title = async (doc: string): Promise<unknown> => (await split(doc, { input_format: 'xml' })).document.title
  t.equal(await title(feed), 'T & U', 'the channel title, its entity decoded')
  t.equal(await title('<feed xmlns="http://www.w3.org/2005/Atom"><title type="html"><![CDATA[News <b>now</b>]]>\n </title><entry><title>E</title></entry></feed>'), 'News <b>now</b>')
  t.equal(await title('<html><head><title>  A   page </title></head><body><p>x</p></body></html>'), 'A page', 'spaces collapsed')
  t.equal(await title('<feed><entry><title>Only an entry</title></entry></feed>'), null, 'an entry\'s title is not the document\'s')
  t.equal(await title('<TEI><teiHeader><fileDesc><titleStmt><title>Deep</title></titleStmt></fileDesc></teiHeader></TEI>'), null)
  const events = await collectEvents(xml, feed, {}, 1)
  t.same(events.filter((e) => e.type === 'info'), [{ type: 'info', key: 'title', value: 'T & U' }], 'one piece at a time: the same title')
})

t.test('record_element: elements of that name, at any depth, with their ancestors as path', async (t) => {
  const ev = await collectEvents(xml, feed, { record_element: 'item' })
  assertTiles(ev, feed)
  t.same(summary(ev), [
    ['enter', 'rss'], ['enter', 'channel'],
    ['header', feed.slice(0, feed.indexOf('<item id="1"'))],
    ['item[1]', feed.slice(feed.indexOf('<item id="1"'), feed.indexOf('<item id="2"'))],
    ['item[2]', feed.slice(feed.indexOf('<item id="2"'), feed.indexOf('<item id="3"'))],
    ['item[3]', '<item id="3"/>'],
    ['markup', feed.slice(feed.indexOf('<item id="3"/>') + '<item id="3"/>'.length, feed.indexOf('</channel>') + '</channel>'.length)],
    'exit',
    ['markup', feed.slice(feed.indexOf('</channel>') + '</channel>'.length)],
    'exit',
  ])
  const root = await collectEvents(xml, feed, { record_element: 'rss' })
  // the line break after it is markup: a record near the budget is not pushed over by spaces
  t.same(summary(root), [['rss', feed.trimEnd()], ['markup', '\n']], 'the root named: the whole document is one record')
  // nested records of the same name stay inside the outer one; ancestors change between records
  const doc = '<r><g><e>1<e>inner</e></e><e>2</e></g><h><e>3</e></h></r>'
  const ev2 = await collectEvents(xml, doc, { record_element: 'e' })
  assertTiles(ev2, doc)
  t.same(summary(ev2), [['enter', 'r'], ['enter', 'g'], ['header', '<r><g>'], ['e[1]', '<e>1<e>inner</e></e>'], ['e[2]', '<e>2</e>'], ['markup', '</g>'], 'exit', ['enter', 'h'], ['markup', '<h>'], ['e[1]', '<e>3</e>'], ['markup', '</h>'], 'exit', ['markup', '</r>'], 'exit'])
})

t.test('record_element naming no element: DOCSPLIT_INVALID_OPTION with counts, no document text', async (t) => {
  const entry = 'word '.repeat(100)
  const typo = `<feed><entry>${entry}</entry><entry>${entry}</entry></feed>\n`
  for (const size of [Infinity, 1, 7]) {
    const e = await rejects(typo, { record_element: 'entyr', max_tokens: 128 }, size)
    t.equal(e.code, 'DOCSPLIT_INVALID_OPTION', `a typo is an error (pieces of ${size})`)
    t.equal(e.message, 'record_element "entyr": no element of the document has this name (names are compared as written: ' +
      'case-sensitive, with their namespace prefix if any); the root element has 2 child elements with 1 distinct name. ' +
      'Check the spelling, or leave record_element out to make the children of the root the records')
  }
  // through split(): no chunk, the error
  await t.rejects(split(typo, { input_format: 'xml', record_element: 'entyr', max_tokens: 128 }), { code: 'DOCSPLIT_INVALID_OPTION' })
  // element names are document content: counts only, never the names
  const secret = '<zebra-quartz><secret-a/><secret-b><secret-c/></secret-b><secret-a/></zebra-quartz>'
  const e = await rejects(secret, { record_element: 'nothing' })
  t.match(e.message, /^record_element "nothing": /)
  t.match(e.message, /the root element has 3 child elements with 2 distinct names, 4 elements under it in all\./)
  t.notMatch(e.message, /secret|zebra|quartz/, 'no element name in the message')
  t.match((await rejects('<a>text only</a>', { record_element: 'b' })).message, /the root element has no child elements\./)
  t.match((await rejects('<a><Item/><ITEM/></a>', { record_element: 'item' })).message, /; 2 elements have this name in another letter case\./)
  const many = `<r>${Array.from({ length: 70 }, (_, i) => `<n${i}/>`).join('')}<${'x'.repeat(300)}/></r>`
  t.match((await rejects(many, { record_element: 'item' })).message, /has 71 child elements with more than 64 distinct names\./, 'only a few names are kept')
  // empty input stays zero chunks; a document that is only whitespace stays a parse error
  t.equal((await split('', { input_format: 'xml', record_element: 'entyr' })).chunks.length, 0)
  t.equal((await rejects('  \n ', { record_element: 'entyr' })).code, 'DOCSPLIT_PARSE_ERROR')
})

t.test('record_element in a namespaced document: compared as written, with its prefix', async (t) => {
  const doc = '<a:feed xmlns:a="urn:x"><a:entry>x</a:entry>\n<a:entry>y</a:entry>\n<a:meta><a:entry>z</a:entry></a:meta></a:feed>\n'
  const e = await rejects(doc, { record_element: 'entry' })
  t.equal(e.code, 'DOCSPLIT_INVALID_OPTION')
  t.match(e.message, /^record_element "entry": .*compared as written: case-sensitive, with their namespace prefix if any\); /)
  t.match(e.message, /; 3 elements have the local name "entry" with a different prefix or none: write the name with the prefix the document uses/)
  t.notMatch(e.message, /a:|urn:x|feed|meta/, 'no element name, prefix or namespace from the document')
  // another prefix than the document's is not a match either (no namespace resolution)
  t.match((await rejects(doc, { record_element: 'atom:entry' })).message, /3 elements have the local name "entry" with a different prefix or none/)
  const ev = await collectEvents(xml, doc, { record_element: 'a:entry' })
  assertTiles(ev, doc)
  t.same(summary(ev), [
    ['enter', 'a:feed'],
    ['header', '<a:feed xmlns:a="urn:x">'],
    ['a:entry[1]', doc.slice(doc.indexOf('<a:entry>x'), doc.indexOf('<a:entry>y'))],
    ['a:entry[2]', doc.slice(doc.indexOf('<a:entry>y'), doc.indexOf('<a:entry>z'))],
    ['enter', 'a:meta'],
    ['a:entry[1]', '<a:entry>z</a:entry>'],
    ['markup', '</a:meta>'],
    'exit',
    ['markup', '</a:feed>\n'],
    'exit',
  ], 'the prefixed name as written matches')
  // a prefixed document without record_element is unchanged: the children of the root
  t.same(records(await collectEvents(xml, doc)).map(labelOf), ['header', 'a:entry[1]', 'a:entry[2]', 'a:meta[1]'])
})

t.test('malformed XML: parse error with line and column, no document text', async (t) => {
  const e = await rejects('<root>\n  <secret>x</secrets>\n</root>')
  t.equal(e.code, 'DOCSPLIT_PARSE_ERROR')
  t.match(e.message, /^invalid XML at line 2, column \d+: /)
  t.notMatch(e.message, /secret/)
  t.match((await rejects('<a>')).message, /unclosed root tag/)
  t.match((await rejects('')).message, /no root element/)
  t.match((await rejects('  \n ')).message, /no root element/)
  t.match((await rejects('<a/><b/>')).message, /more than one root element/)
  t.match((await rejects('text')).message, /non-whitespace before first tag/)
  t.match((await rejects('<a x=1/>')).message, /line 1, column \d+/)
  t.match((await rejects('<a>&#0;</a>')).message, /invalid character entity/)
  t.match((await rejects('<a><b></a>', {}, 1)).message, /line 1/)
})

t.test('a processing instruction whose data ends in ? ends at its ?> (sax alone never ended it); any cuts give the same events', async (t) => {
  const doc = '<?xml version="1.0"?>\n<root>\n  <?q Really??>\n  <item>1 ?? 2</item>\n  <?pi ????>\n  <item title="a??>b">2</item>\n</root>\n'
  const ev = await collectEvents(xml, doc, { max_tokens: 100000 })
  assertTiles(ev, doc)
  t.same(records(ev).map(labelOf), ['header', 'item[1]', 'item[2]'])
  for (const size of [1, 2, 3, 7]) t.same(await collectEvents(xml, doc, { max_tokens: 100000 }, size), ev, `piece size ${size}`)
  // Outside an instruction a run of ? before ?> is text as it is: the title keeps it.
  for (const size of [Infinity, 1, 3]) {
    const feed = await collectEvents(xml, '<rss><channel><title>What??> now ???></title><?pi a???><item>x</item></channel></rss>', {}, size)
    t.same(feed.filter((e) => e.type === 'info'), [{ type: 'info', key: 'title', value: 'What??> now ???>' }], `piece size ${size}`)
  }
  // Linear in a long run of ?: each ??> found once.
  const run = '?'.repeat(1_000_000)
  for (const doc of [`<root><?pi ${run}>${run}</root>`, `<root><?pi ${run}>${run}>${run}</root>`]) {
    assertTiles(await collectEvents(xml, doc, {}, 4096), doc)
    assertTiles(await collectEvents(xml, doc), doc)
  }
})

t.test('hostile XML: entities are never expanded, nothing is fetched, never a hang', async (t) => {
  let bomb = '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
  for (let i = 1; i <= 9; i++) bomb += ` <!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">\n`
  bomb += ']>\n<lolz><a>&lol9;</a><b>&lol9;&lol9;</b></lolz>\n'
  const ev = await collectEvents(xml, bomb)
  assertTiles(ev, bomb)
  t.equal(ev.map((e) => e.type === 'record' || e.type === 'block' ? e.text : '').join('').length, bomb.length, 'nothing inflated')
  t.same(records(ev).map(labelOf), ['header', 'a[1]', 'b[1]'])
  const quadratic = '<!DOCTYPE q [<!ENTITY x "' + 'x'.repeat(10000) + '">]><q>' + '&x;'.repeat(10000) + '</q>'
  assertTiles(await collectEvents(xml, quadratic), quadratic)
  for (const xxe of [
    '<?xml version="1.0"?>\n<!DOCTYPE foo [ <!ENTITY xxe SYSTEM "file:///etc/passwd"> ]>\n<foo><a>&xxe;</a></foo>',
    '<?xml version="1.0"?>\n<!DOCTYPE foo SYSTEM "http://127.0.0.1:1/evil.dtd">\n<foo><a>&ext;</a></foo>',
    '<?xml version="1.0"?>\n<!DOCTYPE foo [ <!ENTITY % p SYSTEM "file:///etc/passwd"> %p; ]>\n<foo><a/></foo>',
  ]) {
    const e = await collectEvents(xml, xxe)
    assertTiles(e, xxe)
    t.notOk(records(e).some((r) => r.text.includes('root:')), 'no file content')
  }
  // long tokens: the same result for any piece size (sax's own 64 KiB check is piece-dependent)
  const longAttr = '<a><b c="' + 'x'.repeat(200_000) + '"/><!--' + 'y'.repeat(200_000) + '--></a>'
  const la = await collectEvents(xml, longAttr)
  assertTiles(la, longAttr)
  for (const size of [1000, 65536]) t.same(await collectEvents(xml, longAttr, {}, size), la, `200 KB attribute and comment, pieces of ${size}`)
  const e = await rejects('<a b="' + 'x'.repeat(4 * 1024 * 1024 + 70_000))
  t.equal(e.code, 'DOCSPLIT_LIMIT_EXCEEDED', 'an attribute value over 4 MiB')
  const deep = '<a>'.repeat(1000) + '</a>'.repeat(1000)
  const dev = await collectEvents(xml, deep, { max_tokens: 8 }, 65536)
  assertTiles(dev, deep)
  // Deeper is refused as it opens, not after a long parse: each chunk's path holds the open elements.
  const tooDeep = await rejects('<root>' + '<item><t>text</t><body>lorem ipsum '.repeat(400_000))
  t.equal(tooDeep.code, 'DOCSPLIT_LIMIT_EXCEEDED', 'more than 1000 elements open at once')
  t.match(tooDeep.message, /more than 1000 elements open at once at line 1, column \d+/)
})

// ---- generated documents ----

const clean = (s: string): string => s.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '').replace(/[\uD800-\uDFFF]/g, (c, i: number, all: string) => {
  const code = c.charCodeAt(0)
  const next = all.charCodeAt(i + 1)
  const prev = all.charCodeAt(i - 1)
  return (code < 0xDC00 && next >= 0xDC00 && next <= 0xDFFF) || (code >= 0xDC00 && prev >= 0xD800 && prev < 0xDC00) ? c : ''
})
const escapeText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const text = fc.tuple(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('', '&amp;', '&#233;', '&#x1F600;', '&lt;', '&quot;', '&apos;', '&e;'))
  .map(([s, ref]) => escapeText(clean(s)) + ref)
const name = fc.constantFrom('item', 'entry', 'a', 'x:y', 'é', 'n-1', 'B')
const attrs = fc.uniqueArray(fc.tuple(fc.constantFrom('id', 'k', 'xml:lang', 'href', 'ü'), text, fc.boolean()), { selector: (a) => a[0], maxLength: 3 })
  .map((list) => list.map(([k, v, single]) => single ? ` ${k}='${v.replace(/'/g, '&apos;')}'` : ` ${k}="${v.replace(/"/g, '&quot;')}"`).join(''))
const misc = fc.oneof(
  text,
  fc.string({ maxLength: 10 }).map((s) => `<!--${clean(s).replace(/-/g, '_')}-->`),
  fc.string({ unit: 'grapheme', maxLength: 10 }).map((s) => `<![CDATA[${clean(s).replace(/]]>/g, '')}]]>`),
  fc.constantFrom('<?pi some data?>', '\n  ', '\r\n', '\t'),
)
const element = fc.letrec((tie) => ({
  el: fc.tuple(name, attrs, fc.array(fc.oneof({ depthSize: 'small' }, misc, tie('el')), { maxLength: 4 }), fc.boolean())
    .map(([n, a, content, selfClose]) => content.length === 0 && selfClose ? `<${n}${a}/>` : `<${n}${a}>${content.join('')}</${n}>`),
})).el as fc.Arbitrary<string>
const prolog = fc.tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.constantFrom('', '\n', '\n\n  '))
  .map(([decl, comment, doctype, ws]) => (decl ? '<?xml version="1.0" encoding="UTF-8"?>\n' : '') + (comment ? '<!-- generated -->' : '') +
    (doctype ? '<!DOCTYPE root [\n  <!ENTITY e "v">\n]>' : '') + ws)
const separator = fc.array(fc.oneof(misc, fc.constant('\n  ')), { maxLength: 2 }).map((xs) => xs.join(''))
const xmlDoc = fc.tuple(prolog, name, attrs, separator, fc.array(fc.tuple(element, separator), { maxLength: 8 }), fc.constantFrom('', '\n', '\n<!-- end -->\n'))
  .map(([pro, root, a, lead, children, trail]) => {
    let s = `${pro}<root${a}>${lead}`
    const starts: number[] = []
    const names: string[] = []
    for (const [el, sep] of children) {
      starts.push(s.length)
      names.push(/^<([^\s/>]+)/.exec(el)![1]!)
      s += el + sep
    }
    s += `</root>${trail}`
    void root
    return { text: s, starts, names }
  })

t.test('generated XML: tiles, one record per child of the root, any cuts give the same events', async (t) => {
  await fc.assert(fc.asyncProperty(xmlDoc, fc.array(fc.nat(), { maxLength: 8 }), fc.constantFrom(8, 32), async (g, cuts, small) => {
    const events = await collectEvents(xml, g.text, { max_tokens: 1_000_000 })
    assertTiles(events, g.text)
    const recs = records(events)
    const counts = new Map<string, number>()
    const labels = g.names.map((n) => { counts.set(n, (counts.get(n) ?? 0) + 1); return `${n}[${counts.get(n)!}]` })
    const expected = g.starts.length === 0 ? [[0, 'root']] : [[0, 'header'], ...g.starts.map((s, i) => [s, labels[i]])]
    const got = recs.map((r) => [r.start, labelOf(r)])
    if (!same(got, expected)) throw new Error(`records ${JSON.stringify(got)} != ${JSON.stringify(expected)}`)
    if (!same(await eventsWithCuts(g.text, cuts, { max_tokens: 1_000_000 }), events)) throw new Error('cuts changed the events')
    // a small budget opens records: still tiles, independent of cuts, and records are element starts
    const opened = await collectEvents(xml, g.text, { max_tokens: small })
    assertTiles(opened, g.text)
    // a record starts with its own element, except the first after an enter (it holds the parent's start tag)
    let afterEnter = true
    for (const e of opened) {
      if (e.type === 'enter') afterEnter = true
      if (e.type !== 'record' || e.kind === 'header') continue
      const tag = new RegExp(`${afterEnter ? '' : '^'}<${e.label!.replace(/\[\d+\]$/, '')}[\\s/>]`)
      if (!tag.test(e.text)) throw new Error(`record ${e.label} does not hold its element`)
      afterEnter = false
    }
    if (!same(await eventsWithCuts(g.text, cuts, { max_tokens: small }), opened)) throw new Error('cuts changed the opened events')
    if (!same(await collectEvents(xml, g.text, { max_tokens: small }, 1), opened)) throw new Error('1-char pieces changed the events')
  }), { numRuns: 300 })
  t.pass('property held')
})

// ---- corpus ----

const decode = (file: string): string => {
  const bytes = readFileSync(file)
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return new TextDecoder('latin1').decode(bytes) // what the pipeline does with `encoding: latin1`
  }
}
const MALFORMED = /(104-empty_file|105-incomplete_xml_file|107-wrongly_nested_xml_file)\//

t.test('corpus XML: tiles, slow streams give the same events, malformed files rejected', { skip: corpusMissing }, async (t) => {
  const files = corpusFiles('xml', ['.xml', '.rss', '.atom', '.rdf', '.svg', '.osm', '.osc'])
  t.ok(files.length >= 30, 'xml corpus present')
  for (const file of files) {
    const text = decode(file)
    const name = file.slice(file.indexOf('/xml/') + 5)
    if (MALFORMED.test(file)) {
      const e = await rejects(text)
      t.equal(e.code, 'DOCSPLIT_PARSE_ERROR', `${name} rejected`)
      continue
    }
    const whole = await collectEvents(xml, text)
    t.doesNotThrow(() => { assertTiles(whole, text) }, `${name} tiles`)
    for (const size of text.length < 50_000 ? [1, 7, 64] : [7, 4096]) t.same(await collectEvents(xml, text, {}, size), whole, `${name}: piece size ${size}`)
    if (text.length > 20_000) t.ok(records(whole).length > 5, `${name}: split into records`)
  }
  const guardian = files.find((f) => f.includes('guardian.rss'))
  if (guardian !== undefined) {
    const items = await collectEvents(xml, decode(guardian), { record_element: 'item' })
    const [header, ...rest] = records(items)
    t.ok(rest.length > 5 && rest.every((r) => r.label!.startsWith('item[')), 'record_element item on an RSS feed')
    t.ok(header?.kind === 'header' && header.text.includes('<image>') && !header.text.includes('<item>'), 'the channel header is a record of its own')
    t.same(items.filter((e) => e.type === 'enter').map((e) => e.type === 'enter' && e.label), ['rss', 'channel'])
  }
})

// ---- end to end ----

const tokenizerName = 'approx'
const tokenizer = await tokenizerByName(tokenizerName).load()

async function e2e (text: string, options: Record<string, unknown>): Promise<string[]> {
  const r = await split(text, { input_format: 'xml', tokenizer: tokenizerName, ...options })
  const events = await collectEvents(xml, text, options)
  return invariantProblems(r, text, { tokenizer, recordBoundaries: recordBoundaries(events) })
}

t.test('end to end: split() keeps records whole and holds the invariants', async (t) => {
  await fc.assert(fc.asyncProperty(xmlDoc, fc.constantFrom(8, 32, 128), async (g, maxTokens) => {
    const problems = await e2e(g.text, { max_tokens: maxTokens })
    if (problems.length > 0) throw new Error(problems.join('; '))
  }), { numRuns: 100 })
  t.same(await e2e(feed, { max_tokens: 16, record_element: 'item' }), [])
  const r = await split(feed, { input_format: 'xml', tokenizer: tokenizerName, max_tokens: 32 })
  t.ok(r.chunks.length > 1)
  t.ok(r.chunks.some((c) => c.path.includes('channel[1]')), 'path holds the element path')
})

t.test('a long channel header is a chunk of its own, not glued over the budget to the first item', async (t) => {
  const header = '<?xml version="1.0"?>\n<rss version="2.0"><channel><title>News</title>\n' +
    `<description>${'A channel description that goes on. '.repeat(6)}</description>\n`
  const items = Array.from({ length: 6 }, (_, i) => `<item><title>Item ${i}</title><p>${'word '.repeat(60)}</p></item>\n`).join('')
  const doc = `${header}${items}</channel></rss>\n`
  const r = await split(doc, { input_format: 'xml', record_element: 'item', max_tokens: 128 })
  t.same(r.chunks.map((c) => c.protected), r.chunks.map(() => false), 'no chunk over the budget')
  t.same(r.chunks[0]?.kinds, ['header'])
  t.equal(r.chunks[0]?.text, doc.slice(0, doc.indexOf('<item>')))
  t.same(r.chunks[0]?.path, ['rss', 'channel'])
  t.equal(r.chunks[1]?.record_start, 1, 'the header is record 0, as a CSV header row is')
  t.same(await e2e(doc, { record_element: 'item', max_tokens: 128 }), [])
})

t.test('records of two parents with the same name never share a chunk', async (t) => {
  let doc = '<root>\n'
  for (const p of ['A', 'B']) doc += `  <group name="${p}">\n${[0, 1].map((i) => `    <item>${p}${i} some words here</item>\n`).join('')}  </group>\n`
  doc += '</root>\n'
  const r = await split(doc, { input_format: 'xml', record_element: 'item', max_tokens: 200 })
  t.ok(r.chunks.reduce((n, c) => n + c.token_count, 0) < 200, 'the whole document would fit one chunk')
  t.same(r.chunks.map((c) => c.text.match(/[AB]\d/g)), [['A0', 'A1'], ['B0', 'B1']], 'one chunk per group')
  t.same(r.chunks.map((c) => c.path), [['root', 'group'], ['root', 'group']])
})

t.test('corpus end to end', { skip: corpusMissing }, async (t) => {
  for (const file of corpusFiles('xml', ['.xml', '.rss', '.atom', '.svg', '.osm']).filter((f) => !MALFORMED.test(f) && !f.includes('osm-testdata'))) {
    t.same(await e2e(decode(file), { max_tokens: 256 }), [], basename(file))
  }
})

t.test('an encoding declared in the XML declaration decodes the bytes; a BOM or the option wins', async (t) => {
  const body = '<?xml version="1.0" encoding="ISO-8859-1"?>\n<feed>' + Array.from({ length: 60 }, (_, i) => `<entry>Caf\u00e9 n\u00b0${i}, cr\u00e8me br\u00fbl\u00e9e</entry>`).join('\n') + '</feed>\n'
  const bytes = Buffer.from(body, 'latin1')
  const r = await split(bytes, { input_format: 'xml', max_tokens: 32 })
  t.equal(r.chunks.map((c) => c.text).join(''), body, 'decoded as Latin-1')
  t.equal(r.document.encoding, 'windows-1252')
  t.equal(r.metadata.options.encoding, 'windows-1252', 'the effective option, by its WHATWG name')
  t.equal(r.chunks[r.chunks.length - 1]!.byte_end, bytes.length, 'byte offsets index the bytes as received')
  // however small the pieces come, the declaration is seen
  const pieces = (async function * () { for (const b of bytes) yield Uint8Array.of(b) })()
  t.same((await split(pieces, { input_format: 'xml', max_tokens: 32 })).chunks, r.chunks, 'one byte at a time: same chunks')
  const named = await split(bytes, { filename: 'feed.rss', max_tokens: 32 })
  t.same(named.chunks, r.chunks, 'found by the extension too')
  await t.rejects(split(bytes, { input_format: 'xml', encoding: 'utf-8' }), { code: 'DOCSPLIT_INVALID_UTF8' }, 'an encoding given wins')
  const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body.replace(/\u00e9/g, 'e'), 'utf8')])
  t.equal((await split(withBom, { input_format: 'xml' })).document.encoding, 'utf-8', 'a BOM wins')
  const sjis = Buffer.from('<?xml version="1.0" encoding="Shift_JIS"?><a><b>x</b></a>')
  await t.rejects(split(sjis, { input_format: 'xml' }), { code: 'DOCSPLIT_UNSUPPORTED_ENCODING', message: /^the document declares encoding "Shift_JIS": / })
  t.equal((await split(Buffer.from('<?xml version="1.0" encoding="UTF-8"?><a><b>\u00e9</b></a>'), { input_format: 'xml' })).document.encoding, 'utf-8')
  t.equal(xml.declaredEncoding?.(Buffer.from('<a encoding="latin1"/>')), undefined, 'only in a declaration at the very start')
  // A UTF-16 label on bytes that read as ASCII is a mislabel: the bytes are decoded as UTF-8.
  const mislabelled = await split([Buffer.from('<?xml version="1.0" encoding="UTF-16"?><a><b>caf\u00e9</b><b>x</b></a>')], { input_format: 'xml' })
  t.equal(mislabelled.document.encoding, 'utf-8')
  t.match(mislabelled.chunks.map((c) => c.text).join(''), /caf\u00e9/)
})

t.test('corpus: the ISO-8859-1 feed splits without an encoding option', { skip: corpusMissing }, async (t) => {
  const file = corpusFiles('xml', ['.rss']).find((f) => f.endsWith('encoding-iso-8859-1.rss'))
  if (file === undefined) return t.skip('not in this corpus')
  const r = await split(readFileSync(file), { filename: basename(file) })
  t.equal(r.document.encoding, 'windows-1252')
  t.ok(r.chunks.some((c) => /[\u00e0-\u00ff]/.test(c.text)), 'accented letters decoded')
})

t.test('conformance kit (docsplit/testing)', async (t) => {
  await checkParser(xml, [
    { name: 'feed', input: feed },
    { name: 'feed by item', input: feed, options: { record_element: 'item' } },
    { name: 'no children', input: '<?xml version="1.0"?><a>text only</a>' },
  ], { numRuns: 30 })
  t.pass('xml passes the conformance kit')
})

t.test('the text before the first record does not count toward opening it', async (t) => {
  // A long comment before the first child made that child look long: it was opened into its
  // children, though it fits (the others were not).
  const book = '<book><title>A title here</title><author>Someone</author><year>2001</year></book>\n'
  const doc = '<?xml version="1.0"?>\n<!--\n' + 'A licence line of the header comment, repeated.\n'.repeat(30) + '-->\n<catalog>\n' + book.repeat(4) + '</catalog>\n'
  const ev = await collectEvents(xml, doc, { max_tokens: 256 })
  assertTiles(ev, doc)
  t.same(records(ev).map(labelOf), ['header', 'book[1]', 'book[2]', 'book[3]', 'book[4]'])
})

t.test('mixed content: the prose after an inline element is no part of it, and is cut at sentences', async (t) => {
  const prose = (n: number): string => Array.from({ length: n }, (_, i) => `Sentence number ${i} says a little more about the matter.`).join(' ')
  // A TEI paragraph with a page break (`<pb/>`) and other inline elements in its text.
  const doc = `<TEI><text><body><sp><speaker>A</speaker><p>${prose(6)} <hi>x</hi> ${prose(3)}\n <pb n="1"/> ${prose(12)} <hi>y</hi> ${prose(2)}</p></sp><sp><p>short</p></sp></body></text></TEI>`
  const r = await split(doc, { input_format: 'xml', max_tokens: 64 })
  t.equal(r.chunks.map((c) => c.text).join(''), doc)
  // The empty `<pb/>` carried the 12 sentences after it as its record: 175 tokens, protected.
  t.same(r.chunks.filter((c) => c.protected).map((c) => c.path.at(-1)), [], 'no chunk over the budget')
  const prosy = r.chunks.filter((c) => c.kinds.length === 1 && c.kinds[0] !== 'record' && !c.text.includes('<'))
  t.ok(prosy.length >= 2, `${prosy.length} chunks of prose alone`)
  t.ok(prosy.every((c) => /\. $/.test(c.text)), 'each ends at a sentence')
})
