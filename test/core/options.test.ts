import t from 'tap'
import { split, splitStream, optionsSchema, resolveOptions } from '../../index.js'

t.test('should apply the documented defaults and report every effective option', async (t) => {
  const r = await split('hello', { input_format: 'text' })
  t.equal(r.metadata.max_tokens, 512)
  t.equal(r.metadata.overlap_tokens, 0)
  t.equal(r.metadata.splitter, 'sibling')
  t.equal(r.metadata.tokenizer, 'approx')
  t.match(r.metadata.options, { input_format: 'text', max_tokens: 512, tokenizer: 'approx', overlap_tokens: 0, encoding: 'utf-8', splitter: 'sibling' })
})

t.test('should reject budgets out of range with the range in the message', async (t) => {
  for (const max of [7, 0, -1, 1_000_001, 12.5]) {
    t.throws(() => resolveOptions({ max_tokens: max }), { code: 'DOCSPLIT_INVALID_BUDGET', message: /max_tokens must be an integer from 8 to 1000000/ })
  }
  t.equal(resolveOptions({ max_tokens: '64' }).max_tokens, 64, 'strings from flags and forms are coerced')
  t.throws(() => resolveOptions({ max_tokens: 'many' }), { code: 'DOCSPLIT_INVALID_BUDGET' })
  t.throws(() => resolveOptions({ max_tokens: 100, overlap_tokens: 51 }), { code: 'DOCSPLIT_INVALID_BUDGET', message: /at most half/ })
  t.equal(resolveOptions({ max_tokens: 100, overlap_tokens: 50 }).overlap_tokens, 50)
})

t.test('should reject unknown names listing the accepted ones', async (t) => {
  t.throws(() => resolveOptions({ max_token: 5 }), { code: 'DOCSPLIT_UNKNOWN_OPTION', message: /"max_tokens"/ })
  await t.rejects(split('x', { input_format: 'nope' }), { code: 'DOCSPLIT_UNSUPPORTED_FORMAT', message: /"text"/ })
  await t.rejects(split('x', { input_format: 'text', splitter: 'nope' }), { code: 'DOCSPLIT_UNKNOWN_SPLITTER', message: /"sibling", "record"/ })
  await t.rejects(split('x', { input_format: 'text', tokenizer: 'nope' }), { code: 'DOCSPLIT_UNKNOWN_TOKENIZER', message: /"approx"/ })
  // whole within the service's 600-character cap on a problem's detail
  const unknown = await split('x', { input_format: 'text', tokenizer: 'nope' }).catch((e: Error) => e.message)
  t.ok(unknown.length < 600 && unknown.includes('"o200k_base"') && /such as "gpt-4o", .* in all/.test(unknown), `${unknown.length} characters`)
})

t.test('should publish one options schema with enums, bounds and defaults', async (t) => {
  const schema = optionsSchema() as unknown as { properties: Record<string, { enum?: string[], minimum?: number, maximum?: number, default?: unknown }> }
  t.ok(schema.properties.input_format!.enum!.includes('auto'))
  t.ok(schema.properties.input_format!.enum!.includes('text'))
  t.same(schema.properties.splitter!.enum!.slice(0, 2), ['sibling', 'record'])
  t.equal(schema.properties.max_tokens!.minimum, 8)
  t.equal(schema.properties.max_tokens!.maximum, 1_000_000)
  t.equal(schema.properties.max_tokens!.default, 512)
  t.equal(schema.properties.tokenizer!.default, 'approx')
})

t.test('should choose the format by extension, then by content', async (t) => {
  t.equal((await split('a,b\n1,2\n', { filename: 'data.tsv' })).document.input_format, 'tsv')
  t.equal((await split('plain words here\n', { filename: 'notes.txt' })).document.input_format, 'text')
  t.equal((await split('just some words\n')).document.input_format, 'text', 'text when nothing else matches')
})

