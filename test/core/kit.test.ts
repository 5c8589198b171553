/**
 * The conformance kit (docsplit/testing) as a plugin author meets it: a broken plugin fails
 * with the sample and the rule, and a record-style splitter of one's own may mark a single
 * record over budget `protected`, as `record` does.
 */
import t from 'tap'
import fc from 'fast-check'
import { checkPacker, checkParser, checkTokenizer, invariantProblems, parserEvents } from '../../testing.js'
import { tokenizerByName } from '../../core/registry.js'
import { Type } from 'typebox'
import { definePlugin, register, split, type ChunkDraft, type PackerPlugin, type ParserPlugin } from '../../index.js'

function lineParser (name: string, handler: (emit: (text: string, at: number) => void) => { write: (piece: string) => void, end: () => unknown }): ParserPlugin {
  return definePlugin({
    kind: 'parser', name, docsplit: '^1', formats: [name], extensions: [], reads: 'text', defaultSplitter: 'record',
    create: (ctx) => handler((text, at) => { ctx.emit({ type: 'record', start: at, end: at + text.length, text }) }),
  } as ParserPlugin)
}

const asyncEnd = lineParser('kit-async-end-test', (emit) => {
  let text = ''
  return { write: (piece) => { text += piece }, end: async () => { emit(text, 0) } }
})
const asyncWrite = lineParser('kit-async-write-test', (emit) => {
  let text = ''
  return { write: async (piece) => { text += piece }, end: () => { emit(text, 0) } } as never
})
/** Emits an event type the contract does not have. */
const oddEvent = definePlugin({
  kind: 'parser', name: 'kit-odd-event-test', docsplit: '^1', formats: ['kit-odd-event-test'], extensions: [], reads: 'text', defaultSplitter: 'record',
  create: (ctx) => {
    let text = ''
    return { write: (piece: string) => { text += piece }, end: () => { ctx.emit({ type: 'paragraph', start: 0, end: text.length, text } as never) } }
  },
} as ParserPlugin)
const throwing = lineParser('kit-throwing-test', () => ({ write: () => { throw new TypeError('cannot read x of undefined') }, end: () => {} }))
/** Fails on anything but its sample, quoting the input in its message. */
const leaky = definePlugin({
  kind: 'parser', name: 'kit-leaky-test', docsplit: '^1', formats: ['kit-leaky-test'], extensions: [], reads: 'text', defaultSplitter: 'record',
  create: (ctx) => {
    let text = ''
    return {
      write: (piece: string) => { text += piece },
      end: () => {
        if (text !== 'alpha\n') ctx.fail('DOCSPLIT_PARSE_ERROR', `bad token near ${text.slice(0, 40)}`)
        ctx.emit({ type: 'record', start: 0, end: text.length, text })
      },
    }
  },
} as ParserPlugin)
/** A parser that fails on what `bad` finds, quoting the input as `quote` writes it. */
function quotingParser (name: string, bad: (text: string) => boolean, quote: (text: string) => string): ParserPlugin {
  return definePlugin({
    kind: 'parser', name, docsplit: '^1', formats: [name], extensions: [], reads: 'text', defaultSplitter: 'record',
    create: (ctx) => {
      let text = ''
      return {
        write: (piece: string) => { text += piece },
        end: () => {
          if (bad(text)) ctx.fail('DOCSPLIT_PARSE_ERROR', quote(text))
          ctx.emit({ type: 'record', start: 0, end: text.length, text })
        },
      }
    },
  } as ParserPlugin)
}
/** Quotes a line with control characters as JSON.stringify writes it. */
const leaksEscaped = quotingParser('kit-leaks-escaped-test', (text) => /[\u0000-\u0008\u000e-\u001f]/.test(text), (text) => `cannot parse line ${JSON.stringify(text)}`)
/** Quotes the start of a line too long for it (the kit's own 1 MB line). */
const leaksLongLine = quotingParser('kit-leaks-long-line-test', (text) => text.length > 1000, (text) => `line too long: ${text.slice(0, 40)}`)
/** Right on its sample, wrong on anything else: the kit's own inputs must catch it. */
const sampleOnly = lineParser('kit-sample-only-test', (emit) => {
  let text = ''
  return { write: (piece) => { text += piece }, end: () => { if (text !== 'alpha\n') throw new TypeError('parser bug'); emit(text, 0) } }
})
const dropsTail = lineParser('kit-drops-tail-test', (emit) => {
  let text = ''
  return { write: (piece) => { text += piece }, end: () => { const keep = text.slice(0, text.lastIndexOf('\n') + 1); if (keep !== '') emit(keep, 0) } }
})

