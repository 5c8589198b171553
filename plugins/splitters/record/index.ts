import { definePlugin } from '../../../core/registry.js'
import { createRecordPacker } from './pack.js'

export default definePlugin({
  kind: 'packer',
  name: 'record',
  docsplit: '^1',
  description: 'Packs whole records up to the budget; a record over budget goes alone, marked protected, never cut.',
  countsUnits: true,
  create: createRecordPacker,
})
