/**
 * A parser's content sniffers (`detect`, `formatOf`) that throw: the split fails naming the
 * parser, as for any exception of a plugin, rather than going on silently as if the parser
 * had said nothing (a plugin's bug then looked like its format not being detected).
 */
import t from 'tap'
import { DocsplitError, register, split } from '../../index.js'
import { checkParser } from '../../testing.js'
import { oneRecord } from '../helpers/plugins.js'

/** Throws on a sample that starts with "boom", else says nothing. */
const boom = oneRecord('sniff-boom-test', { detect: (sample) => { if (sample.startsWith('boom')) throw new TypeError('detect broke'); return 0 } })
/** Certain of a sample that starts with "pick me", whose formatOf throws. */
const picked = oneRecord('sniff-picked-test', {
  formats: ['sniff-picked-test', 'sniff-picked-other-test'],
  detect: (sample) => sample.startsWith('pick me') ? 1 : 0,
  formatOf: () => { throw new RangeError('formatOf broke') },
})
register(boom, picked)

async function failure (run: Promise<unknown>): Promise<DocsplitError> {
  const error = await run.then(() => undefined, (e: unknown) => e)
  if (!(error instanceof DocsplitError)) throw new Error(`expected a DocsplitError, got ${String(error)}`)
  return error
}

t.test('a detect() that throws fails the split by content, naming the parser, with the exception as cause', async (t) => {
  const e = await failure(split('boom\nmore text\n'))
  t.equal(e.code, 'DOCSPLIT_INTERNAL')
  t.equal(e.message, 'the sniff-boom-test parser\'s detect() failed unexpectedly')
  t.match(e.cause, { name: 'TypeError', message: 'detect broke' })
  t.equal((await split('plain words\n')).document.input_format, 'text', 'a sample it does not throw on is detected as before')
  t.equal((await split('boom\n', { filename: 'a.txt' })).document.input_format, 'text', 'a format chosen by extension asks no detect()')
})

t.test('a formatOf() that throws fails the split, naming the parser', async (t) => {
  const e = await failure(split('pick me\n'))
  t.equal(e.code, 'DOCSPLIT_INTERNAL')
  t.equal(e.message, 'the sniff-picked-test parser\'s formatOf() failed unexpectedly')
  t.match(e.cause, { name: 'RangeError' })
})

t.test('the kit calls detect() and formatOf() on the samples and on generated inputs', async (t) => {
  await t.rejects(checkParser(boom, [{ name: 'a boom', input: 'boom\n' }]), { message: /^parser "sniff-boom-test": a boom: detect\(\) threw TypeError: detect broke; a sniffer that cannot tell answers 0$/ })
  await t.rejects(checkParser(picked, [{ name: 'plain', input: 'text\n' }]), { message: /^parser "sniff-picked-test": empty input: formatOf\(\) threw RangeError: formatOf broke; a sniffer that cannot tell answers undefined$/ })
})
