/**
 * The record splitter over generated records (a test parser: one record per line, optional
 * header context, optional groups): records whole, protected records alone, counts exact.
 */
import t from 'tap'
import fc from 'fast-check'
import { definePlugin, register, split, type DocEvent } from '../../../index.js'
import { tokenizerByName } from '../../../core/registry.js'
import { invariantProblems } from '../../../testing.js'

register(definePlugin({
  kind: 'parser', name: 'test-lines', docsplit: '^1', formats: ['test-lines'], extensions: [], reads: 'text', defaultSplitter: 'record',
  create (ctx) {
    let held = ''
    let start = 0
    let n = 0
    let header: string | undefined
    let group = ''
    const line = (text: string): void => {
      // "#group" lines open a new container; the first line is a header for context.
      if (text.startsWith('#')) {
        if (group !== '') ctx.emit({ type: 'exit', end: start })
        group = text.trim()
        ctx.emit({ type: 'enter', kind: 'group', label: group, start })
        ctx.emit({ type: 'block', kind: 'marker', start, end: start + text.length, text })
      } else {
        const event: DocEvent = { type: 'record', kind: n === 0 ? 'header' : 'row', start, end: start + text.length, text, label: `row[${n}]`, fields: { row_start: n + 1, row_end: n + 1 } }
        if (header !== undefined) event.context = header
        else header = text.trimEnd()
        ctx.emit(event)
        n++
      }
      start += text.length
    }
    return {
      write (piece) {
        held += piece
        let i = held.indexOf('\n')
        while (i !== -1) { line(held.slice(0, i + 1)); held = held.slice(i + 1); i = held.indexOf('\n') }
      },
      end () {
        if (held.length > 0) line(held)
        if (group !== '') ctx.emit({ type: 'exit', end: start })
      },
    }
  },
}))

/** Lines starting with R are records, others blocks between them (a third party's parser). */
register(definePlugin({
  kind: 'parser', name: 'test-gaps', docsplit: '^1', formats: ['test-gaps'], extensions: [], reads: 'text', defaultSplitter: 'record',
  create (ctx) {
    let all = ''
    return {
      write (piece) { all += piece },
      end () {
        let start = 0
        for (const line of all.split(/(?<=\n)/)) {
          const end = start + line.length
          ctx.emit(line.startsWith('R') ? { type: 'record', start, end, text: line } : { type: 'block', kind: 'gap', start, end, text: line })
          start = end
        }
      },
    }
  },
}))

const approx = await tokenizerByName('approx').load()
const recordLine = fc.array(fc.oneof(fc.constantFrom('alpha', 'β', '日本', '😀', '42', ',', '"q"'), fc.string({ maxLength: 8 })), { maxLength: 40 })
  .map((ws) => ws.join(' ').replaceAll('\n', ' ').replaceAll('#', '') + '\n')

t.test('should never cut inside a record and keep every record in exactly one chunk', async (t) => {
  await fc.assert(fc.asyncProperty(fc.array(fc.oneof({ weight: 9, arbitrary: recordLine }, { weight: 1, arbitrary: fc.constantFrom('#a\n', '#b\n') }), { maxLength: 60 }), fc.constantFrom(8, 16, 64, 512), async (lines, max) => {
    const text = lines.join('')
    const r = await split(text, { input_format: 'test-lines', max_tokens: max })
    const bounds = new Set<number>([0])
    let at = 0
    for (const l of lines) bounds.add(at += l.length)
    const problems = invariantProblems(r, text, { tokenizer: approx, recordBoundaries: bounds })
    let expected = 0
    for (const c of r.chunks) {
      if (c.record_count !== undefined && c.record_count > 0) {
        if (c.record_start !== expected) problems.push(`chunk ${c.index}: record_start ${String(c.record_start)}, expected ${expected}`)
        expected += c.record_count
      }
      if (c.protected && approx.count(c.text) <= max) problems.push(`chunk ${c.index}: protected but fits`)
    }
    if (expected !== lines.filter((l) => !l.startsWith('#')).length) problems.push('records counted differ')
    if (problems.length > 0) throw new Error(problems.join('\n'))
  }), { numRuns: 200 })
})

t.test('should put a record over budget alone, protected, and carry header context', async (t) => {
  const text = 'id,name\n1,short\n2,' + 'long '.repeat(200) + '\n3,short\n'
  const r = await split(text, { input_format: 'test-lines', max_tokens: 32 })
  const big = r.chunks.find((c) => c.protected)!
  t.ok(big, 'one chunk is protected')
  t.equal(big.record_count, 1)
  t.ok(big.text.startsWith('2,long'))
  t.equal(big.context, 'id,name')
  t.same(big.path, ['row[2]'], 'a single record adds its label to the path')
  t.equal(r.chunks.filter((c) => c.protected).length, 1)
  t.equal(r.chunks.at(-1)!.boundary, 'end')
})

