/**
 * The `xml` parser plugin: the children of the root element, or the elements `record_element`
 * names, as records (see handler.ts for how a document is read, and its safety rules).
 */
import { Type } from 'typebox'
import { definePlugin } from '../../../core/registry.js'

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
  options: Type.Object({
    record_element: Type.Optional(Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'XML: the name of the elements that are records (such as `item` or `entry`), as written in the document (prefix included, case-sensitive); one that names no element is DOCSPLIT_INVALID_OPTION. Default: the children of the root element.',
    })),
  }),
  /** `<?xml version="1.0" encoding="ISO-8859-1"?>` at the very start (read as ASCII, as XML says). */
  declaredEncoding (head: Uint8Array): string | undefined {
    const start = Buffer.from(head.buffer, head.byteOffset, Math.min(head.length, 256)).toString('latin1')
    return /^<\?xml[ \t\r\n][^>]*?\bencoding[ \t\r\n]*=[ \t\r\n]*["']([A-Za-z][A-Za-z0-9._-]{0,39})["']/.exec(start)?.[1]
  },
  detect (sample: string): number {
    const t = sample.trimStart()
    if (t.startsWith('<?xml')) return 0.95
    if (!/^<(!--|!DOCTYPE|[A-Za-z_][\w.:-]*[\s>/])/.test(t) || !t.includes('</')) return 0
    // No declaration (MSBuild, XAML): a root element, not HTML's, that the sample ends by closing.
    const root = /^(?:<!--(?:(?!-->)[^])*-->\s*)*<([A-Za-z_][\w.:-]*)[\s>/]/.exec(t)?.[1]
    return root !== undefined && root.toLowerCase() !== 'html' && t.trimEnd().endsWith(`</${root}>`) ? 0.8 : 0.5
  },
  // The handler (and sax under it) loads with the first XML document.
  create: async (ctx) => await (await import('./handler.js')).createXmlHandler(ctx),
})

export default xml
