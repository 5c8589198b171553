/** withoutStackTraces: Errors made in the step have no frames, and the limit is put back, even when the step throws. */
import t from 'tap'
import { withoutStackTraces } from '../../core/without-stacks.js'

t.test('errors made inside carry no frames; the limit comes back', async (t) => {
  const before = Error.stackTraceLimit
  const inside = withoutStackTraces(() => new Error('x'))
  t.equal(inside.stack, 'Error: x', 'no frames')
  t.equal(Error.stackTraceLimit, before)
  t.ok((new Error('y').stack ?? '').includes('\n    at '), 'frames again after it')
  t.throws(() => withoutStackTraces(() => { throw new RangeError('z') }), RangeError)
  t.equal(Error.stackTraceLimit, before, 'put back after a throw')
})
