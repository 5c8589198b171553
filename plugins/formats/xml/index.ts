/**
 * The `xml` parser plugin: the children of the root element, or the elements `record_element`
 * names, as records (see handler.ts for how a document is read, and its safety rules).
 */
import { xmlOptions } from './options.js'
import { definePlugin } from '../../../core/registry.js'

/** Comments, CDATA, processing instructions and a DOCTYPE: skipped by the check below. */
const SKIPPED = /<!--[^]*?-->|<!\[CDATA\[[^]*?\]\]>|<\?[^]*?\?>|<!DOCTYPE(?:[^<>[]|\[[^]*?\])*>/g
/** A start, end or empty-element tag with quoted attributes; or a `<` that starts none. */
const TAG = /<(\/?)([A-Za-z_][\w.:-]*)(?:\s+[A-Za-z_:][\w.:-]*\s*=\s*(?:"[^"<]*"|'[^'<]*'))*\s*(\/?)>|</g
/** An `&` that starts no reference: HTML allows it, XML does not. */
const BARE_AMPERSAND = /&(?![A-Za-z_][\w.:-]*;|#\d+;|#x[\da-fA-F]+;)/
/** Roots of HTML pages and fragments, which are seldom well-formed XML. */
const HTML_ROOTS = new Set(['html', 'head', 'body', 'div', 'span', 'p', 'table', 'ul', 'ol', 'details', 'template', 'form', 'main', 'article', 'nav'])

const localName = (name: string): string => name.slice(name.indexOf(':') + 1)

/**
 * The root element's name when `text` is one well-formed element (tags nested and closed in
 * order, attributes quoted, no bare `&`), with only comments and white space after it: a
 * stream of records with no root (log4j's XMLLayout, `wevtutil` exports), HTML with `<br>`
 * and JSX are not.
 */
function wellFormedRoot (text: string): string | undefined {
  const t = text.replace(SKIPPED, ' ')
  if (BARE_AMPERSAND.test(t)) return undefined
  const open: string[] = []
  let root: string | undefined
  let end = -1
  for (const m of t.matchAll(TAG)) {
    const name = m[2]
    if (name === undefined || end !== -1) return undefined
    if (m[1] === '/') {
      if (open.pop() !== name) return undefined
    } else {
      root ??= name
      if (m[3] !== '/') open.push(name)
    }
    if (open.length === 0) end = m.index + m[0].length
  }
  return end !== -1 && t.slice(end).trim() === '' ? root : undefined
}

const xml = definePlugin({
  kind: 'parser',
  name: 'xml',
  docsplit: '^1',
  description: 'XML (RSS, Atom, SVG, OSM, TEI, ...): the children of the root element, or the elements named by `record_element`, as records.',
  formats: ['xml'],
  extensions: ['.xml', '.rss', '.atom', '.rdf', '.svg', '.osm', '.osc', '.xhtml', '.tei', '.xsd', '.xsl', '.xslt', '.gpx', '.kml', '.plist',
    // .NET and other XML that seldom starts with a declaration: MSBuild, XAML, resources, config, NuGet, WSDL, XLIFF
    '.csproj', '.vbproj', '.fsproj', '.vcxproj', '.props', '.targets', '.xaml', '.resx', '.config', '.nuspec', '.wsdl', '.xlf', '.xliff'],
  reads: 'text',
  defaultSplitter: 'record',
  options: xmlOptions,
  /** `<?xml version="1.0" encoding="ISO-8859-1"?>` at the very start (read as ASCII, as XML says). */
  declaredEncoding (head: Uint8Array): string | undefined {
    const start = Buffer.from(head.buffer, head.byteOffset, Math.min(head.length, 256)).toString('latin1')
    return /^<\?xml[ \t\r\n][^>]*?\bencoding[ \t\r\n]*=[ \t\r\n]*["']([A-Za-z][A-Za-z0-9._-]{0,39})["']/.exec(start)?.[1]
  },
  detect (sample: string): number {
    const t = sample.trimStart()
    if (t.startsWith('<?xml')) return 0.95
    if (!/^<(!--|!DOCTYPE|[A-Za-z_][\w.:-]*[\s>/])/.test(t) || !t.includes('</')) return 0
    // No declaration (MSBuild, XAML): a whole document, not HTML's.
    const root = wellFormedRoot(t)
    return root !== undefined && !HTML_ROOTS.has(localName(root).toLowerCase()) ? 0.8 : 0.5
  },
  // The handler (and sax under it) loads with the first XML document.
  create: async (ctx) => await (await import('./handler.js')).createXmlHandler(ctx),
})

export default xml
