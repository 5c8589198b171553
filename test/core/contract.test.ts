/**
 * What the engine checks of every plugin while it splits, built in or third-party: a chunk's
 * text is the source text, counts are whole numbers, containers close, end() finishes, and a
 * failing detect, load or defaultSplitter is named, never an anonymous internal error.
 */
import t, { type Test } from 'tap'
import { DocsplitError, definePlugin, register, split, type ParserPlugin } from '../../index.js'
import { validatePlugin } from '../../core/registry.js'

/** A parser of one record holding the whole text, as `record` turns it; `change` edits it. */
function oneRecord (name: string, more: Partial<ParserPlugin> = {}, change: (text: string) => string = (x) => x): ParserPlugin {
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

/** A splitter that upper-cases what it packs: one chunk of all the events. */
const upperPacker = definePlugin({
  kind: 'packer',
  name: 'upper-packer-test',
  docsplit: '^1',
  create (ctx) {
    let text = ''
    return {
      push (event) { if (event.type === 'record' || event.type === 'block') text += event.text },
      end () {
        const upper = text.toUpperCase()
        ctx.emit({ start: 0, end: upper.length, text: upper, tokenCount: ctx.meter.count(upper), path: [], kinds: ['record'], boundary: 'end', protected: true })
      },
    }
  },
})

register([
  blankLines,
  upperPacker,
  oneRecord('upper-test', {}, (x) => x.toUpperCase()),
  oneRecord('throwing-detect-test', { detect: () => { throw new Error('detect broke') } }),
  oneRecord('short-text-test', {}, (x) => x.slice(1)),
  oneRecord('no-splitter-test', { defaultSplitter: 'nope' }),
  oneRecord('async-end-test', {
    create (ctx) {
      let text = ''
      return {
        write (piece: string) { text += piece },
        async end () { ctx.emit({ type: 'record', start: 0, end: text.length, text }) },
      }
    },
  } as Partial<ParserPlugin>),
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
  definePlugin({ kind: 'tokenizer', name: 'fraction-test', docsplit: '^1', load: () => ({ name: 'fraction-test', count: (s: string) => s.length / 3 }) }),
  definePlugin({ kind: 'tokenizer', name: 'nameless-test', docsplit: '^1', load: () => ({ count: (s: string) => s.length }) as never }),
  definePlugin({ kind: 'tokenizer', name: 'countless-test', docsplit: '^1', load: () => ({ name: 'countless-test' }) as never }),
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

t.test('a token count must be a whole number of at least 0', async (t) => {
  await refusal(t, split(TEXT, { input_format: 'text', tokenizer: 'negative-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /tokenizer "negative-test".* -1 tokens/)
  await refusal(t, split(TEXT + '!', { input_format: 'text', tokenizer: 'fraction-test', max_tokens: 100 }), 'DOCSPLIT_PLUGIN_CONTRACT', /tokenizer "fraction-test".*whole number/)
})

t.test('a tokenizer without a name is reported by its plugin name; one without count() or whose load throws is named', async (t) => {
  const r = await split(TEXT, { input_format: 'text', tokenizer: 'nameless-test', max_tokens: 100 })
  t.equal(r.metadata.tokenizer, 'nameless-test')
  await refusal(t, split(TEXT, { input_format: 'text', tokenizer: 'countless-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /tokenizer "countless-test": load\(\) must return an object with count/)
  await refusal(t, split(TEXT, { input_format: 'text', tokenizer: 'failing-load-test' }), 'DOCSPLIT_INTERNAL', /failing-load-test tokenizer failed/)
})

t.test('a detect() that throws takes only its own format out of auto detection', async (t) => {
  const r = await split('# Title\n\nSome text with a [link](http://example.com).\n\n## Part\n\n- a\n- b\n', {})
  t.equal(r.document.input_format, 'markdown')
})

t.test('a parser that names an unknown default splitter, ends with a promise or leaves a container open is named', async (t) => {
  await refusal(t, split(TEXT, { input_format: 'no-splitter-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /parser "no-splitter-test" names defaultSplitter "nope"/)
  const named = await split(TEXT, { input_format: 'no-splitter-test', splitter: 'record' })
  t.equal(named.chunks.length, 1, 'a splitter given by name still works')
  await refusal(t, split(TEXT, { input_format: 'async-end-test' }), 'DOCSPLIT_PLUGIN_CONTRACT', /parser "async-end-test": end\(\) must finish/)
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
