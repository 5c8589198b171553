/**
 * A split request the service cannot take is refused (503 DOCSPLIT_OVERLOADED) as its headers
 * arrive, before its body is read and parsed; one let in before the queue filled is refused
 * once its body is in. Neither uses up the client's rate limit.
 */
import t from 'tap'
import { TEXT, postJson, rawPost, serve, waitFor, type ProblemJson } from './helpers.js'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

t.test('queue full: refused as the headers arrive, and the refusals cost no rate limit', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1, maxQueuedSplits: 0, splitTimeoutSeconds: 120, rateLimitRequests: 10, rateLimitWindowSeconds: 600 })
  t.teardown(s.close)

  // Let in while the worker is free: its body comes once the queue is full.
  const late = rawPost(s.url, 13)
  await sleep(200)
  const gone = new AbortController()
  const busy = fetch(s.url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'long', input_format: 'spin', spin_ms: 600_000 }), signal: gone.signal })
  busy.catch(() => {})
  await sleep(500)

  // Arrives with the queue full. Its body is not JSON: read and dropped, never parsed (a 400).
  const notJson = '{"text": not json }'
  const early = rawPost(s.url, notJson.length)
  await sleep(200)
  early.send(notJson)
  const refused = await early.answer
  t.equal(refused.status, 503, 'refused before its body was parsed')
  t.match(refused.headers['content-type'], /^application\/problem\+json/)
  t.equal((JSON.parse(refused.body) as ProblemJson).code, 'DOCSPLIT_OVERLOADED')
  t.match(refused.headers['retry-after'], /^\d+$/, 'with Retry-After')
  t.notOk('ratelimit-remaining' in refused.headers, 'not counted by the rate limit')

  late.send('{"text":"ok"}')
  const lateAnswer = await late.answer
  t.equal(lateAnswer.status, 503, 'let in earlier: refused once its body is in')
  t.equal((JSON.parse(lateAnswer.body) as ProblemJson).code, 'DOCSPLIT_OVERLOADED')
  t.equal(lateAnswer.headers['ratelimit-remaining'], '10', 'its count given back (the answer says so)')

  gone.abort()
  await sleep(300)
  const next = await postJson(s.url + TEXT, { text: 'next' })
  t.equal(next.status, 200)
  t.equal(next.headers.get('ratelimit-remaining'), '8', 'only the busy split and this one were counted')

  await waitFor(() => s.logs.filter((l) => /"status":503/.test(l)).length === 2, 5000, 'both refusals to be logged')
  for (const line of s.logs.filter((l) => /"status":503/.test(l))) t.match(line, /"method":"POST","path":"\/docsplit\/api\/split\/text"/)
})

t.test('draining: the 503 costs no rate limit either', async (t) => {
  const s = await serve({ maxConcurrentSplits: 1, rateLimitRequests: 10, rateLimitWindowSeconds: 600 })
  t.teardown(s.close)
  const held = rawPost(s.url, 13)
  await sleep(200)
  // close() drains first; the held request keeps the service open until its body comes.
  const closing = s.close()
  await sleep(200)
  const refused = rawPost(s.url, 13)
  refused.send('{"text":"no"}')
  const answer = await refused.answer
  t.equal(answer.status, 503)
  t.equal(answer.headers.connection, 'close')
  t.notOk('ratelimit-remaining' in answer.headers, 'not counted by the rate limit')
  held.send('{"text":"ok"}')
  const heldAnswer = await held.answer
  t.equal(heldAnswer.status, 200, 'the request in flight finishes')
  t.equal(heldAnswer.headers['ratelimit-remaining'], '9')
  await closing
})
