/**
 * The production path: `node dist/cli/index.js serve` (what `npm start` and the Docker image
 * run) with compiled workers. Skipped when dist/ is missing or older than the server sources
 * (`npm run build`; `npm test` builds it first).
 */
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { SCHEMA_VERSION } from '../../index.js'
import { TEXT, repoRoot, startChild, waitFor } from './helpers.js'

/** DOCSPLIT_DIST_DIR points the test at a build elsewhere (with its own node_modules beside it). */
const dist = process.env.DOCSPLIT_DIST_DIR ?? join(repoRoot, 'dist')
const cli = join(dist, 'cli/index.js')
const worker = join(dist, 'server/worker.js')

function newestSource (): number {
  let newest = 0
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name)
      const st = statSync(full)
      if (st.isDirectory()) walk(full)
      else if (name.endsWith('.ts')) newest = Math.max(newest, st.mtimeMs)
    }
  }
  walk(join(repoRoot, 'server'))
  return newest
}

const skip = !existsSync(cli) || !existsSync(worker)
  ? 'dist/ not built (npm run build): production start not tested'
  : statSync(worker).mtimeMs < newestSource() ? 'dist/ is older than server/ (npm run build): production start not tested' : false

t.test('docsplit serve from dist/ answers, splits in compiled workers and stops on SIGTERM', { skip }, async (t) => {
  const child = startChild(process.execPath, [cli, 'serve'], { HOST: '127.0.0.1', PORT: '0', DOCSPLIT_BUILD_COMMIT: 'c0ffee1', DOCSPLIT_PLUGINS: '' })
  t.teardown(() => { if (child.process.exitCode === null) child.process.kill('SIGKILL') })
  await waitFor(() => /Server listening at http/.test(child.stdout()) || child.process.exitCode !== null, 60_000, 'the server to listen')
  const url = /Server listening at (http\S+?)"/.exec(child.stdout())?.[1]
  t.ok(url, `listening (stderr: ${child.stderr().slice(0, 200)})`)
  if (url === undefined) return
  t.same(await (await fetch(`${url}/version`)).json(), { status: 'ok', version: (await import('../../index.js')).VERSION, commit: 'c0ffee1' })
  const text = '# Title\n\nSome text here.\n\n## Two\n\nMore text.\n'
  const res = await fetch(url + TEXT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text, max_tokens: 16 }) })
  t.equal(res.status, 200)
  const body = await res.json() as { schema_version: string, chunks: Array<{ text: string }> }
  t.equal(body.schema_version, SCHEMA_VERSION)
  t.equal(body.chunks.map((c) => c.text).join(''), text)
  child.process.kill('SIGTERM')
  t.equal(await child.exited, 0, 'exit 0 after SIGTERM')
})

t.test('npm start runs the service itself: SIGTERM to npm stops it gracefully, with no service left behind', { skip }, async (t) => {
  // npm runs the script through `sh -c`, and sh does not pass signals on: without `exec`, npm
  // ended and the service went on, orphaned, holding its port.
  const child = startChild(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['start', '--silent'], { HOST: '127.0.0.1', PORT: '0', DOCSPLIT_PLUGINS: '' })
  t.teardown(() => { if (child.process.exitCode === null) child.process.kill('SIGKILL') })
  await waitFor(() => /Server listening at http/.test(child.stdout()) || child.process.exitCode !== null, 60_000, 'the server to listen')
  const url = /Server listening at (http\S+?)"/.exec(child.stdout())?.[1]
  t.ok(url, `listening (stderr: ${child.stderr().slice(0, 200)})`)
  if (url === undefined) return
  t.equal((await fetch(`${url}/health`)).status, 200)
  child.process.kill('SIGTERM')
  t.equal(await child.exited, 0, 'npm exits 0 once the service has stopped')
  t.match(child.stdout(), /shutting down: finishing in-flight splits/, 'the service had the signal')
  await t.rejects(fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) }), 'nothing answers on its port')
})
