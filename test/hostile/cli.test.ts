/**
 * Hostile inputs through the built `docsplit` command (spawned as a user runs it): each ends
 * with the documented exit code and error code on stderr, or exit 0 and a split that passes
 * the invariants. A bound per case catches a hang (the command is killed and the case fails).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { SplitResponse } from '../../core/schema.js'
import { hostileCases } from './inputs.js'
import { cli, cliBin, decoded, exitOf, problemsOf, type RunResult } from './helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'docsplit-hostile-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })

t.before(() => {
  if (!existsSync(cliBin)) throw new Error(`${cliBin} is missing: run npx tsc -p . (npm test builds it first)`)
})

t.test('hostile inputs through the CLI', async (t) => {
  // The http external entity points here: a connection would mean the parser fetched it.
  let connections = 0
  const trap = createServer((socket) => { connections++; socket.end('HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nXXE-PAYLOAD') })
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => trap.close(() => { resolve() })))
  const trapPort = (trap.address() as { port: number }).port

  // Run the commands two at a time (the CI has two cores), then check each in order.
  const cases = hostileCases().map((c) => {
    const input = typeof c.input === 'string' ? c.input.replace('@PORT@', String(trapPort)) : c.input
    const path = join(dir, c.filename)
    writeFileSync(path, input)
    const flags = Object.entries(c.options ?? {}).flatMap(([k, v]) => [`--${k.replace(/_/g, '-')}`, String(v)])
    return { c, input, path, flags }
  })
  const results: Array<RunResult | undefined> = []
  let next = 0
  await Promise.all([0, 1].map(async () => {
    for (let i = next++; i < cases.length; i = next++) {
      const { c, path, flags } = cases[i]!
      results[i] = await cli(['split', path, ...flags], { ms: c.knownBug !== undefined ? 10_000 : 180_000 })
    }
  }))
  for (const [i, { c, input }] of cases.entries()) {
    await t.test(c.name, async (t) => {
      const r = results[i]!
      if (c.knownBug !== undefined && r.timedOut) {
        t.fail('the command finished (no hang)', { todo: c.knownBug })
        return
      }
      t.notOk(r.timedOut, 'the command finished (no hang)')
      t.equal(r.signal, null, 'not killed by a signal (no crash, no out-of-memory abort)')
      if (r.code === 0) {
        t.ok(c.splitOk, `a split is an acceptable answer (expected one of ${c.codes.join(', ')})`)
        const response = JSON.parse(r.stdout) as SplitResponse
        t.same(await problemsOf(response, decoded(input)), [], 'the split passes the invariants')
        if (c.forbid !== undefined) t.notMatch(response.chunks.map((x) => x.text).join(''), c.forbid, 'no entity or alias expanded into the output')
      } else {
        const m = /^docsplit: (DOCSPLIT_[A-Z0-9_]+): /m.exec(r.stderr)
        t.ok(m !== null, `a coded error on stderr: ${r.stderr.slice(0, 300)}`)
        const code = m?.[1] ?? ''
        t.ok(c.codes.includes(code), `${code} is a documented answer for this input (${c.codes.join(', ') || 'a split'})`)
        if (code !== '') t.equal(r.code, exitOf(code), `exit code ${exitOf(code)} for ${code}`)
        t.notMatch(r.stderr, /\n\s+at |\/work\/|node:internal/, 'no stack trace or path')
      }
    })
  }
  t.equal(connections, 0, 'no external entity was fetched')
})
