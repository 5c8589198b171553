/**
 * What the engine checks of every plugin while it splits, built in or third-party: a chunk's
 * text is the source text, counts are whole numbers, containers close, end() finishes, and a
 * failing load is named, never an anonymous internal error (detect and formatOf: sniff.test.ts;
 * an unknown defaultSplitter: default-splitter.test.ts).
 */
import t, { type Test } from 'tap'
import { DocsplitError, definePlugin, register, split, type ChunkDraft, type PackerPlugin, type ParserPlugin } from '../../index.js'
import { validatePlugin } from '../../core/registry.js'
import { oneEvent, oneRecord } from '../helpers/plugins.js'

/** A parser of one record per line whose texts have their letters blanked: same lengths, other text. */
const blankLines = oneRecord('blank-lines-test', {
  create (ctx) {
    let text = ''
    return {
      write (piece: string) { text += piece },
      end () {
        let at = 0
        for (const line of text.split(/(?<=\n)/)) {
          ctx.emit({ type: 'record', start: at, end: at + line.length, text: line.replace(/[a-z]/g, ' ') })
          at += line.length
        }
      },
    }
  },
} as Partial<ParserPlugin>)

/** A splitter of one chunk of everything (one record), whose draft `change` edits. */
/** A packer of one chunk holding every unit; `change` edits that draft, or returns the drafts to emit instead. */
function onePacker (name: string, change: (draft: ChunkDraft) => void | ChunkDraft[]): PackerPlugin {
  return definePlugin({
    kind: 'packer',
    name,
    docsplit: '^1',
    create (ctx) {
      let text = ''
      return {
        push (event) { if (event.type === 'record' || event.type === 'block') text += event.text },
        end () {
          const draft: ChunkDraft = { start: 0, end: text.length, text, tokenCount: ctx.meter.count(text), path: [], kinds: ['record'], boundary: 'end', recordStart: 0, recordCount: 1 }
          for (const d of change(draft) ?? [draft]) ctx.emit(d)
        },
      }
    },
  } as PackerPlugin)
}

const throwingTokenizer = definePlugin({ kind: 'tokenizer', name: 'throwing-count-test', docsplit: '^1', load: () => ({ name: 'throwing-count-test', count: (): number => { throw new Error('count broke') } }) })

