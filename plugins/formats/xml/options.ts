/** The xml plugin's options, apart from the plugin, for its handler's type. */
import { Type } from 'typebox'

export const xmlOptions = Type.Object({
  record_element: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 256,
    description: 'XML: the name of the elements that are records (such as `item` or `entry`), as written in the document (prefix included, case-sensitive); one that names no element is DOCSPLIT_INVALID_OPTION. Default: the children of the root element.',
  })),
})