/** Each record alone in its chunk: `protected` when the record alone is over budget. */
const eachRecord: PackerPlugin = definePlugin({
  kind: 'packer',
  name: 'kit-each-record-test',
  docsplit: '^1',
  create (ctx) {
    let index = 0
    return {
      push (event) {
        if (event.type !== 'record' && event.type !== 'block') return
        const tokenCount = ctx.meter.count(event.text)
        const draft: ChunkDraft = { start: event.start, end: event.end, text: event.text, tokenCount, path: [], kinds: [event.kind ?? event.type], boundary: 'record', recordStart: index++, recordCount: 1 }
        if (tokenCount > ctx.budget) draft.protected = true
        ctx.emit(draft)
      },
      end () {},
    }
  },
})

/** One block per line, with a `cut` the docs do not allow. */
const badCut = definePlugin({
  kind: 'parser', name: 'kit-bad-cut-test', docsplit: '^1', formats: ['kit-bad-cut-test'], extensions: [], reads: 'text', defaultSplitter: 'sibling',
  create: (ctx) => {
    let text = ''
    return {
      write: (piece: string) => { text += piece },
      end: () => { if (text !== '') ctx.emit({ type: 'block', kind: 'paragraph', start: 0, end: text.length, text, cut: 'sentences' as never }) },
    }
  },
} as ParserPlugin)

/** eachRecord, with a count half a token off. */
const halfCount: PackerPlugin = { ...eachRecord, name: 'kit-half-count-test', create: (ctx) => eachRecord.create({ ...ctx, emit: (d) => { ctx.emit({ ...d, tokenCount: d.tokenCount + 0.5 }) } }) }

/** eachRecord, saying every chunk ends the document. */
const endsEach: PackerPlugin = { ...eachRecord, name: 'kit-ends-each-test', create: (ctx) => eachRecord.create({ ...ctx, emit: (d) => { ctx.emit({ ...d, boundary: 'end' }) } }) }

const defaultsSeen: unknown[] = []
/** Relies on its declared defaults, as the engine fills them. */
const withDefaults = definePlugin({
  kind: 'parser', name: 'kit-defaults-test', docsplit: '^1', formats: ['kit-defaults-test'], extensions: [], reads: 'text', defaultSplitter: 'record',
  options: Type.Object({
    kd_unit: Type.Optional(Type.String({ enum: ['line', 'word'], default: 'line' })),
    kd_strict: Type.Optional(Type.Boolean()),
    kd_width: Type.Optional(Type.Integer({ minimum: 1, default: 80 })),
  }),
  create (ctx) {
    defaultsSeen.push({ unit: ctx.options.kd_unit, strict: ctx.options.kd_strict, width: ctx.options.kd_width })
    if (ctx.options.kd_unit === undefined) throw new TypeError('kd_unit is undefined')
    let text = ''
    return { write: (piece: string) => { text += piece }, end: () => { if (text !== '') ctx.emit({ type: 'record', start: 0, end: text.length, text }) } }
  },
})

register(asyncEnd, asyncWrite, oddEvent, throwing, sampleOnly, dropsTail, leaky, leaksEscaped, leaksLongLine, eachRecord, badCut, halfCount, endsEach, withDefaults)