register([
  onePacker('fields-test', (d) => { d.fields = { text: 'REPLACED' } }),
  onePacker('path-test', (d) => { d.path = 'notalist' as never }),
  onePacker('boundary-test', (d) => { d.boundary = 'whatever' as never }),
  onePacker('protected-small-test', (d) => { d.protected = true }),
  onePacker('protected-many-test', (d) => { d.protected = true; d.recordCount = 2; d.tokenCount = 10_000 }),
  onePacker('refs-draft-test', (d) => { d.refs = 'intro' as never }),
  onePacker('overlap-starts-test', (d) => { d.overlapStarts = [0, -1] }),
  onePacker('overlap-avoid-test', (d) => { d.overlapAvoid = [[0, 2], [3] as unknown as [number, number]] }),
  onePacker('half-count-test', (d) => { d.tokenCount += 0.5 }),
  onePacker('negative-count-test', (d) => { d.tokenCount = -3 }),
  onePacker('string-count-packer-test', (d) => { d.tokenCount = String(d.tokenCount) as never }),
  onePacker('empty-draft-test', (d) => [{ ...d, end: 0, text: '', tokenCount: 0 }, d]),
  definePlugin({
    kind: 'packer',
    name: 'end-every-chunk-test',
    docsplit: '^1',
    create: (ctx) => ({
      push (event) {
        if (event.type === 'record' || event.type === 'block') ctx.emit({ start: event.start, end: event.end, text: event.text, tokenCount: ctx.meter.count(event.text), path: [], kinds: [event.kind ?? event.type], boundary: 'end' })
      },
      end () {},
    }),
  }),
  onePacker('throwing-packer-test', () => { throw new Error('packer broke') }),
  definePlugin({ kind: 'packer', name: 'throwing-create-test', docsplit: '^1', create: () => { throw new Error('create broke') } }),
  oneRecord('own-internal-test', { create: () => ({ write () {}, end () { throw new DocsplitError('DOCSPLIT_INTERNAL', 'broke', { part: 'line 3: secret text' }) } }) }),
  definePlugin({ kind: 'packer', name: 'no-handler-test', docsplit: '^1', create: () => undefined as never }),
  throwingTokenizer,
  definePlugin({ kind: 'tokenizer', name: 'missing-package-test', docsplit: '^1', extra: 'my-bpe-package', available: () => false, load: () => { throw new Error('never called') } }),
  definePlugin({ kind: 'tokenizer', name: 'missing-module-test', docsplit: '^1', load: async () => await import('docsplit-no-such-package-test' as string) as never }),
  // its extra is installed; a module it imports is not
  definePlugin({ kind: 'tokenizer', name: 'wrong-module-test', docsplit: '^1', extra: 'tap', load: async () => await import('docsplit-typo-of-a-package/sub.js' as string) as never }),
  oneRecord('no-end-test', { create: () => ({ write () {} }) as never }),
  oneRecord('bad-code-test', { create: (ctx) => ({ write () {}, end () { ctx.fail('NOT_A_CODE' as never, 'x') } }) }),
  oneRecord('rate-limited-test', { create: (ctx) => ({ write () {}, end () { ctx.fail('DOCSPLIT_RATE_LIMITED' as never, 'slow down') } }) }),
  oneRecord('throws-timeout-test', { create: () => ({ write () {}, end () { throw new DocsplitError('DOCSPLIT_TIMEOUT', 'took too long') } }) }),
  oneRecord('throws-parse-error-test', { create: () => ({ write () {}, end () { throw new DocsplitError('DOCSPLIT_PARSE_ERROR', 'bad line 3') } }) }),
  onePacker('throws-rate-limited-test', () => { throw new DocsplitError('DOCSPLIT_RATE_LIMITED', 'slow down') }),
  oneRecord('verify-failed-test', { create: (ctx) => ({ write () {}, end () { ctx.fail('DOCSPLIT_VERIFY_FAILED' as never, 'x') } }) }),
  oneRecord('limit-test', { create: (ctx) => ({ write () {}, end () { ctx.fail('DOCSPLIT_LIMIT_EXCEEDED', 'too deep') } }) }),
  oneRecord('nan-detect-test', { detect: () => Number.NaN }),
  oneRecord('string-detect-test', { detect: () => '0.99' as never }),
  blankLines,
  onePacker('upper-packer-test', (d) => { d.text = d.text.toUpperCase() }),
  oneRecord('upper-test', {}, (x) => x.toUpperCase()),
  oneRecord('short-text-test', {}, (x) => x.slice(1)),
  oneRecord('async-end-test', {
    create (ctx) {
      let text = ''
      return {
        write (piece: string) { text += piece },
        async end () { ctx.emit({ type: 'record', start: 0, end: text.length, text }) },
      }
    },
  } as Partial<ParserPlugin>),
  oneRecord('async-write-test', {
    create (ctx) {
      let text = ''
      return {
        async write (piece: string) { text += piece; throw new Error('async write threw') },
        end () { ctx.emit({ type: 'record', start: 0, end: text.length, text }) },
      }
    },
  } as Partial<ParserPlugin>),
  oneRecord('async-end-throws-test', {
    create () {
      return { write () {}, async end () { throw new Error('async end threw') } }
    },
  } as Partial<ParserPlugin>),
  oneRecord('null-event-test', { create: (ctx) => ({ write () {}, end () { ctx.emit(null as never) } }) }),
  oneRecord('string-start-test', { create: (ctx) => ({ write () {}, end () { ctx.emit({ type: 'record', start: '0', end: 1, text: 'x' } as never) } }) }),
  oneRecord('null-label-test', { create: (ctx) => ({ write () {}, end () { ctx.emit({ type: 'enter', kind: 'section', label: null, start: 0 } as never) } }) }),
  oneRecord('unknown-event-test', { create: (ctx) => ({ write () {}, end () { ctx.emit({ type: 'paragraph', start: 0 } as never) } }) }),
  oneRecord('open-container-test', {
    create (ctx) {
      let text = ''
      return {
        write (piece: string) { text += piece },
        end () {
          ctx.emit({ type: 'enter', kind: 'section', label: 'a', start: 0 })
          ctx.emit({ type: 'record', start: 0, end: text.length, text })
        },
      }
    },
  } as Partial<ParserPlugin>),
  definePlugin({ kind: 'tokenizer', name: 'negative-test', docsplit: '^1', load: () => ({ name: 'negative-test', count: () => -1 }) }),
  definePlugin({ kind: 'tokenizer', name: 'string-count-test', docsplit: '^1', load: () => ({ name: 'string-count-test', count: () => '39' as never }) }),
  definePlugin({ kind: 'tokenizer', name: 'async-count-test', docsplit: '^1', load: () => ({ name: 'async-count-test', count: async (s: string) => s.length }) as never }),
  definePlugin({ kind: 'tokenizer', name: 'fraction-test', docsplit: '^1', load: () => ({ name: 'fraction-test', count: (s: string) => s.length / 3 }) }),
  definePlugin({ kind: 'tokenizer', name: 'nameless-test', docsplit: '^1', load: () => ({ count: (s: string) => s.length }) as never }),
  definePlugin({ kind: 'tokenizer', name: 'countless-test', docsplit: '^1', load: () => ({ name: 'countless-test' }) as never }),
  oneEvent('cut-sentences-test', { cut: 'sentences' }),
  oneEvent('attach-string-test', { attachNext: 'yes' }),
  oneEvent('context-number-test', { context: 5 }),
  oneEvent('refs-string-test', { refs: 'intro' }),
  oneEvent('refs-outside-test', { refs: [{ label: 'intro', offset: 1000 }] }),
  oneEvent('tokens-test', { tokens: 3 }),
  oneEvent('record-fields-test', { type: 'record', fields: { index: 3 } }, 'record'),
  oneEvent('record-context-test', { type: 'record', context: ['a', 'b'] }, 'record'),
  oneEvent('record-fields-ok-test', { type: 'record', fields: { sheet: 'People', row_start: 1 } }, 'record'),
  oneEvent('info-scope-test', { type: 'info', key: 'x', value: 1, scope: 'chunk' }),
  oneEvent('info-metadata-test', { type: 'info', key: 'max_tokens', value: 1, scope: 'metadata' }),
  oneEvent('definition-url-test', { type: 'definition', label: 'a', url: 5 }),
  definePlugin({ kind: 'tokenizer', name: 'failing-load-test', docsplit: '^1', load: () => { throw new Error('no tables') } }),
])

