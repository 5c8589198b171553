/**
 * What register() refuses in a parser's names, and what it says when a name is taken: the
 * plugin that holds it, and what to change.
 */
import t from 'tap'
import { definePlugin, register, split, type ParserPlugin } from '../../index.js'
import { tokenizerByName, tokenizerSpelling, validatePlugin } from '../../core/registry.js'

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

t.test('a tokenizer alias that is taken is named as the alias, not as the plugin', async (t) => {
  const tokenizer = (name: string, aliases: string[]): Parameters<typeof register>[0] => definePlugin({ kind: 'tokenizer', name, docsplit: '^1', aliases, load: () => ({ name, count: (s: string) => s.length }) })
  t.throws(() => { register(tokenizer('mytok', ['my-model', 'gpt-4o'])) },
    { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED', message: 'tokenizer "mytok": its alias "gpt-4o" is already registered by tokenizer "o200k_base"; drop it from the plugin\'s `aliases`' })
  t.throws(() => { register(tokenizer('mytok', ['approx'])) },
    { message: 'tokenizer "mytok": its alias "approx" is already registered by tokenizer "approx"; drop it from the plugin\'s `aliases`' })
  t.throws(() => { register(tokenizer('tok-a', ['shared-model']), tokenizer('tok-b', ['Shared-Model'])) },
    { message: 'tokenizer "tok-b": its alias "Shared-Model" is already registered by another plugin in the same list; drop it from the plugin\'s `aliases`' })
  t.throws(() => { register(tokenizer('tok-c', ['c-model']), tokenizer('c-model', [])) },
    { message: 'tokenizer "c-model" is already registered by another plugin in the same list; give the plugin another name' })
  t.throws(() => { register(tokenizer('gpt-4o', [])) },
    { message: 'tokenizer "gpt-4o" is already registered by tokenizer "o200k_base"; give the plugin another name' }, 'a name that is taken is the plugin\'s name')
})