t.test('should not mix records of different containers and merge fields first-to-last', async (t) => {
  const text = '#a\nh\n1\n2\n#b\n3\n4\n'
  const r = await split(text, { input_format: 'test-lines', max_tokens: 512 })
  t.equal(r.chunk_count, 2)
  t.same(r.chunks.map((c) => c.path), [['#a'], ['#b']])
  t.match(r.chunks[0], { row_start: 1, row_end: 3, record_start: 0, record_count: 3 })
  t.match(r.chunks[1], { row_start: 4, row_end: 5, record_start: 3, record_count: 2 })
})

t.test('should overlap whole records only', async (t) => {
  const text = Array.from({ length: 40 }, (_, i) => `record ${i} with a few words\n`).join('')
  const r = await split(text, { input_format: 'test-lines', max_tokens: 40, overlap_tokens: 12 })
  const starts = new Set<number>()
  let at = 0
  for (const l of text.split(/(?<=\n)/)) { starts.add(at); at += l.length }
  for (const c of r.chunks) t.ok(starts.has(c.char_start), `chunk ${c.index} starts at a record`)
  t.ok(r.chunks.slice(1).some((c, i) => c.char_start < r.chunks[i]!.char_end), 'some chunk repeats records')
  t.same(invariantProblems(r, text, { tokenizer: approx }), [])
})

t.test('with o200k (its tally), records stay whole, counts are exact, and a chunk of many small records goes on by estimates', async (t) => {
  const o200k = await tokenizerByName('o200k_base').load()
  await fc.assert(fc.asyncProperty(fc.array(fc.oneof({ weight: 9, arbitrary: recordLine }, { weight: 1, arbitrary: fc.constantFrom('#a\n', '/x\n', ' y\n') }), { maxLength: 60 }), fc.constantFrom(8, 64, 512), async (lines, max) => {
    const text = lines.join('')
    const r = await split(text, { input_format: 'test-lines', max_tokens: max, tokenizer: 'o200k_base' })
    const bounds = new Set<number>([0])
    let at = 0
    for (const l of lines) bounds.add(at += l.length)
    const problems = invariantProblems(r, text, { tokenizer: o200k, recordBoundaries: bounds })
    if (problems.length > 0) throw new Error(problems.join('\n'))
  }), { numRuns: 100 })
  // 200 one-token records: past the tally's 32 records, estimates carry the chunk on.
  const small = 'h\n' + 'x\n'.repeat(200)
  const r = await split(small, { input_format: 'test-lines', max_tokens: 512, tokenizer: 'o200k_base' })
  t.ok(r.chunks[0]!.record_count! > 100, `the first chunk goes on past 32 records (${r.chunks[0]!.record_count!})`)
  for (const c of r.chunks) t.equal(c.token_count, o200k.count(c.text), `chunk ${c.index}: exact count`)
  t.same(invariantProblems(r, small, { tokenizer: o200k }), [])
})

t.test('a block between records that alone is over budget is cut like text, never protected', async (t) => {
  // A YAML stream of comments only is one block, not a record.
  const yaml = Array.from({ length: 300 }, (_, i) => `# comment line ${i} with some words\n`).join('') + '#' + 'x'.repeat(3000) + '\n'
  for (const tokenizer of ['approx', 'o200k_base']) {
    const r = await split(yaml, { input_format: 'yaml', max_tokens: 32, tokenizer })
    t.equal(r.chunks.filter((c) => c.protected).length, 0, `${tokenizer}: nothing protected`)
    t.ok(r.chunk_count > 50, `${tokenizer}: cut into ${r.chunk_count} chunks`)
    t.same(invariantProblems(r, yaml, { tokenizer: await tokenizerByName(tokenizer).load() }), [], `${tokenizer}: lossless, within budget`)
  }
})

