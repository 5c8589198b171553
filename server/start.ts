/**
 * `startServer(env)`: validates the environment, builds the app and listens. `docsplit serve`
 * calls it. On SIGTERM or SIGINT: new requests get 503, the listener closes, in-flight splits
 * finish within their budget, the workers stop, and the process exits 0.
 *
 * fastify and its plugins are the `web` extra: they are imported only here, dynamically, so the
 * library and the CLI work without them.
 */
import { DocsplitError } from '../core/errors.js'
import { loadEnv } from './env.js'
import { DRAIN_EXTRA_SECONDS, EXIT_MARGIN_SECONDS } from './shutdown-times.js'

export interface StartedServer {
  /** The address actually listened on (PORT=0 picks a free port). */
  url: string
  /** Drains and closes, as on SIGTERM (without exiting the process). */
  close: () => Promise<void>
}

const WEB_EXTRA = 'npm install fastify @fastify/type-provider-typebox @fastify/swagger @fastify/swagger-ui @fastify/multipart @fastify/rate-limit piscina (and ioredis for a shared rate limit)'

async function importApp (): Promise<typeof import('./app.js')> {
  try {
    return await import('./app.js')
  } catch (error) {
    const e = error as { code?: string }
    if (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') {
      throw new DocsplitError('DOCSPLIT_EXTRA_UNAVAILABLE', `docsplit serve needs the web extra: ${WEB_EXTRA}`, { cause: error })
    }
    throw error
  }
}

/** Why the service could not listen, naming the variable to change (HOST, PORT). */
function listenError (error: unknown, host: string, port: number): unknown {
  const code = (error as { code?: string }).code
  const where = `${host}:${port}`
  const message = code === 'EADDRINUSE' ? `cannot listen on ${where}: the port is in use; set PORT to a free one (PORT=0 picks one)`
    : code === 'EACCES' ? `cannot listen on ${where}: not allowed (ports under 1024 need privileges); set PORT to 1024 or more`
      : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? `cannot listen on ${where}: HOST is not an address of this machine (${code}); set HOST to one, such as 127.0.0.1 or 0.0.0.0`
        : undefined
  return message === undefined ? error : new DocsplitError('DOCSPLIT_INVALID_OPTION', message, { cause: error })
}

export interface StartOptions {
  /** Handle SIGTERM and SIGINT (drain, then exit). Default true. */
  signals?: boolean
  /**
   * Plugin modules the caller already loaded into this process (`docsplit serve --plugin X`):
   * not loaded again here, but loaded by every worker, like DOCSPLIT_PLUGINS.
   */
  plugins?: string[]
}

export async function startServer (env: NodeJS.ProcessEnv = process.env, options: StartOptions = {}): Promise<StartedServer> {
  const config = loadEnv(env)
  const { build, markPluginsLoaded } = await importApp()
  const preloaded = options.plugins ?? []
  markPluginsLoaded(preloaded)
  const app = await build({ ...config, plugins: [...new Set([...preloaded, ...config.plugins])] })
  const url = await app.listen({ host: config.host, port: config.port }).catch(async (error: unknown) => {
    await app.close()
    throw listenError(error, config.host, config.port)
  })
  app.log.info('API docs at /docs, the OpenAPI document at /openapi.json')
  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      app.startDraining()
      await app.close()
    })()
    return closing
  }
  if (options.signals !== false) {
    let stopping = false
    const onSignal = (signal: NodeJS.Signals): void => {
      // A repeated SIGTERM (a supervisor and a process group both passing it on) keeps draining;
      // a second SIGINT is someone pressing Ctrl-C again: leave now.
      if (stopping) {
        if (signal === 'SIGINT') process.exit(130)
        return
      }
      stopping = true
      app.log.info({ signal }, 'shutting down: finishing in-flight splits')
      // If something holds the close past the drain's own deadline, leave anyway (non-zero).
      const grace = setTimeout(() => { process.exit(1) }, (config.splitTimeoutSeconds + DRAIN_EXTRA_SECONDS + EXIT_MARGIN_SECONDS) * 1000)
      grace.unref()
      close().then(() => { process.exit(0) }, () => { process.exit(1) })
    }
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
  }
  return { url, close }
}
