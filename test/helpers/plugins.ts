/** Small plugins for tests of what the engine checks of plugins. */
import { definePlugin, type ParserPlugin } from '../../index.js'

/** A parser of one record holding the whole text, as `record` turns it; `change` edits it. */
export function oneRecord (name: string, more: Partial<ParserPlugin> = {}, change: (text: string) => string = (x) => x): ParserPlugin {
  return definePlugin({
    kind: 'parser',
    name,
    docsplit: '^1',
    formats: [name],
    extensions: [],
    reads: 'text',
    defaultSplitter: 'record',
    create (ctx) {
      let text = ''
      return {
        write (piece: string) { text += piece },
        end () { if (text !== '') ctx.emit({ type: 'record', start: 0, end: text.length, text: change(text) }) },
      }
    },
    ...more,
  } as ParserPlugin)
}