t.test('should take null options as the defaults and refuse options that are not an object', async (t) => {
  const r = await split('hello', null as unknown as undefined)
  t.equal(r.metadata.max_tokens, 512)
  // Bytes, whose encoding is read from the document when none is given (was DOCSPLIT_INTERNAL).
  const xml = await split(Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a><b>caf\xe9</b></a>', 'latin1'), null as unknown as undefined)
  t.equal(xml.document.encoding, 'windows-1252')
  for (const bad of ['abc', 5, true, [], () => {}]) {
    await t.rejects(split('hello', bad as never), { code: 'DOCSPLIT_INVALID_OPTION', message: /options must be an object/ }, String(bad))
  }
})

t.test('should take a boolean given as a string in any letter case, as the CLI does', async (t) => {
  const context = async (header: string): Promise<unknown> => (await split('a,b\n1,2\n', { input_format: 'csv', header } as never)).chunks[0]!.context
  for (const off of ['false', 'FALSE', 'False', ' false ']) t.equal(await context(off), undefined, JSON.stringify(off))
  for (const on of ['true', 'TRUE', 'True']) t.equal(await context(on), 'a,b', JSON.stringify(on))
  for (const bad of ['no', '0', 'yes']) await t.rejects(split('a,b\n', { input_format: 'csv', header: bad } as never), { code: 'DOCSPLIT_INVALID_OPTION' }, bad)
})

t.test('an unknown name that is a slip of the keyboard gets the name it likely meant', async (t) => {
  for (const [options, meant] of [
    [{ maxTokens: 64 }, 'unknown option "maxTokens" (did you mean "max_tokens"?); accepted:'],
    [{ input_format: 'markdwon' }, 'input_format "markdwon" is not supported (did you mean "markdown"?); accepted:'],
    [{ splitter: 'siblings' }, 'splitter "siblings" is not known (did you mean "sibling"?); accepted:'],
    [{ tokenizer: 'o200k' }, 'tokenizer "o200k" is not known (did you mean "o200k_base"?); accepted:'],
    [{ tokenizer: 'gpt4o' }, 'tokenizer "gpt4o" is not known (did you mean "gpt-4o"?); accepted:'],
  ] as const) {
    const error = await split('x', options as never).then(() => undefined, (e: Error) => e.message)
    t.ok(error?.startsWith(meant), error)
  }
  for (const options of [{ input_format: 'zzz' }, { splitter: 'paragraph' }, { bogus: 1 }]) {
    t.notMatch(await split('x', options as never).then(() => '', (e: Error) => e.message), /did you mean/, 'nothing close: no guess')
  }
})

t.test('should read the options once, and tell a getter that throws as the caller\'s error', async (t) => {
  const throwing = { get max_tokens (): number { throw new RangeError('no') } }
  await t.rejects(split('hello', throwing as never), { code: 'DOCSPLIT_INVALID_OPTION', message: /options could not be read: reading them threw a RangeError/ })
  const proxy = new Proxy({}, { ownKeys () { throw new Error('trap') } })
  await t.rejects(split('hello', proxy as never), { code: 'DOCSPLIT_INVALID_OPTION', message: /options could not be read/ })
  // A getter that changes its answer is read once: the budget checked is the budget used.
  let reads = 0
  const fickle = { get max_tokens (): number { return ++reads === 1 ? 16 : 5 } }
  const r = await split('one two three four five six seven eight nine ten eleven twelve', fickle as never)
  t.equal(r.metadata.max_tokens, 16)
  t.equal(reads, 1)
})

t.test('should refuse a detached ArrayBuffer as a request error', async (t) => {
  const buffer = new TextEncoder().encode('hello').buffer
  structuredClone(buffer, { transfer: [buffer] })
  for (const run of [() => split(buffer), async () => { for await (const _ of splitStream(buffer)) void _ }]) {
    await t.rejects(run(), { code: 'DOCSPLIT_INVALID_REQUEST', message: /ArrayBuffer is detached/ })
  }
  t.equal((await split(new TextEncoder().encode('hello').buffer)).chunks[0]!.text, 'hello', 'a live one splits')
})

t.test('should report a format named by another of its names by its own name', async (t) => {
  for (const [given, name] of [['md', 'markdown'], ['MD', 'markdown'], ['yml', 'yaml'], ['ndjson', 'jsonl'], ['txt', 'text'], ['plain', 'text'], ['py', 'python'], ['tsv', 'tsv']]) {
    const r = await split('1\n', { input_format: given })
    t.equal(r.document.input_format, name, `${given}: document`)
    t.equal(r.metadata.options.input_format, name, `${given}: metadata`)
  }
})

t.test('metadata.options are in the options table\'s order, whatever order they were given in', async (t) => {
  const a = await split('# t\n\nsome text\n', { tokenizer: 'approx', max_tokens: 64, input_format: 'markdown', overlap_tokens: 8 })
  const b = await split('# t\n\nsome text\n', { overlap_tokens: 8, input_format: 'markdown', max_tokens: 64, tokenizer: 'approx' })
  t.equal(JSON.stringify(a), JSON.stringify(b), 'byte for byte')
  t.same(Object.keys(a.metadata.options).slice(0, 4), ['input_format', 'max_tokens', 'splitter', 'tokenizer'])
  // a default given, or left to fill itself: the same
  const c = await split('# t\n\nsome text\n', { splitter: 'sibling', tokenizer: 'approx', max_tokens: 64, input_format: 'markdown', overlap_tokens: 8 })
  t.equal(JSON.stringify(c.metadata), JSON.stringify(a.metadata), 'splitter given or defaulted')
  const csv = 'a,b\n1,2\n'
  const d = await split(csv, { input_format: 'csv', header: true })
  const e = await split(csv, { input_format: 'csv' })
  t.equal(JSON.stringify(d.metadata), JSON.stringify(e.metadata), 'a plugin option given or defaulted')
})

t.test('splitter and tokenizer names are taken in any letter case, and reported as registered', async (t) => {
  const r = await split('a,b\n1,2\n', { input_format: 'csv', splitter: 'Record', tokenizer: 'GPT-4o' })
  t.equal(r.metadata.splitter, 'record')
  t.equal(r.metadata.options.splitter, 'record')
  t.equal(r.metadata.options.tokenizer, 'gpt-4o')
  t.equal(r.metadata.tokenizer, 'o200k_base')
  t.equal((await split('x', { input_format: 'text', tokenizer: 'APPROX' })).metadata.tokenizer, 'approx')
  await t.rejects(split('x', { input_format: 'text', splitter: 'Sibbling' }), { code: 'DOCSPLIT_UNKNOWN_SPLITTER' })
})

t.test('names of Object.prototype are unknown options, not accepted and dropped', async (t) => {
  for (const name of ['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__']) {
    await t.rejects(split('x', JSON.parse(`{"${name}": 1}`) as Record<string, unknown>), { code: 'DOCSPLIT_UNKNOWN_OPTION' }, name)
  }
})

t.test('encoding advertises no default: a client that sends every default must not override what a document declares', async (t) => {
  t.equal((optionsSchema().properties.encoding as { default?: unknown }).default, undefined)
  const latin1 = Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?>\n<r><i>caf\xe9</i></r>\n', 'latin1')
  const declared = await split(latin1, { input_format: 'xml' })
  t.equal(declared.document.encoding, 'windows-1252', 'left out: the declared encoding')
  t.equal(declared.metadata.options.encoding, 'windows-1252', 'the declared label by its WHATWG name')
  const utf8 = Buffer.from('<?xml version="1.0" encoding="UTF-8"?>\n<r/>\n')
  t.equal((await split(utf8, { input_format: 'xml' })).metadata.options.encoding, 'utf-8', 'a declared UTF-8 as text given as a string reports it')
  t.match(declared.chunks.map((c) => c.text).join(''), /café/)
  await t.rejects(split(latin1, { input_format: 'xml', encoding: 'utf-8' }), { code: 'DOCSPLIT_INVALID_UTF8' }, 'given: it wins')
  t.equal((await split('plain text', {})).metadata.options.encoding, 'utf-8', 'nothing declared: UTF-8')
})

t.test('metadata lists the options in effect: another format\'s option is accepted but not listed', async (t) => {
  const r = await split('a,b\n1,2\n', { input_format: 'csv', sheets: ['1'], log_start: '^x', delimiter: ',' })
  t.same(Object.keys(r.metadata.options), ['input_format', 'max_tokens', 'splitter', 'tokenizer', 'overlap_tokens', 'encoding', 'invalid_bytes', 'delimiter', 'header'])
})
