import t from 'tap'
import fc from 'fast-check'
import { ReplacementMap } from '../../core/replacements.js'

t.test('sums the differences in a range as a plain list does, across growth, forgetting and offsets past 2^31', async (t) => {
  const step = fc.oneof(
    fc.record({ add: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.constant(2 ** 31), fc.integer({ min: 1, max: 2 ** 30 })), by: fc.constantFrom(-1, -2) }),
    fc.record({ forget: fc.double({ min: 0, max: 1, noNaN: true }) }),
    fc.record({ from: fc.double({ min: 0, max: 1, noNaN: true }), to: fc.double({ min: 0, max: 1, noNaN: true }) }),
  )
  fc.assert(fc.property(fc.array(step, { maxLength: 3000 }), (steps) => {
    const map = new ReplacementMap()
    const list: Array<[number, number]> = []
    let offset = 0
    let forgotten = 0
    for (const s of steps) {
      if ('add' in s) {
        offset += s.add
        map.add(offset, s.by)
        list.push([offset, s.by])
      } else if ('forget' in s) {
        forgotten = Math.max(forgotten, Math.floor(forgotten + (offset - forgotten) * s.forget))
        map.forget(forgotten)
      } else {
        const from = Math.floor(forgotten + (offset + 1 - forgotten) * Math.min(s.from, s.to))
        const to = Math.floor(forgotten + (offset + 1 - forgotten) * Math.max(s.from, s.to))
        const expected = list.filter(([at]) => at >= from && at < to).reduce((sum, [, by]) => sum + by, 0)
        if (map.sum(from, to) !== expected) throw new Error(`sum(${from}, ${to}) = ${map.sum(from, to)}, expected ${expected}`)
      }
    }
    return true
  }), { numRuns: 300 })
  t.pass('300 random runs')
})
