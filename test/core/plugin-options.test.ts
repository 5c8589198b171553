/**
 * A plugin's options join the one options table every front reads, so they are checked when
 * the plugin registers. (No split here: the registry freezes at the first one.)
 */
import t, { type Test } from 'tap'
import { Type } from 'typebox'
import { register, type ParserPlugin } from '../../index.js'
import { oneRecord } from '../helpers/plugins.js'

function parser (name: string, options: unknown): ParserPlugin {
  return oneRecord(name, { options } as Partial<ParserPlugin>)
}

const refused = (t: Test, plugins: ParserPlugin[], message: RegExp): void => {
  t.throws(() => { register(...plugins) }, { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED', message })
}

t.test('an option name is taken once: not an engine option, not another plugin\'s with another schema', async (t) => {
  refused(t, [parser('clash-core-test', Type.Object({ max_tokens: Type.Optional(Type.String()) }))], /^parser "clash-core-test": option "max_tokens" is one of the engine's own options/)
  refused(t, [parser('clash-csv-test', Type.Object({ delimiter: Type.Optional(Type.Integer()) }))], /^parser "clash-csv-test": option "delimiter" is already declared by parser "csv" with another schema; prefix it/)
  refused(t, [parser('clash-a-test', Type.Object({ shared_opt: Type.Optional(Type.String()) })), parser('clash-b-test', Type.Object({ shared_opt: Type.Optional(Type.String({ maxLength: 8 })) }))],
    /^parser "clash-b-test": option "shared_opt" is already declared by another plugin in the same list with another schema/)
  // One row of the options table: the description and the default are part of it.
  refused(t, [parser('clash-doc-test', Type.Object({ header: Type.Optional(Type.Boolean({ default: true, description: 'mine' })) }))], /option "header" is already declared by parser "csv" with another schema/)
  refused(t, [parser('clash-default-test', Type.Object({ header: Type.Optional(Type.Boolean({ default: false, description: 'CSV/TSV and xlsx: the first row is a header: it is reported as `columns` and every chunk carries it as `context`.' })) }))], /option "header" is already declared/)
})

t.test('an option declared exactly alike by two plugins is one option, read by both', async (t) => {
  t.doesNotThrow(() => {
    register(parser('alike-a-test', Type.Object({ alike_opt: Type.Optional(Type.Integer({ minimum: 1, description: 'both' })) })),
      parser('alike-b-test', Type.Object({ alike_opt: Type.Optional(Type.Integer({ description: 'both', minimum: 1 })) })))
  }, 'in one list, keys in any order')
  // xlsx reads csv's `header` and `header_row`: it declares them as csv does.
  const csvHeader = Type.Boolean({
    default: true,
    description: 'CSV/TSV and xlsx: the first row is a header: it is reported as `columns` and every chunk carries it as `context`.',
  })
  t.doesNotThrow(() => { register(parser('alike-csv-test', Type.Object({ header: Type.Optional(csvHeader) }))) }, 'as a registered plugin declares it')
})

t.test('an options schema the fronts cannot read is refused, naming the option', async (t) => {
  refused(t, [parser('typo-test', { type: 'object', properties: { my_opt: { type: 'strnig' } } })], /^parser "typo-test": option "my_opt" has an unknown type "strnig"/)
  refused(t, [parser('nested-typo-test', Type.Object({ my_opt: Type.Optional(Type.Union([Type.String(), { type: 'nmber' } as never])) }))], /option "my_opt" has an unknown type "nmber"/)
  refused(t, [parser('not-object-test', Type.String())], /^parser "not-object-test": `options` must be an object schema/)
  refused(t, [parser('camel-test', Type.Object({ camelOpt: Type.Optional(Type.String()) }))], /^parser "camel-test": option "camelOpt" must be named in snake_case/)
  refused(t, [parser('not-schema-test', { type: 'object', properties: { my_opt: 'string' } })], /option "my_opt" is not a schema/)
  refused(t, [parser('required-test', Type.Object({ needed_opt: Type.Integer() }))], /^parser "required-test": option "needed_opt" must be optional: wrap it in Type.Optional/)
})

t.test('good options register and a refused list registers nothing', async (t) => {
  t.doesNotThrow(() => { register(parser('good-options-test', Type.Object({ good_opt: Type.Optional(Type.Integer({ minimum: 1 })), good_list: Type.Optional(Type.Array(Type.String())) }))) })
  // The good second plugin of a refused list is not registered: it can register alone later.
  refused(t, [parser('list-good-test', undefined), parser('list-bad-test', Type.String())], /list-bad-test/)
  t.doesNotThrow(() => { register(parser('list-good-test', undefined)) })
})
