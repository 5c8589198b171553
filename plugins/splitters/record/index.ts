import { definePlugin } from '../../../core/registry.js'
import { createRecordPacker } from './pack.js'

export default definePlugin({
  kind: 'packer',
  name: 'record',
  docsplit: '^1',
  description: 'Packs whole records up to the budget; a record over it goes alone, never cut, and marked protected when over max_tokens.',
  countsUnits: true,
  create: createRecordPacker,
})
