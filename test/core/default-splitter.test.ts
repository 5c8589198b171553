/**
 * A parser's defaultSplitter must name a registered splitter. The splitter may come from a
 * plugin loaded after the parser, so the set is checked once it is loaded (at the end of
 * loadPlugins, and before the first split), not at registration: a typo is a failed start,
 * DOCSPLIT_PLUGIN_LOAD_FAILED naming the parser, the name and the splitters there are, rather
 * than a failure of the first split that reaches the parser.
 */
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadPlugins, register, split } from '../../index.js'
import { validatePlugin } from '../../core/registry.js'
import { oneRecord, pluginFolder } from '../helpers/plugins.js'

const dir = pluginFolder(t, 'docsplit-default-splitter-')

const parserModule = (name: string, splitter: string): string => `export default { kind: 'parser', name: '${name}', docsplit: '^1', formats: ['${name}'], extensions: [], reads: 'text', defaultSplitter: '${splitter}',
  create (ctx) { let text = ''; return { write (p) { text += p }, end () { if (text) ctx.emit({ type: 'record', start: 0, end: text.length, text }) } } } }\n`
/** A splitter of one chunk holding everything. */
const packerModule = (name: string): string => `export default { kind: 'packer', name: '${name}', docsplit: '^1', create (ctx) {
  let text = ''
  return { push (e) { if (e.type === 'record' || e.type === 'block') text += e.text }, end () { if (text) ctx.emit({ start: 0, end: text.length, text, tokenCount: ctx.meter.count(text), path: [], kinds: ['record'], boundary: 'end' }) } } } }\n`

writeFileSync(join(dir, 'later-parser.js'), parserModule('later-test', 'later-splitter'))
writeFileSync(join(dir, 'later-splitter.js'), packerModule('later-splitter'))
writeFileSync(join(dir, 'typo-parser.js'), parserModule('typo-test', 'recrod'))
writeFileSync(join(dir, 'typo-splitter.js'), packerModule('recrod'))

t.test('a splitter from a module after the parser\'s, in the same list, is fine', async (t) => {
  await loadPlugins(['./later-parser.js', './later-splitter.js'])
  t.pass('loaded')
})

t.test('a defaultSplitter that names no registered splitter: a load failure naming the module, the parser and the splitters there are', async (t) => {
  const message = 'plugin module "./typo-parser.js": parser "typo-test" names defaultSplitter "recrod", which is not a registered splitter; registered: "sibling", "record", "later-splitter"'
  await t.rejects(loadPlugins(['./typo-parser.js']), { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED', message })
  // A library that goes on anyway: every split refuses, before the registry freezes.
  await t.rejects(split('some text\n', { input_format: 'text' }), { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED', message })
  const late = oneRecord('late-parser-test', { defaultSplitter: 'Record' })
  register(late)
  await loadPlugins(['./typo-splitter.js'])
  const r = await split('some text\n', { input_format: 'typo-test' })
  t.equal(r.metadata.splitter, 'recrod', 'once the splitter is there, the parser uses it')
  t.equal((await split('x\n', { input_format: 'late-parser-test' })).metadata.splitter, 'record', 'names are case-insensitive, as on every front')
})

t.test('a defaultSplitter that is not a name is refused at registration', async (t) => {
  t.throws(() => validatePlugin(oneRecord('no-default-test', { defaultSplitter: undefined as never })), { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED', message: 'parser "no-default-test" needs a `defaultSplitter`: the name of a splitter, such as "sibling" or "record"' })
})