async function refusal (t: Test, run: Promise<unknown>, code: string, message: RegExp): Promise<void> {
  const error = await run.then(() => undefined, (e: unknown) => e)
  t.ok(error instanceof DocsplitError, 'a DocsplitError')
  t.equal((error as DocsplitError).code, code)
  t.match((error as DocsplitError).message, message)
}

const TEXT = 'Line one\nline two\n'

t.test('an event or a chunk whose text is not the source text is refused, naming the parser or the splitter', async (t) => {
  await refusal(t, split(TEXT, { input_format: 'upper-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^parser "upper-test" emitted a record at 0\.\.18 whose text is not the source text there$/)
  await refusal(t, split(TEXT, { input_format: 'upper-test', splitter: 'sibling' }), 'DOCSPLIT_PLUGIN_CONTRACT', /parser "upper-test"/)
  // Same lengths, other letters, several records to a chunk: the chunk's text would be the
  // source (packers take it from there) and its count that of the parser's texts.
  for (const splitter of ['record', 'sibling']) {
    for (const tokenizer of ['approx', 'o200k_base']) {
      await refusal(t, split('line one here\nline two here\nline three\n', { input_format: 'blank-lines-test', splitter, tokenizer, max_tokens: 8 }), 'DOCSPLIT_PLUGIN_CONTRACT', /^parser "blank-lines-test" emitted a record at 0\.\.14 whose text is not the source text there$/)
    }
  }
  await refusal(t, split(TEXT, { input_format: 'text', splitter: 'upper-packer-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /not the source text there: parser "text" or splitter "upper-packer-test"/)
})

t.test('a token count must be a whole number of at least 0: the tokenizer\'s fault when its own count is not one', async (t) => {
  await refusal(t, split(TEXT, { input_format: 'text', tokenizer: 'negative-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^tokenizer "negative-test" returned -1 from count\(\) for a chunk's text \(splitter "sibling"\); a count is a whole number of at least 0$/)
  await refusal(t, split(TEXT + '!', { input_format: 'text', tokenizer: 'fraction-test', max_tokens: 100 }), 'DOCSPLIT_PLUGIN_CONTRACT', /^tokenizer "fraction-test" returned 6\.333\d* from count\(\) for a chunk's text/)
  await refusal(t, split(TEXT, { input_format: 'text', tokenizer: 'string-count-test', max_tokens: 100 }), 'DOCSPLIT_PLUGIN_CONTRACT', /^tokenizer "string-count-test" returned the string "39" from count\(\) for a chunk's text/)
  await refusal(t, split(TEXT, { input_format: 'text', tokenizer: 'async-count-test', max_tokens: 100 }), 'DOCSPLIT_PLUGIN_CONTRACT', /^tokenizer "async-count-test" returned a promise from count\(\): count must be synchronous \(load\(\) may be async\)$/)
})

t.test('a splitter\'s count that is not one is the splitter\'s fault when the tokenizer counts the text right', async (t) => {
  for (const tokenizer of ['approx', 'o200k_base']) {
    const count = (await split(TEXT, { input_format: 'text', tokenizer, max_tokens: 100 })).chunks[0]!.token_count
    await refusal(t, split(TEXT, { input_format: 'text', splitter: 'half-count-test', tokenizer, max_tokens: 100 }), 'DOCSPLIT_PLUGIN_CONTRACT',
      new RegExp(`^splitter "half-count-test" emitted a chunk at 0 with tokenCount ${count}\\.5, where tokenizer "${tokenizer}" counts ${count}; a count is a whole number of at least 0$`))
  }
  await refusal(t, split(TEXT, { input_format: 'text', splitter: 'negative-count-test', max_tokens: 100 }), 'DOCSPLIT_PLUGIN_CONTRACT', /^splitter "negative-count-test" emitted a chunk at 0 with tokenCount -3, where tokenizer "approx" counts \d+/)
  await refusal(t, split(TEXT, { input_format: 'text', splitter: 'string-count-packer-test', max_tokens: 100 }), 'DOCSPLIT_PLUGIN_CONTRACT', /^splitter "string-count-packer-test" emitted a chunk at 0 with tokenCount the string "\d+", where tokenizer "approx" counts \d+/)
})

t.test('an empty chunk is said to be empty', async (t) => {
  await refusal(t, split(TEXT, { input_format: 'text', splitter: 'empty-draft-test', max_tokens: 100 }), 'DOCSPLIT_PLUGIN_CONTRACT', /^splitter "empty-draft-test" emitted an empty chunk at 0; a chunk holds at least one character$/)
})

t.test('a tokenizer without a name is reported by its plugin name; one without count() or whose load throws is named', async (t) => {
  const r = await split(TEXT, { input_format: 'text', tokenizer: 'nameless-test', max_tokens: 100 })
  t.equal(r.metadata.tokenizer, 'nameless-test')
  await refusal(t, split(TEXT, { input_format: 'text', tokenizer: 'countless-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /tokenizer "countless-test": load\(\) must return an object with count/)
  await refusal(t, split(TEXT, { input_format: 'text', tokenizer: 'failing-load-test' }), 'DOCSPLIT_INTERNAL', /failing-load-test tokenizer failed/)
})

t.test('a parser that ends with a promise or leaves a container open is named', async (t) => {
  await refusal(t, split(TEXT, { input_format: 'async-end-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /parser "async-end-test": end\(\) must finish/)
  // A promise that rejects is refused the same, and its rejection is not left unhandled (it would end the process).
  const unhandled: unknown[] = []
  const onUnhandled = (reason: unknown): void => { unhandled.push(reason) }
  process.on('unhandledRejection', onUnhandled)
  await refusal(t, split(TEXT, { input_format: 'async-write-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^parser "async-write-test": write\(\) must finish before it returns, not return a promise$/)
  await refusal(t, split(TEXT, { input_format: 'async-end-throws-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /parser "async-end-throws-test": end\(\) must finish/)
  await new Promise((resolve) => setTimeout(resolve, 20))
  process.off('unhandledRejection', onUnhandled)
  t.same(unhandled, [], 'no unhandled rejection')
  await refusal(t, split(TEXT, { input_format: 'null-event-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^parser "null-event-test" emitted null, not an event$/)
  await refusal(t, split(TEXT, { input_format: 'string-start-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^parser "string-start-test" emitted a record whose start or end is not a number$/)
  await refusal(t, split(TEXT, { input_format: 'null-label-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^parser "null-label-test" emitted an enter whose label is not a string$/)
  await refusal(t, split(TEXT, { input_format: 'unknown-event-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^parser "unknown-event-test" emitted an event of an unknown type/)
  await refusal(t, split(TEXT, { input_format: 'open-container-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /parser "open-container-test" left 1 container open/)
})

t.test('the source check holds across input pieces and chunk boundaries', async (t) => {
  // Bytes in one-byte pieces: every chunk spans several source pieces.
  const text = 'alpha beta gamma delta\n'.repeat(200)
  const pieces = (function * () { for (const b of Buffer.from(text)) yield new Uint8Array([b]) })()
  const r = await split(pieces, { input_format: 'text', max_tokens: 16 })
  t.ok(r.chunks.length > 10)
  t.equal(r.chunks.map((c) => c.text).join(''), text)
})

t.test('event and registration errors say what is wrong', async (t) => {
  await refusal(t, split(TEXT, { input_format: 'short-text-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /parser "short-text-test" emitted a record at 0\.\.18 whose text has 17 characters; end must be start \+ text\.length/)
  t.throws(() => validatePlugin({ hello: 'world' } as never), { code: 'DOCSPLIT_PLUGIN_LOAD_FAILED', message: /^not a plugin/ })
  // The registry froze at the first split above.
  t.throws(() => register(oneRecord('late-test')), { code: 'DOCSPLIT_REGISTRY_FROZEN', message: /^"late-test": plugins cannot be registered after the first split/ })
})

t.test('a chunk draft of the wrong shape is refused, naming the splitter', async (t) => {
  const run = (splitter: string): Promise<unknown> => split(TEXT, { input_format: 'text', splitter, max_tokens: 100 })
  await refusal(t, run('fields-test'), 'DOCSPLIT_PLUGIN_CONTRACT', /^splitter "fields-test" emitted a chunk at 0 with a record field "text", which is a chunk field core sets$/)
  await refusal(t, run('path-test'), 'DOCSPLIT_PLUGIN_CONTRACT', /splitter "path-test" .* a path that is not a list of strings/)
  await refusal(t, run('boundary-test'), 'DOCSPLIT_PLUGIN_CONTRACT', /splitter "boundary-test" .* boundary "whatever", not one of section, block/)
  await refusal(t, run('protected-small-test'), 'DOCSPLIT_PLUGIN_CONTRACT', /protected set on a chunk of 1 record and \d+ tokens: protected is only for a single record over the budget \(100\)/)
  await refusal(t, run('protected-many-test'), 'DOCSPLIT_PLUGIN_CONTRACT', /protected set on a chunk of 2 records/)
  await refusal(t, run('refs-draft-test'), 'DOCSPLIT_PLUGIN_CONTRACT', /^splitter "refs-draft-test" emitted a chunk at 0 with refs that are not a list of strings/)
  await refusal(t, run('overlap-starts-test'), 'DOCSPLIT_PLUGIN_CONTRACT', /^splitter "overlap-starts-test" emitted a chunk at 0 with overlapStarts that are not a list of whole numbers/)
  await refusal(t, run('overlap-avoid-test'), 'DOCSPLIT_PLUGIN_CONTRACT', /^splitter "overlap-avoid-test" emitted a chunk at 0 with overlapAvoid that is not a list of \[start, end\] pairs of offsets/)
  await refusal(t, run('no-handler-test'), 'DOCSPLIT_PLUGIN_CONTRACT', /^splitter "no-handler-test": create\(\) must return a handler with push\(event\) and end\(\)$/)
})

t.test('a plugin\'s exception is the cause of the DOCSPLIT_INTERNAL that names it (README, Library)', async (t) => {
  const error = await split(TEXT, { input_format: 'text', splitter: 'throwing-packer-test' }).then(() => undefined, (e: unknown) => e)
  t.equal((error as DocsplitError).code, 'DOCSPLIT_INTERNAL')
  t.match((error as DocsplitError).cause, { name: 'Error', message: 'packer broke' })
})

t.test('records\' fields and numbering come with the record splitter; sibling leaves them out, context stays (README, Output)', async (t) => {
  const byRecord = (await split(TEXT, { input_format: 'record-fields-ok-test', max_tokens: 100 })).chunks[0]!
  t.match(byRecord, { sheet: 'People', row_start: 1, record_start: 0, record_count: 1 })
  const bySibling = (await split(TEXT, { input_format: 'record-fields-ok-test', splitter: 'sibling', max_tokens: 100 })).chunks[0]!
  for (const field of ['sheet', 'row_start', 'record_start', 'record_count']) t.notOk(field in bySibling, `no ${field} under sibling`)
  const csv = await split('a,b\n1,2\n', { input_format: 'csv', splitter: 'sibling', max_tokens: 100 })
  t.equal(csv.chunks[0]!.context, 'a,b', 'a CSV header still travels as context')
})

t.test('a failure is named after the plugin it happened in', async (t) => {
  await refusal(t, split(TEXT, { input_format: 'text', splitter: 'throwing-packer-test' }), 'DOCSPLIT_INTERNAL', /^the throwing-packer-test splitter \(counting with the approx tokenizer\) failed unexpectedly$/)
  await refusal(t, split(TEXT, { input_format: 'csv', tokenizer: 'throwing-count-test' }), 'DOCSPLIT_INTERNAL', /^the record splitter \(counting with the throwing-count-test tokenizer\) failed unexpectedly$/)
  await refusal(t, split(TEXT, { input_format: 'no-end-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^parser "no-end-test": create\(\) must return a handler with write\(piece\) and end\(\)$/)
  await refusal(t, split(TEXT, { input_format: 'bad-code-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^parser "bad-code-test" failed with a string that is not a docsplit error code; ctx\.fail takes DOCSPLIT_PARSE_ERROR, DOCSPLIT_LIMIT_EXCEEDED, .*DOCSPLIT_EXTRA_UNAVAILABLE$/)
  t.equal(new DocsplitError('NOT_A_CODE' as never, 'x').code, 'DOCSPLIT_INTERNAL', 'an unknown code does not crash the error class')
})

t.test('an internal error names the part that failed, as the engine knows it (the service logs it)', async (t) => {
  const part = async (options: Record<string, unknown>): Promise<string | undefined> => (await split(TEXT, options).then(() => undefined, (e: unknown) => e) as DocsplitError).part
  t.equal(await part({ input_format: 'text', splitter: 'throwing-create-test' }), 'throwing-create-test splitter', 'a splitter whose create() throws, not "engine"')
  t.equal(await part({ input_format: 'text', splitter: 'throwing-packer-test' }), 'throwing-packer-test splitter (counting with the approx tokenizer)')
  t.equal(await part({ input_format: 'own-internal-test' }), 'own-internal-test parser', 'what a plugin put in part itself (it might be document text) is replaced')
})

t.test('a tokenizer whose package is missing is DOCSPLIT_TOKENIZER_UNAVAILABLE, naming the package', async (t) => {
  await refusal(t, split(TEXT, { input_format: 'text', tokenizer: 'missing-package-test' }), 'DOCSPLIT_TOKENIZER_UNAVAILABLE', /^tokenizer "missing-package-test" needs the package my-bpe-package: npm install my-bpe-package$/)
  await refusal(t, split(TEXT, { input_format: 'text', tokenizer: 'missing-module-test' }), 'DOCSPLIT_TOKENIZER_UNAVAILABLE', /^tokenizer "missing-module-test" could not load the package "docsplit-no-such-package-test" that it imports$/)
  await refusal(t, split(TEXT, { input_format: 'text', tokenizer: 'wrong-module-test' }), 'DOCSPLIT_TOKENIZER_UNAVAILABLE', /^tokenizer "wrong-module-test" could not load the package "docsplit-typo-of-a-package" that it imports; it needs the package tap: npm install tap$/)
})

t.test('a detect() score that is not a number from 0 to 1 cannot take auto detection', async (t) => {
  const r = await split('# Title\n\nSome text with a [link](http://example.com).\n\n## Part\n\n- a\n- b\n', {})
  t.equal(r.document.input_format, 'markdown', 'NaN and a string score count as 0')
})

t.test('an optional field of an event of the wrong type or value is refused, naming the parser, before a splitter reads it', async (t) => {
  // A long paragraph, so that sibling has to cut it by its `cut`.
  const long = 'One sentence here. Another one follows it. '.repeat(20)
  for (const splitter of ['sibling', 'record']) {
    await refusal(t, split(long, { input_format: 'cut-sentences-test', splitter, max_tokens: 16 }), 'DOCSPLIT_PLUGIN_CONTRACT',
      /^parser "cut-sentences-test" emitted a block at 0 with cut "sentences"; a cut is "prose" or "lines" \(or left out: prose\)$/)
  }
  const cases: Array<[string, RegExp]> = [
    ['attach-string-test', /^parser "attach-string-test" emitted a block at 0 with attachNext "yes", not true or false$/],
    ['context-number-test', /^parser "context-number-test" emitted a block at 0 with a context that is 5, not a string$/],
    ['refs-string-test', /^parser "refs-string-test" emitted a block at 0 with refs that are "intro", not a list of \{ label, offset \}$/],
    ['refs-outside-test', /^parser "refs-outside-test" emitted a block at 0 with a ref that is not \{ label, offset \} with a string label and an offset inside the block$/],
    ['tokens-test', /^parser "tokens-test" emitted a block at 0 with tokens, which only the engine sets/],
    ['record-fields-test', /^parser "record-fields-test" emitted a record at 0 with a field "index", which is a chunk field core sets$/],
    ['record-context-test', /^parser "record-context-test" emitted a record at 0 with a context that is a list, not a string$/],
    ['info-scope-test', /^parser "info-scope-test" emitted an info event with scope "chunk"; a scope is "document" or "metadata"$/],
    ['info-metadata-test', /^parser "info-metadata-test" emitted an info event with metadata "max_tokens", which core sets$/],
    ['definition-url-test', /^parser "definition-url-test" emitted a definition with a label or url that is not a string$/],
  ]
  for (const [format, message] of cases) await refusal(t, split(TEXT, { input_format: format, max_tokens: 100 }), 'DOCSPLIT_PLUGIN_CONTRACT', message)
})

t.test('a chunk after one whose boundary is "end" is refused, naming the splitter', async (t) => {
  await refusal(t, split('alpha line one\n\nbeta line two\n', { input_format: 'text', splitter: 'end-every-chunk-test' }), 'DOCSPLIT_PLUGIN_CONTRACT',
    /^splitter "end-every-chunk-test" emitted a chunk at 16 after one whose boundary is "end"; only the last chunk of the document ends there$/)
  const one = await split('alpha line one\n', { input_format: 'text', splitter: 'end-every-chunk-test' })
  t.equal(one.chunks.length, 1, 'a single chunk may end the document')
})

t.test('ctx.fail takes only the codes a parser may give: a service or engine code is the parser\'s contract error', async (t) => {
  await refusal(t, split(TEXT, { input_format: 'rate-limited-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^parser "rate-limited-test" failed with DOCSPLIT_RATE_LIMITED; ctx\.fail takes DOCSPLIT_PARSE_ERROR, DOCSPLIT_LIMIT_EXCEEDED, DOCSPLIT_INVALID_UTF8, DOCSPLIT_UNSUPPORTED_ENCODING, DOCSPLIT_INVALID_OPTION, DOCSPLIT_UNSUPPORTED_FORMAT, DOCSPLIT_EXTRA_UNAVAILABLE$/)
  await refusal(t, split(TEXT, { input_format: 'verify-failed-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^parser "verify-failed-test" failed with DOCSPLIT_VERIFY_FAILED; /)
  await refusal(t, split(TEXT, { input_format: 'limit-test' }), 'DOCSPLIT_LIMIT_EXCEEDED', /^too deep$/)
})

t.test('a DocsplitError a plugin throws itself keeps its code only if ctx.fail could give it', async (t) => {
  await refusal(t, split(TEXT, { input_format: 'throws-timeout-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^the throws-timeout-test parser threw DOCSPLIT_TIMEOUT, which is not a plugin's to give; a parser fails with ctx\.fail\(DOCSPLIT_PARSE_ERROR, /)
  await refusal(t, split(TEXT, { input_format: 'text', splitter: 'throws-rate-limited-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /^the throws-rate-limited-test splitter \(counting with the approx tokenizer\) threw DOCSPLIT_RATE_LIMITED/)
  await refusal(t, split(TEXT, { input_format: 'throws-parse-error-test' }), 'DOCSPLIT_PARSE_ERROR', /^bad line 3$/)
})
