/**
 * What register() refuses in a parser's names, and what it says when a name is taken: the
 * plugin that holds it, and what to change.
 */
import t from 'tap'
import { definePlugin, register, split, type ParserPlugin } from '../../index.js'

const parser = (name: string, extra: Partial<ParserPlugin>): ParserPlugin => definePlugin({
  kind: 'parser', name, docsplit: '^1', formats: [name], extensions: [], reads: 'text', defaultSplitter: 'record',
  create: (ctx) => ({ write () {}, end () { void ctx } }),
  ...extra,
} as ParserPlugin)

t.test('an extension without its dot, or a format named auto, is refused', async (t) => {
  t.throws(() => { register(parser('registry-nodot-test', { extensions: ['ini'] })) },
    { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED', message: /every entry of `extensions` starts with its dot, such as "\.ini"/ })
  t.throws(() => { register(parser('registry-auto-test', { formats: ['registry-auto-test', 'AUTO'] })) },
    { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED', message: /not "auto" \(which asks for detection\)/ })
  t.throws(() => { register(parser('registry-space-test', { formats: ['two words'] })) }, { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED' })
  // a multi-part extension is fine
  t.doesNotThrow(() => { register(parser('registry-multi-ext-test', { extensions: ['.tar.ini'] })) })
})

t.test('a taken format or extension names its holder and what to change', async (t) => {
  t.throws(() => { register(parser('registry-taken-format-test', { formats: ['markdown'] })) },
    { message: 'format "markdown" is already registered by parser "markdown"; drop it from the plugin\'s `formats` or give another' })
  t.throws(() => { register(parser('registry-taken-ext-test', { extensions: ['.MD'] })) },
    { message: 'extension ".md" is already registered by parser "markdown"; drop it from the plugin\'s `extensions` or give another' })
  t.throws(() => { register(parser('markdown', { formats: ['registry-x-test'] })) },
    { message: 'parser "markdown" is already registered by parser "markdown"; give the plugin another name' })
  t.equal((await split('# a\n', { filename: 'x.md' })).document.input_format, 'markdown', 'nothing of a refused plugin was registered')
})
