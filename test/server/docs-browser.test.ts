/**
 * /docs in headless Chromium: the page renders from the service's own assets (every request
 * stays on the loopback origin), and one split runs through Swagger UI's "Try it out" with the
 * result read from the page. Skipped when Chromium is not installed (Debian: apt-get install
 * chromium).
 */
import { existsSync } from 'node:fs'
import t from 'tap'
import { chromium } from 'playwright-core'
import { SCHEMA_VERSION } from '../../index.js'
import { httpCodes } from '../../server/problem.js'
import { serve } from './helpers.js'

const executablePath = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p))
const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

t.test('Swagger UI runs a split through "Try it out"', { skip: executablePath === undefined ? 'chromium not installed (apt-get install chromium): /docs not tested in a browser' : false }, async (t) => {
  const s = await serve({ maxConcurrentSplits: 1 })
  t.teardown(s.close)
  const browser = await chromium.launch({ executablePath, args })
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  const origins = new Set<string>()
  page.on('request', (request) => { origins.add(new URL(request.url()).origin) })

  await page.goto(`${s.url}/docs`)
  const operation = page.locator('#operations-split-splitText')
  await operation.waitFor({ timeout: 30_000 })
  t.match(await page.locator('.info .title').innerText(), /docsplit/)
  t.equal(await page.title(), 'docsplit API')
  // The routes come first; the errors table is folded, and opens whole.
  const table = page.locator('.info details table')
  t.notOk(await table.isVisible(), 'the errors table is folded')
  await page.locator('.info details summary').click()
  t.equal(await table.locator('tbody tr').count(), httpCodes.length, 'a row per error code, once opened')
  await operation.locator('.opblock-summary').click()
  await operation.getByRole('button', { name: 'Try it out' }).click()
  const document = '# Title\n\nFirst paragraph of the page test.\n\n## Part\n\nSecond paragraph.\n'
  await operation.locator('textarea.body-param__text').fill(JSON.stringify({ text: document, max_tokens: 16 }))
  await operation.getByRole('button', { name: 'Execute' }).click()
  const live = operation.locator('.live-responses-table')
  await live.locator('tr.response .response-col_status').first().waitFor({ timeout: 30_000 })
  t.equal((await live.locator('tr.response .response-col_status').first().innerText()).trim(), '200', 'status shown on the page')
  const shown = await live.locator('.response-col_description .microlight, .response-col_description pre').first().innerText()
  const body = JSON.parse(shown) as { schema_version: string, chunks: Array<{ text: string }> }
  t.equal(body.schema_version, SCHEMA_VERSION, 'the split response read from the page')
  t.equal(body.chunks.map((c) => c.text).join(''), document, 'lossless chunks')
  t.same([...origins], [new URL(s.url).origin], 'every request stayed on the service (no CDN, no validator)')
})

t.test('/docs renders over plain HTTP at a host name other than localhost, with no CSP violation', { skip: executablePath === undefined ? 'chromium not installed (apt-get install chromium): /docs not tested in a browser' : false }, async (t) => {
  const s = await serve({ maxConcurrentSplits: 1 })
  t.teardown(s.close)
  // docs.test is not a secure context (as 127.0.0.1 and localhost are): an
  // upgrade-insecure-requests policy would send every asset to https and leave a blank page.
  const browser = await chromium.launch({ executablePath, args: [...args, '--host-resolver-rules=MAP docs.test 127.0.0.1'] })
  t.teardown(() => browser.close())
  const page = await browser.newPage()
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => { console.error(`CSP violation: ${e.violatedDirective}`) })
  })
  const origin = `http://docs.test:${new URL(s.url).port}`
  const urls: string[] = []
  const errors: string[] = []
  page.on('request', (request) => { urls.push(request.url()) })
  page.on('requestfailed', (request) => { errors.push(`${request.url()} ${request.failure()?.errorText ?? ''}`) })
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })

  const res = await page.goto(`${origin}/docs`)
  t.notMatch(res?.headers()['content-security-policy'] ?? '', /upgrade-insecure-requests/, 'no upgrade-insecure-requests')
  t.match(res?.headers()['content-security-policy'] ?? '', /default-src 'self'/, 'a CSP still')
  await page.locator('#operations-split-splitText').waitFor({ timeout: 30_000 })
  t.match(await page.locator('.info .title').innerText(), /docsplit/, 'the page renders')
  await page.waitForLoadState('networkidle')
  t.same(urls.filter((u) => !u.startsWith(`${origin}/`)), [], 'every request stayed on plain http://docs.test')
  t.same(errors, [], 'no failed request, no console error, no CSP violation')
})
