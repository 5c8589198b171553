import t from 'tap'
import fc from 'fast-check'
import { SourceWindow } from '../../core/source.js'

t.test('slice: the text of one held piece, else undefined', async (t) => {
  const w = new SourceWindow()
  w.add('hello ')
  w.add('world\n')
  t.equal(w.slice(0, 5), 'hello')
  t.equal(w.slice(6, 12), 'world\n')
  t.equal(w.slice(6, 6), '')
  t.equal(w.slice(3, 9), undefined, 'across two pieces')
  t.equal(w.slice(10, 13), undefined, 'past the end')
  t.ok(w.matches(6, 'world'))
  t.equal(w.slice(0, 5), undefined, 'a piece dropped once a chunk passed it')
  t.equal(w.slice(7, 11), 'orld')
})

t.test('slice agrees with the text and matches() (property)', async (t) => {
  fc.assert(fc.property(fc.array(fc.string({ maxLength: 20 }), { maxLength: 8 }), fc.nat(), fc.nat(), (pieces, a, b) => {
    const w = new SourceWindow()
    for (const p of pieces) w.add(p)
    const all = pieces.join('')
    const start = all.length === 0 ? 0 : a % (all.length + 1)
    const end = start + (b % (all.length - start + 1))
    const got = w.slice(start, end)
    return got === undefined || (got === all.slice(start, end) && w.matches(start, got))
  }), { numRuns: 2000 })
  t.pass('slices are the source')
})
