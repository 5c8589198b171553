/** Small plugins for tests of what the engine checks of plugins, and a folder for plugin modules. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { definePlugin, type DocEvent, type ParserPlugin } from '../../index.js'

/**
 * A new temporary folder made the current directory, as plugin modules are named on the
 * command line (relative to it), until `t` tears down; its package.json makes its .js files ES
 * modules, as plugins are (beside no package.json they would be CommonJS under tsx).
 */
export function pluginFolder (t: { teardown: (fn: () => void) => void }, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  const cwd = process.cwd()
  process.chdir(dir)
  t.teardown(() => {
    process.chdir(cwd)
    rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

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

/**
 * A parser of one event holding the whole text, a block unless `fields` says otherwise, with
 * `fields` added: for tests of the optional fields of events (`cut`, `attachNext`, `refs`).
 */
export function oneEvent (name: string, fields: Record<string, unknown>, defaultSplitter = 'sibling'): ParserPlugin {
  return oneRecord(name, {
    defaultSplitter,
    create (ctx) {
      let text = ''
      return {
        write (piece: string) { text += piece },
        end () { if (text !== '') ctx.emit({ type: 'block', kind: 'paragraph', start: 0, end: text.length, text, ...fields } as DocEvent) },
      }
    },
  } as Partial<ParserPlugin>)
}
