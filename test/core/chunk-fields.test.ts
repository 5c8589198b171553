/**
 * Fields a parser's records add to chunks, declared as its `chunkFields`: checked when the
 * plugin registers, and part of the Chunk schema the fronts show (OpenAPI, the README).
 * (No split here: the registry freezes at the first one.)
 */
import t, { type Test } from 'tap'
import { Type } from 'typebox'
import { listParsers, register, type ParserPlugin } from '../../index.js'
import { responseSchemas } from '../../core/chunk-fields.js'
import { oneRecord } from '../helpers/plugins.js'

function parser (name: string, chunkFields: unknown): ParserPlugin {
  return oneRecord(name, { chunkFields } as Partial<ParserPlugin>)
}

const refused = (t: Test, plugins: ParserPlugin[], message: RegExp): void => {
  t.throws(() => { register(...plugins) }, { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED', message })
}

t.test('a chunk field is a snake_case string or number that neither core nor another parser sets', async (t) => {
  refused(t, [parser('fields-core-test', Type.Object({ text: Type.Optional(Type.String()) }))], /^parser "fields-core-test": chunk field "text" is one that core sets/)
  refused(t, [parser('fields-xlsx-test', Type.Object({ sheet: Type.Optional(Type.String()) }))], /^parser "fields-xlsx-test": chunk field "sheet" is already declared by parser "xlsx"; prefix it/)
  refused(t, [parser('fields-a-test', Type.Object({ same_field: Type.Optional(Type.String()) })), parser('fields-b-test', Type.Object({ same_field: Type.Optional(Type.String()) }))],
    /^parser "fields-b-test": chunk field "same_field" is already declared by another plugin in the same list/)
  refused(t, [parser('fields-camel-test', Type.Object({ sheetName: Type.Optional(Type.String()) }))], /chunk field "sheetName" must be named in snake_case/)
  refused(t, [parser('fields-list-test', Type.Object({ tags: Type.Optional(Type.Array(Type.String())) }))], /chunk field "tags" must be a string, an integer or a number/)
  refused(t, [parser('fields-shape-test', Type.String())], /`chunkFields` must be an object schema/)
  t.doesNotThrow(() => { register(parser('fields-good-test', Type.Object({ good_section: Type.Optional(Type.String({ description: 'test: a section.' })) }))) })
})

t.test('the Chunk schema has the fields parsers declare, each optional, after core\'s', async (t) => {
  const { chunk, response } = responseSchemas(listParsers())
  const names = Object.keys(chunk.properties)
  t.same(names.slice(-4), ['sheet', 'row_start', 'row_end', 'good_section'])
  t.notOk(chunk.required?.includes('sheet'), 'optional: a chunk of another format has none')
  t.equal((chunk as { $id?: string }).$id, 'Chunk')
  const items = (response.properties.chunks as unknown as { items: { properties: Record<string, unknown> } }).items
  t.ok('good_section' in items.properties, 'the response\'s chunks too')
})
