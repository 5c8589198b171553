/**
 * Shutdown waits for the requests in flight, and only for them: a request whose connection is
 * gone is not waited for, however its answer was queued.
 */
import t from 'tap'
import { connect } from 'node:net'
import { serve } from './helpers.js'

t.test('close does not wait for the answers queued on a pipelined connection that went away', async (t) => {
  // A grace of 65 s: a request counted in flight forever would hold close() that long.
  const warnings: string[] = []
  const onWarning = (warning: Error): void => { warnings.push(warning.name) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  const s = await serve({ splitTimeoutSeconds: 60 })
  const { port } = new URL(s.url)
  const socket = connect(Number(port), '127.0.0.1')
  socket.on('error', () => {})
  // Never read: the answers back up, and the later requests' answers wait their turn unwritten.
  socket.pause()
  await new Promise<void>((resolve) => socket.once('connect', () => { resolve() }))
  for (let i = 0; i < 20_000; i++) socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n')
  // Until the server has answered many and is stuck on a full socket.
  for (let tries = 0; s.logs.filter((l) => l.includes('"status":200')).length < 1000 && tries < 200; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  socket.destroy()
  await new Promise((resolve) => setTimeout(resolve, 200))
  let closed = false
  const closing = s.close().then(() => { closed = true })
  // Far less than the grace, far more than a close with nothing in flight takes.
  let timer: NodeJS.Timeout | undefined
  await Promise.race([closing, new Promise((resolve) => { timer = setTimeout(resolve, 15_000) })])
  clearTimeout(timer)
  t.ok(closed, 'closed without waiting out the grace')
  if (!closed) await closing
  // One 'close' listener per connection, not one per request queued on it.
  t.same(warnings, [], 'no MaxListenersExceededWarning')
})