t.test('a broken parser fails the kit with the sample and what is wrong', async (t) => {
  await t.rejects(checkParser(asyncEnd, [{ name: 'one line', input: 'a line\n' }]), { message: /parser "kit-async-end-test".*one line.*end\(\) must finish before it returns/s })
  await t.rejects(checkParser(asyncWrite, [{ name: 'one line', input: 'a line\n' }]), { message: /parser "kit-async-write-test".*one line.*write\(\) must finish before it returns, not return a promise/s }, 'an async write, as the engine says it')
  await t.rejects(checkParser(oddEvent, [{ name: 'one line', input: 'a line\n' }]), { message: /parser "kit-odd-event-test": one line: an event of an unknown type; the types are enter, exit, block, record, definition and info/ }, 'an unknown event type, as the engine says it')
  await t.rejects(checkParser(throwing, [{ name: 'one line', input: 'a line\n' }]), { message: /parser "kit-throwing-test".*one line.*threw TypeError: cannot read x of undefined; only a DocsplitError about the input may leave a plugin/s })
})

t.test('an event field of the wrong value fails the kit, as it fails the engine', async (t) => {
  await t.rejects(checkParser(badCut, [{ name: 'one line', input: 'a line\n' }]), { message: /^parser "kit-bad-cut-test": one line: block at 0 with cut "sentences"; a cut is "prose" or "lines"/ })
})

t.test('a parser right on its samples only fails on the kit\'s own inputs: split() wraps its faults, the kit does not pass them', async (t) => {
  await t.rejects(checkParser(sampleOnly, [{ name: 'sample', input: 'alpha\n' }]), { message: /parser "kit-sample-only-test": .*threw TypeError: parser bug; only a DocsplitError about the input may leave a plugin/s })
  await t.rejects(checkParser(leaky, [{ name: 'sample', input: 'alpha\n' }], { arbitrary: fc.constant('The quarterly revenue figures are confidential.') }),
    { message: /parser "kit-leaky-test": a 1 MB line: its DOCSPLIT_PARSE_ERROR message quotes the input; messages never contain document text/s })
  await t.rejects(checkParser(leaksEscaped, [{ name: 'sample', input: 'alpha\n' }], { arbitrary: fc.constant('The\u0001quarterly\u0001revenue\u0001figures\u0001are\u0001confidential.') }),
    { message: /parser "kit-leaks-escaped-test": generated input .*its DOCSPLIT_PARSE_ERROR message quotes the input/s }, 'quoted as JSON.stringify writes it')
  await t.rejects(checkParser(leaksLongLine, [{ name: 'sample', input: 'alpha\n' }]),
    { message: /parser "kit-leaks-long-line-test": a 1 MB line: its DOCSPLIT_PARSE_ERROR message quotes the input/s }, 'the start of the kit\'s long line quoted')
  await t.rejects(checkParser(dropsTail, [{ name: 'sample', input: 'alpha\n' }]), { message: /parser "kit-drops-tail-test": .*broke the contract: parser "kit-drops-tail-test" covered 0 of/s })
})

t.test('a splitter of its own may protect a single record over budget', async (t) => {
  const rows = 'id,text\n' + Array.from({ length: 20 }, (_, i) => `${i},${'word '.repeat(i * 7)}`).join('\n') + '\n'
  await checkPacker(eachRecord, [{ name: 'rows', input: rows, options: { input_format: 'csv' } }], { budgets: [8, 64] })
  t.pass('passed the kit')
})

t.test('after the first split, an unregistered plugin is refused with the way out', async (t) => {
  const late = lineParser('kit-late-test', () => ({ write: () => {}, end: () => {} }))
  await t.rejects(checkParser(late, [{ name: 'x', input: 'x' }]), { code: 'DOCSPLIT_REGISTRY_FROZEN', message: /register every plugin a test file checks before the first check/ })
})

