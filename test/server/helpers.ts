/**
 * Helpers for the server tests: build the app on 127.0.0.1 port 0, capture its log lines,
 * post JSON or forms through real HTTP (fetch) or a raw socket, and start/stop a child process.
 */
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { spawn, type ChildProcess } from 'node:child_process'
import { connect, createServer, type Socket } from 'node:net'
import { build, type BuildOptions } from '../../server/app.js'
import { listTokenizers } from '../../index.js'

export const spinPlugin = fileURLToPath(new URL('./fixtures/spin-plugin.mjs', import.meta.url))
export const startScript = fileURLToPath(new URL('./fixtures/start.ts', import.meta.url))
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url))
/** A stand-in approx tokenizer, for an engine whose built-ins do not register one yet. */
const approxModule = fileURLToPath(new URL('./fixtures/approx-stub.mjs', import.meta.url))

/** Plugin modules every test server loads: the spin fixture (and approx if not built in). */
export function testPlugins (): string[] {
  return approxBuiltIn ? [spinPlugin] : [approxModule, spinPlugin]
}

/** Read before any test loads plugins into this process. */
const approxBuiltIn = listTokenizers().some((t) => t.name === 'approx')

export interface Served {
  url: string
  logs: string[]
  close: () => Promise<void>
}

/** Builds and listens on 127.0.0.1:0, with log lines collected in `logs`. */
export async function serve (opts: BuildOptions = {}): Promise<Served> {
  const logs: string[] = []
  let pending = ''
  const logStream = new Writable({
    write (chunk: Buffer, _enc, done) {
      pending += chunk.toString('utf8')
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      logs.push(...lines.filter((l) => l !== ''))
      done()
    },
  })
  const app = await build({ plugins: testPlugins(), logStream, ...opts })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  return { url, logs, close: async () => { await app.close() } }
}

export function postJson (url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
}

export function postFile (url: string, content: string | Uint8Array, filename: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Response> {
  const form = new FormData()
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  form.append('file', new Blob([content]), filename)
  return fetch(url, { method: 'POST', body: form, headers })
}

export const TEXT = '/docsplit/api/split/text'
export const FILE = '/docsplit/api/split/file'

export interface ProblemJson { type: string, title: string, status: number, detail: string, code: string }

/** An answer read off a raw socket: the first response's status and headers (names lower-cased), the rest as the body, and every byte as text. */
export interface RawAnswer { status: number, headers: Record<string, string>, body: string, raw: string }

/** Reads what `socket` receives until it closes, as a RawAnswer (status 0 when no HTTP answer came). */
function answerOf (socket: Socket): Promise<RawAnswer> {
  const parts: Buffer[] = []
  socket.on('data', (d: Buffer) => { parts.push(d) })
  socket.on('error', () => {})
  return new Promise((resolve) => {
    socket.on('close', () => {
      const raw = Buffer.concat(parts).toString('utf8')
      const [head = '', ...rest] = raw.split('\r\n\r\n')
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
      resolve({ status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body: rest.join('\r\n\r\n'), raw })
    })
  })
}

/** Sends `data` on a fresh connection and reads until the server closes it. */
export function exchange (url: string, data: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname, () => { socket.write(data) })
  return answerOf(socket)
}

/**
 * A POST to the text route over a raw socket: the headers (Content-Length `length`,
 * `Connection: close`) are sent now, the body when `send` is called; `answer` is what came back.
 */
export function rawPost (url: string, length: number): { send: (body: string) => void, answer: Promise<RawAnswer> } {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  socket.write(`POST ${TEXT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`)
  return { send: (body) => { socket.write(body) }, answer: answerOf(socket) }
}

/** A free loopback port (for processes that need one chosen up front, like redis-server). */
export function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => { resolve(port) })
    })
  })
}

export interface Child {
  process: ChildProcess
  stdout: () => string
  stderr: () => string
  exited: Promise<number | null>
}

export function startChild (command: string, args: string[], env: NodeJS.ProcessEnv = {}): Child {
  const child = spawn(command, args, { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout?.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr?.on('data', (d: Buffer) => { err += d.toString() })
  const exited = new Promise<number | null>((resolve) => { child.once('exit', (code) => { resolve(code) }) })
  return { process: child, stdout: () => out, stderr: () => err, exited }
}

/** Waits until `check` is true, polling; throws after `ms`. */
export async function waitFor (check: () => boolean | Promise<boolean>, ms = 15_000, what = 'condition'): Promise<void> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}
