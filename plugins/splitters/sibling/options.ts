/** The sibling packer's options: the plugin declares them, the packer reads them typed. */
import { Type } from 'typebox'

export const siblingOptions = Type.Object({
  separate_sections: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: 64,
    default: 0,
    description: 'sibling, on formats with sections (markdown; text and code have none): sections nested at most this deep never share a chunk: each starts a chunk of its own, with its deeper subsections when they fit (markdown: under one `# Title`, 2 gives every `## Part` chunks of its own; 6 or more, every heading; in a document whose outermost headings are `##`, those are depth 1). Overlap does not cross into such a section. 0: small sections are packed together.',
  })),
})