t.test('text between records that fits with neither neighbour goes with a record over the budget anyway, not alone', async (t) => {
  const long = (name: string): string => `"${name} ${'many words here '.repeat(24).trim()}"`
  const doc = `[\n  ${long('A')},\n  ${long('B')},\n  "short"\n]\n`
  const r = await split(doc, { input_format: 'json', max_tokens: 64 })
  // `[` opens the first (protected) record's chunk, the comma after it ends it; the comma after
  // B goes with the short record, which it fits with; the closing bracket with that one too
  t.same(r.chunks.map((c) => [c.text, c.protected, c.record_count]), [
    [`[\n  ${long('A')},\n  `, true, 1],
    [long('B'), true, 1],
    [',\n  "short"\n]\n', false, 1],
  ])
  t.same(invariantProblems(r, doc, { tokenizer: approx }), [])
  // a third party's text between records that is longer (over an eighth of the budget) stays a chunk
  const big = `R ${'many words here '.repeat(30)}\n`
  const gaps = await split(`${big}, \n${big}${'a comment between records '.repeat(4)}\n${big}`, { input_format: 'test-gaps', max_tokens: 64 })
  t.same(gaps.chunks.map((c) => [c.kinds, c.protected]), [[['record', 'gap'], true], [['record'], true], [['gap'], false], [['record'], true]])
  // with overlap, a record between the budget and max_tokens is not protected, and the brackets
  // beside it join it only within max_tokens: the closing one (40 tokens), not the opening one
  const within = `[\n  "${'ab '.repeat(36)}"\n]`
  const overlapped = await split(within, { input_format: 'json', max_tokens: 40, overlap_tokens: 8 })
  t.same(overlapped.chunks.map((c) => [c.text, c.token_count <= 40, c.protected]), [['[\n  ', true, false], [within.slice(4), true, false]], 'nothing over max_tokens')
  // o200k counts may fall as text is added (`]]>` then blank lines): a record over the budget
  // without its blank lines, with them joined back, fits and is not protected
  const merging = [['xml', `<root><a>word </a><![CDATA[x]]>\n\n<a>${'lorem ipsum dolor sit amet '.repeat(3)}</a></root>`, 9], ['yaml', `a: word word word word a,.\n\nb: ${'lorem ipsum dolor '.repeat(3)}\n`, 8]] as const
  for (const [format, text, max] of merging) {
    const bpe = await split(text, { input_format: format, max_tokens: max, tokenizer: 'o200k_base' })
    t.same(bpe.chunks.filter((c) => c.protected).map((c) => c.token_count > max), [true], `${format}: only the long record protected`)
  }
  // records that fit exactly: the comma between them fits with neither, and is a chunk alone
  const exact = `[\n  ${long('C')},\n  ${long('D')}\n]`
  const fits = await split(exact, { input_format: 'json', max_tokens: approx.count(long('C')) })
  t.same(fits.chunks.filter((c) => c.protected), [], 'nothing protected')
  t.ok(fits.chunks.some((c) => c.text === ',\n  '), 'the comma alone')
})

t.test('with overlap, text between records that fits with neither neighbour joins one within max_tokens, not a chunk of its own', async (t) => {
  // Records packed to max_tokens - overlap_tokens: one near that, then `\n\t`, fitted with
  // neither and was a chunk of its own, with its overlap a copy of the record before.
  for (let width = 40; width <= 140; width += 4) {
    const node = (i: number): string => `<node id="${i}" v="${'x1 '.repeat(width / 4)}"/>`
    const doc = `<osm>\n\t${Array.from({ length: 6 }, (_, i) => node(i)).join('\n\t')}\n</osm>\n`
    for (const [max, overlap] of [[64, 32], [128, 64]]) {
      // A record with the white space after it over max_tokens leaves it nowhere else to go.
      if (approx.count(node(0) + '\n\t') > max!) continue
      const r = await split(doc, { input_format: 'xml', max_tokens: max, overlap_tokens: overlap })
      let end = 0
      const fresh = r.chunks.map((c) => { const f = c.text.slice(Math.max(0, end - c.char_start)); end = c.char_end; return f })
      t.same(fresh.filter((f) => f.trim() === ''), [], `width ${width}, ${max}/${overlap}: no chunk adds white space alone`)
      t.same(invariantProblems(r, doc, { tokenizer: approx }), [], `width ${width}, ${max}/${overlap}: within budget`)
    }
  }
})

t.test('a chunk says where it ended: after a record, a block, or a cut inside a block over budget', async (t) => {
  // exact counts: the paragraph's last piece (14 tokens) does not fit with the block after it
  const md = await split('# Title\n\n' + 'word '.repeat(55).trim() + '\n\nShort end.\n', { input_format: 'markdown', splitter: 'record', max_tokens: 16, tokenizer: 'o200k_base' })
  const boundaries = md.chunks.map((c) => c.boundary)
  t.ok(boundaries.slice(0, -2).every((b) => b === 'word'), `cut at words: ${boundaries.join(' ')}`)
  t.equal(boundaries.at(-2), 'block', 'the paragraph\'s last piece ends with the block')
  t.equal(boundaries.at(-1), 'end')
  const csv = await split('a,b\n' + Array.from({ length: 40 }, (_, i) => `${i},x\n`).join(''), { input_format: 'csv', max_tokens: 32 })
  t.ok(csv.chunks.slice(0, -1).every((c) => c.boundary === 'record'), 'records end at records')
})