t.test('a count that is not a whole number: the kit names the splitter whose draft has it, or the tokenizer that returned it', async (t) => {
  await t.rejects(checkPacker(halfCount, [{ name: 'rows', input: 'id,text\n1,a\n', options: { input_format: 'csv' } }], { budgets: [64] }),
    { message: /^packer "kit-half-count-test": rows \(max_tokens \d+, overlap \d+\): broke the contract: splitter "kit-half-count-test" emitted a chunk at 0 with tokenCount \d+\.5, where tokenizer "approx" counts \d+/ })
  const asyncCount = definePlugin({ kind: 'tokenizer', name: 'kit-async-count-test', docsplit: '^1', load: () => ({ name: 'kit-async-count-test', count: async (s: string) => s.length }) as never })
  await t.rejects(checkTokenizer(asyncCount), { message: /^tokenizer "kit-async-count-test": empty string: count returned a promise: count must be synchronous/ })
})

t.test('a chunk that says "end" before the last fails the kit', async (t) => {
  await t.rejects(checkPacker(endsEach, [{ name: 'rows', input: 'id,text\n1,a\n2,b\n', options: { input_format: 'csv' } }], { budgets: [8] }),
    { message: /^packer "kit-ends-each-test": rows \(max_tokens \d+, overlap \d+\): broke the contract: splitter "kit-ends-each-test" emitted a chunk at \d+ after one whose boundary is "end"/ })
})

t.test('the kit\'s check of a response finds an "end" before the last chunk', async (t) => {
  const text = 'id,text\n1,a\n2,b\n'
  const r = await split(text, { input_format: 'csv', max_tokens: 8 })
  t.ok(r.chunks.length > 1)
  const tokenizer = await tokenizerByName('approx').load()
  t.same(invariantProblems(r, text, { tokenizer }), [])
  r.chunks[0]!.boundary = 'end'
  t.same(invariantProblems(r, text, { tokenizer }), ['chunk 0: boundary "end", but chunks follow it (only the last chunk of the document ends there)'])
})

t.test('the kit refuses a ctx.fail code that is not a parser\'s, as the engine does', async (t) => {
  const limited = definePlugin({
    kind: 'parser', name: 'kit-rate-limited-test', docsplit: '^1', formats: ['kit-rate-limited-test'], extensions: [], reads: 'text', defaultSplitter: 'record',
    create: (ctx) => ({ write: () => { ctx.fail('DOCSPLIT_RATE_LIMITED' as never, 'slow down') }, end: () => {} }),
  } as ParserPlugin)
  await t.rejects(parserEvents(limited, 'a line\n'), { code: 'DOCSPLIT_PLUGIN_CONTRACT', message: /^parser "kit-rate-limited-test" failed with DOCSPLIT_RATE_LIMITED; ctx\.fail takes / })
})

t.test('the kit gives a parser its own options as the engine does: defaults filled, strings coerced, a wrong value refused', async (t) => {
  const events = await parserEvents(withDefaults, 'one line\n')
  t.equal(events.length, 1)
  await parserEvents(withDefaults, 'x\n', { kd_strict: 'true', kd_width: '12' })
  await parserEvents(withDefaults, 'x\n', { kd_unit: null, kd_strict: null })
  t.same(defaultsSeen.slice(0, 3), [{ unit: 'line', strict: undefined, width: 80 }, { unit: 'line', strict: true, width: 12 }, { unit: 'line', strict: undefined, width: 80 }], 'defaults, strings read as a form field is, null as not given')
  await t.rejects(parserEvents(withDefaults, 'x\n', { kd_unit: 'page' }), { code: 'DOCSPLIT_INVALID_OPTION', message: /kd_unit must be one of "line", "word" \(got "page"\)/ })
  await t.resolves(checkParser(withDefaults, [{ name: 'one line', input: 'one line\n' }]), 'a parser that relies on its declared default passes the kit')
})
