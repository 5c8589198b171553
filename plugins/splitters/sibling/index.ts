import { definePlugin } from '../../../core/registry.js'
import { createSiblingPacker } from './pack.js'
import { siblingOptions } from './options.js'

export default definePlugin({
  kind: 'packer',
  name: 'sibling',
  docsplit: '^1',
  description: 'Packs consecutive siblings of the document tree; opens a node only when it alone is over budget, and cuts a leaf at the finest level needed (line or sentence, word, grapheme).',
  countsUnits: true,
  options: siblingOptions,
  create: createSiblingPacker,
})