t.test('with overlap, protected still means over max_tokens, and a chunk of one record may be the next one\'s overlap', async (t) => {
  const csv = 'h1,h2\na,b\nx,' + 'word '.repeat(13).trim() + '\nc,d\n'
  const r = await split(csv, { input_format: 'csv', max_tokens: 20, overlap_tokens: 4, tokenizer: 'o200k_base' })
  t.ok(r.chunks.every((c) => !c.protected), 'a record within max_tokens is not protected')
  t.ok(r.chunks.every((c) => c.token_count <= 20))
  const rows = 'name,value\n' + Array.from({ length: 6 }, (_, i) => `row${i},${i}`).join('\n') + '\n'
  const sliding = await split(rows, { input_format: 'csv', max_tokens: 12, overlap_tokens: 6, tokenizer: 'o200k_base' })
  const repeated = sliding.chunks.slice(1).filter((c, i) => c.char_start < sliding.chunks[i]!.char_end)
  t.ok(repeated.length >= 4, `chunks repeat the previous record: ${sliding.chunks.map((c) => JSON.stringify(c.text)).join(' ')}`)
  const o200k = await tokenizerByName('o200k_base').load()
  t.same(invariantProblems(sliding, rows, { tokenizer: o200k }), [])
})

t.test('token_count is exact when a chunk of many pieces is repaired by an exact count', async (t) => {
  // With an exact tokenizer a chunk is tallied for its first 32 units, then goes on by
  // estimates; when the exact count then drops trailing units, they open the next chunk through
  // the tally, and the unit that caused the flush must join that tally, not only the chunk.
  const o200k = await tokenizerByName('o200k_base').load()
  const word = fc.constantFrom('alpha', 'be', 'gamma,', '`code`', '{x}', '/path/to', '"q"', '42', 'é', '中文', 'url`')
  const para = fc.array(word, { minLength: 1, maxLength: 200, size: 'max' }).map((ws) => ws.join(' ') + '\n\n')
  const fence = fc.array(fc.constantFrom('  "a": {\n', '    "get": 1,\n', '}\n', '  /{id}/me\n', '      "description": "Returns all pets from the system",\n'), { minLength: 1, maxLength: 30, size: 'max' }).map((ls) => '```json\n' + ls.join('') + '```\n\n')
  const doc = fc.array(fc.oneof(para, fence, fc.constant('##### Heading\n\n')), { minLength: 1, maxLength: 40, size: 'max' }).map((bs) => bs.join(''))
  await fc.assert(fc.asyncProperty(doc, fc.constantFrom([48, 24], [64, 0], [100, 50], [32, 8]), async (text, [max, overlap]) => {
    const r = await split(text, { input_format: 'markdown', splitter: 'record', max_tokens: max, overlap_tokens: overlap, tokenizer: 'o200k_base' })
    const problems = invariantProblems(r, text, { tokenizer: o200k })
    if (problems.length > 0) throw new Error(problems.join('; '))
  }), { numRuns: 100, seed: 7 })
  t.pass('exact counts')
})

t.test('a chunk goes out once the record after it has started a chunk, not once that chunk is full too (tail -f)', async (t) => {
  const { splitStream } = await import('../../../index.js')
  let produced = 0
  async function * lines (): AsyncGenerator<string> {
    for (let i = 0; i < 400; i++) {
      produced++
      yield JSON.stringify({ n: i, message: `event ${i} with some words to count` }) + '\n'
      // Let the split run between lines, as between the lines of a live log.
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  const lags: number[] = []
  for await (const chunk of splitStream(lines(), { input_format: 'jsonl', max_tokens: 64 })) {
    if (chunk.boundary === 'end') break
    // Lines past the chunk's last record when it came: the next record, and the one whose
    // start completes that one, at most (a chunk later was 5 more lines here).
    lags.push(produced - (chunk.record_start! + chunk.record_count!))
  }
  t.ok(lags.length > 10, `${lags.length} chunks before the last`)
  t.ok(Math.max(...lags) <= 2, `each came at most 2 lines after its last record (lags ${[...new Set(lags)].join(', ')})`)
})
