import { definePlugin } from '../../../core/registry.js'
import { createTextParser } from './parse.js'

export default definePlugin({
  kind: 'parser',
  name: 'text',
  docsplit: '^1',
  description: 'Plain text: paragraphs (separated by blank lines), cut at sentences, words and graphemes when over budget.',
  formats: ['text', 'txt', 'plain'],
  formatAliases: { txt: 'text', plain: 'text' },
  extensions: ['.txt', '.text'],
  reads: 'text',
  defaultSplitter: 'sibling',
  create: createTextParser,
})
