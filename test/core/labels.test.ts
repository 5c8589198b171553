/**
 * Container labels are names: one over 200 characters is cut in every chunk's `path`, whatever
 * the format, so a heading that is a whole paragraph does not repeat in every chunk under it.
 * A path is bounded too: past 64 containers its middle gives way to one `…`.
 */
import t from 'tap'
import { split } from '../../index.js'
import { ContainerPath, MAX_PATH } from '../../core/structure.js'

const long = (n: number): string => {
  const words = ['alpha', 'beta', 'gamma', 'δέλτα', '😀', 'epsilon']
  let s = ''
  for (let i = 0; s.length < n; i++) s += words[i % words.length] + ' '
  return s.trim()
}

t.test('a setext heading of a whole paragraph: its label is cut in path, its text is not', async (t) => {
  const heading = long(20_000)
  const doc = heading + '\n---\n\n' + 'A sentence under the heading. '.repeat(200) + '\n'
  const r = await split(doc, { input_format: 'markdown', max_tokens: 64 })
  t.equal(r.chunks.map((c) => c.text).join(''), doc, 'lossless')
  const labels = r.chunks.flatMap((c) => c.path)
  t.ok(labels.length > 10, 'the chunks under it carry it')
  for (const label of new Set(labels)) {
    t.ok(label.length <= 200, `label of ${label.length} characters`)
    const [head, tail, more] = label.split('…')
    t.equal(more, undefined, 'one ellipsis')
    t.ok(heading.startsWith(head!) && heading.endsWith(tail!), 'the start and the end of the heading')
    t.ok(head!.length > 100 && tail!.length > 30, 'most of it the start')
    t.notOk(/[\ud800-\udbff]$|^[\udc00-\udfff]/.test(head!) || /^[\udc00-\udfff]/.test(tail!), 'never half a surrogate pair')
  }
})

t.test('short labels are kept whole', async (t) => {
  const label = 'x'.repeat(200)
  const r = await split(`# ${label}\n\ntext\n`, { input_format: 'markdown' })
  t.same(r.chunks[0]!.path, [label])
})

t.test('a JSON member name of 100,000 characters', async (t) => {
  const key = 'k'.repeat(100_000)
  const doc = JSON.stringify({ [key]: Array.from({ length: 50 }, (_, i) => ({ id: i, text: 'some words here '.repeat(8) })) })
  const r = await split(doc, { input_format: 'json', max_tokens: 64 })
  t.equal(r.chunks.map((c) => c.text).join(''), doc, 'lossless')
  const labels = new Set(r.chunks.flatMap((c) => c.path))
  for (const label of labels) t.ok(label.length <= 200, `label of ${label.length} characters`)
  const records = [...labels].filter((l) => l.endsWith(']'))
  t.ok(records.length > 0, 'a chunk of one record names it')
  for (const label of records) t.match(label, /^\$\.k+…k+\[\d+\]$/, 'a JSON path keeps its start and its index')
})

t.test('a path past MAX_PATH containers keeps its outermost and innermost labels', async (t) => {
  const c = new ContainerPath()
  const names = Array.from({ length: 100 }, (_, i) => `n${i}`)
  for (const [i, name] of names.entries()) {
    c.enter(name)
    if (i % 3 === 0) c.enter('') // unlabelled containers (lists, items) count in depth only
    const open = names.slice(0, i + 1)
    const seen = c.path
    if (open.length <= MAX_PATH) t.same(seen, open)
    else t.same(seen, [...open.slice(0, 8), '…', ...open.slice(open.length - (MAX_PATH - 9))])
    t.equal(seen.length, Math.min(open.length, MAX_PATH))
  }
  const kept = c.path
  for (let i = names.length - 1; i >= 0; i--) {
    if (i % 3 === 0) c.exit()
    c.exit()
    const open = names.slice(0, i)
    t.same(c.path, open.length <= MAX_PATH ? open : [...open.slice(0, 8), '…', ...open.slice(open.length - (MAX_PATH - 9))])
  }
  t.equal(c.depth, 0)
  t.equal(kept.length, MAX_PATH, 'a path handed out is never changed afterwards')
})

t.test('XML 999 elements deep (1000 open is the limit): chunks carry a bounded path', async (t) => {
  const depth = 999
  const doc = '<a>'.repeat(depth) + 'deep' + '</a>'.repeat(depth)
  const r = await split(doc, { input_format: 'xml', max_tokens: 64 })
  t.equal(r.chunks.map((c) => c.text).join(''), doc, 'lossless')
  t.same(r.chunks[0]?.kinds, ['header'], 'the root start tag, a header record')
  // The root, then records opened into their children, labelled as records are (a chunk of
  // start tags has the path of where it starts); past MAX_PATH labels, the middle is `…`.
  const unexpected = r.chunks.slice(1).filter((c) => c.path.length > MAX_PATH ||
    !c.path.every((label, i) => i === 0 ? label === 'a' : label === 'a[1]' || (i === 8 && label === '…' && c.path.length === MAX_PATH)))
  t.same(unexpected.map((c) => c.path.slice(0, 10).join('/')), [], `${r.chunks.length - 1} chunks: the containers and a record's own label, at most ${MAX_PATH}`)
  t.ok(r.chunks.some((c) => c.path.length === MAX_PATH && c.path[8] === '…'), 'deep chunks show the outermost and innermost labels')
})
