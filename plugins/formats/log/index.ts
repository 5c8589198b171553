/**
 * The `log` parser plugin: one record per log entry (a start line plus its continuation lines).
 * The start pattern is detected from windows of lines (again when the format changes), or
 * given as `log_start`.
 */
import { Type } from 'typebox'
import { definePlugin } from '../../../core/registry.js'
import type { ParserHandler } from '../../../core/types.js'
import { LogParser } from './parse.js'
import { logScore } from './sniff.js'

export default definePlugin({
  kind: 'parser',
  name: 'log',
  docsplit: '^1',
  description: 'Log files: one record per entry, with stack traces and other continuation lines kept in their entry.',
  formats: ['log'],
  extensions: ['.log'],
  reads: 'text',
  defaultSplitter: 'record',
  options: Type.Object({
    log_start: Type.Optional(Type.String({
      maxLength: 512,
      description: 'log: a regular expression (JavaScript syntax, no flags) tested on the first 1024 characters of each line: a line that matches starts a log entry, such as `^\\d{4}-\\d{2}-\\d{2}`; other lines continue the entry before them. A pattern that could take more than about 3 million steps on a line of 1024 characters is refused (`(a+)+`, `^.*.*.*x`, `^.{0,1024}.{0,1024}.{0,1024}x`, `\\s*\\s*x` without a leading `^`). Default: detected from windows of 50 lines (timestamps, levels, syslog, brackets; through colour codes and after a Kubernetes CRI, docker compose or `kubectl logs --prefix` prefix, and inside Docker json-file lines), again when the format changes later, else a non-indented line starts an entry.',
    })),
  }),
  detect (sample: string): number {
    return logScore(sample)
  },
  async create (ctx): Promise<ParserHandler<string>> {
    const source = ctx.options.log_start
    let start: RegExp | undefined
    if (typeof source === 'string' && source.length > 0) {
      // Unicode mode when the pattern allows it (`\p{L}`), else the legacy syntax (`\_`).
      for (const flags of ['u', '']) {
        try {
          start = new RegExp(source, flags)
          break
        } catch {}
      }
      if (start === undefined) ctx.fail('DOCSPLIT_INVALID_OPTION', 'log_start is not a valid regular expression')
      // The guard (a regex engine of its own) loads only for a pattern to check.
      const { unsafeRegexReason } = await import('./regex-guard.js')
      const unsafe = unsafeRegexReason(source)
      if (unsafe !== undefined) {
        ctx.fail('DOCSPLIT_INVALID_OPTION', `log_start could take exponential or polynomial time on some lines: ${unsafe}; use a simpler pattern (the start of a record is enough)`)
      }
    }
    const parser = new LogParser((event) => { ctx.emit(event) }, (code, message) => ctx.fail(code, message), { start })
    return {
      write: (piece) => { parser.write(piece) },
      end: () => { parser.end() },
    }
  },
})