t.test('model prefixes: a name or alias first, then the longest prefix; a taken or malformed prefix is refused', async (t) => {
  const tokenizer = (name: string, aliases: string[], modelPrefixes: string[]): Parameters<typeof register>[0] =>
    definePlugin({ kind: 'tokenizer', name, docsplit: '^1', aliases, modelPrefixes, load: () => ({ name, count: (s: string) => s.length }) })
  t.throws(() => { register(tokenizer('prefix-taken', [], ['GPT-4o-'])) },
    { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED', message: 'tokenizer "prefix-taken": its model prefix "GPT-4o-" is already registered by tokenizer "o200k_base"; drop it from the plugin\'s `modelPrefixes`' })
  t.throws(() => { register(tokenizer('prefix-twice', [], ['twice-', 'TWICE-'])) },
    { message: 'tokenizer "prefix-twice": its model prefix "TWICE-" is already registered by the plugin itself (listed twice); drop it from the plugin\'s `modelPrefixes`' })
  for (const bad of ['two words', '', 'x'.repeat(129), 'é-model-']) {
    t.throws(() => { register(tokenizer('prefix-bad', [], [bad])) }, { message: /every entry of `modelPrefixes` is the start of a model name/ }, JSON.stringify(bad.slice(0, 20)))
  }
  register(tokenizer('prefix-short', ['acme-1-special'], ['acme-']), tokenizer('prefix-long', [], ['acme-1-']))
  // Looked up without a split, which would freeze the registry for the tests below.
  const chosen = (name: string): [string, string] => [tokenizerByName(name).name, tokenizerSpelling(name)]
  t.same(chosen('acme-2-2026-01-15'), ['prefix-short', 'acme-2-2026-01-15'])
  t.same(chosen('ACME-1-2026-01-15'), ['prefix-long', 'acme-1-2026-01-15'], 'the longest prefix, in any letter case, spelled as registered')
  t.same(chosen('acme-1-special'), ['prefix-short', 'acme-1-special'], 'an alias before any prefix')
  t.same(chosen('ft:gpt-4o-mini-2024-07-18:My-Org::a1'), ['o200k_base', 'ft:gpt-4o-mini-2024-07-18:My-Org::a1'], 'the rest of the name as given')
  for (const name of ['acme-1 x', `acme-${'x'.repeat(124)}`, 'acme']) {
    t.throws(() => tokenizerByName(name), { code: 'DOCSPLIT_UNKNOWN_TOKENIZER', message: /or one that starts with one of \d+ prefixes such as "gpt-4o-"/ }, name.slice(0, 20))
  }
  t.throws(() => tokenizerByName('acme-1 x'), { message: /^tokenizer "acme-1 x" is not known \(a model name is printable ASCII without spaces, at most 128 characters\)/ }, 'why a prefixed name is refused')
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

t.test('a malformed optional field, or a slip of a field\'s name, stops the plugin at start: it would break other requests or be ignored', async (t) => {
  const refused = (plugin: unknown, message: RegExp, what: string): void => {
    t.throws(() => { validatePlugin(plugin as ParserPlugin) }, { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED', message }, what)
  }
  const base = { kind: 'parser', name: 'fields-test', docsplit: '^1', formats: ['fields-test', 'fields-alt'], extensions: ['.ft'], reads: 'text', defaultSplitter: 'record', create: () => ({ write () {}, end () {} }) }
  // detect: 5 made every split by content fail; aliases: [42] every name found by prefix
  refused({ ...base, detect: 5 }, /parser "fields-test": `detect` is a function, detect\(sample\): a score from 0 to 1/, 'detect')
  refused({ ...base, formatOf: 'x' }, /`formatOf` is a function/, 'formatOf')
  refused({ ...base, declaredEncoding: {} }, /`declaredEncoding` is a function/, 'declaredEncoding')
  refused({ ...base, available: true }, /`available` is a function/, 'available')
  refused({ ...base, description: 42 }, /`description` is a string/, 'description')
  refused({ ...base, extra: ['web'] }, /`extra` is a string/, 'extra')
  refused({ ...base, extensionFormats: { '.ft': 'nope' } }, /every entry of `extensionFormats` maps one of its `extensions` \(as written there\) to one of its `formats`/, 'a format it does not have')
  refused({ ...base, extensionFormats: { '.other': 'fields-alt' } }, /`extensionFormats`/, 'an extension it does not have')
  refused({ ...base, detetc: () => 1 }, /^parser "fields-test": `detetc` is no field of a parser; did you mean `detect`\?$/, 'a slip')
  refused({ ...base, formatAlias: { 'fields-alt': 'fields-test' } }, /did you mean `formatAliases`\?/, 'a slip, shorter')
  refused({ kind: 'packer', name: 'fields-packer', docsplit: '^1', create: () => ({ push () {}, end () {} }), countsUnits: 'yes' }, /splitter "fields-packer": `countsUnits` is true or false/, 'countsUnits')
  const tokenizer = { kind: 'tokenizer', name: 'fields-tok', docsplit: '^1', load: () => ({ name: 'fields-tok', count: (s: string) => s.length }) }
  refused({ ...tokenizer, aliases: 'fields-model' }, /^tokenizer "fields-tok": `aliases` is a list of names, such as \["gpt-4o"\]; not a string$/, 'aliases as a string (was DOCSPLIT_INTERNAL)')
  refused({ ...tokenizer, aliases: ['fields-model', 42] }, /`aliases` is a list of names, such as \["gpt-4o"\]; not a number$/, 'an alias that is not a string')
  refused({ ...tokenizer, aliases: [''] }, /not ""$/, 'an empty alias')
  refused({ ...tokenizer, aliases: { gpt: 'x' } }, /; not an object$/, 'an object')
  refused({ ...tokenizer, modelPrefix: ['fields-'] }, /`modelPrefix` is no field of a tokenizer; did you mean `modelPrefixes`\?/, 'modelPrefix')
  // what passes: the same plugins without the slips; fields of the plugin's own; any alias
  t.doesNotThrow(() => { validatePlugin({ ...base, extensionFormats: { '.ft': 'fields-alt' }, detect: () => 0, description: 'fields', version: '1.2.0' } as ParserPlugin) })
  t.doesNotThrow(() => { validatePlugin({ ...base, names: ['a', 'b'] } as ParserPlugin) }, 'close to a field the plugin has as well: its own')
  t.doesNotThrow(() => { validatePlugin({ ...tokenizer, aliases: ['fields-model', 'café-bpe', 'my model'], modelPrefixes: ['fields-'], options: undefined } as Parameters<typeof validatePlugin>[0]) })
  class WordTokenizer {
    kind = 'tokenizer' as const
    name = 'fields-class'
    docsplit = '^1'
    private readonly cache = new Map<string, number>()
    load (): { name: string, count: (s: string) => number } { return { name: this.name, count: (s: string) => this.cache.get(s) ?? s.length } }
  }
  t.doesNotThrow(() => { validatePlugin(new WordTokenizer()) }, 'a class instance with state of its own')
})
