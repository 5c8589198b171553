import t from 'tap'
import fc from 'fast-check'
import { Type, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { checkSimple, isSimpleSchema } from '../../core/check.js'
import { optionsSchema, definePlugin, register, split } from '../../index.js'

const extra: TSchema[] = [
  Type.String({ minLength: 2, maxLength: 3 }),
  Type.Integer({ minimum: -5, maximum: 5 }),
  Type.Number({ minimum: 0.5 }),
  Type.Boolean(),
  Type.Array(Type.String({ maxLength: 2 }), { minItems: 1, maxItems: 2 }),
  Type.Union([Type.Literal('a'), Type.Literal(1), Type.Literal(true)]),
  Type.String({ enum: ['x', 'y'] }),
  Type.String({ pattern: '^(?:a|x)[!-~]*$', maxLength: 4 }),
]

const values = fc.oneof(
  fc.string({ maxLength: 5 }),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
  fc.constantFrom('a', 'x', 'y', ',', 'tab', 'auto', 'strict', '', 'utf-8', 'o200k_base'),
  fc.integer({ min: -10, max: 2_000_000 }),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(fc.string({ maxLength: 3 }), fc.integer()), { maxLength: 3 }),
  fc.object({ maxDepth: 1 }),
)

t.test('the small checker agrees with TypeBox on every option schema in use', async (t) => {
  const schemas = [...Object.values(optionsSchema().properties), ...extra]
  for (const schema of schemas) t.ok(isSimpleSchema(schema), JSON.stringify(schema).slice(0, 80))
  fc.assert(fc.property(fc.constantFrom(...schemas), values, (schema, value) => checkSimple(schema, value) === Value.Check(schema, value)), { numRuns: 5000 })
})

t.test('a schema beyond the small checker is validated by TypeBox', async (t) => {
  t.notOk(isSimpleSchema(Type.Integer({ multipleOf: 3 })), 'multipleOf')
  t.notOk(isSimpleSchema(Type.String({ pattern: '(' })), 'a pattern that does not compile')
  t.notOk(isSimpleSchema(Type.Object({})), 'objects')
  register(definePlugin({
    kind: 'packer',
    name: 'check-test-packer',
    docsplit: '^1',
    description: 'a packer with an option of multiples',
    options: Type.Object({ check_test_multiple: Type.Optional(Type.Integer({ multipleOf: 3 })) }),
    create: () => ({ push () {}, end () {} }),
  }))
  await t.rejects(split('x', { input_format: 'text', check_test_multiple: 4 }), { code: 'DOCSPLIT_INVALID_OPTION' })
  await t.resolves(split('', { input_format: 'text', check_test_multiple: 6 }))
})
