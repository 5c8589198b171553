/**
 * Used only where GNU time is missing: runs a Node entry point in this process and prints its
 * peak RSS on stderr at exit (`node bench/rss-wrapper.ts ENTRY ARGS...`), which measure.ts reads.
 */
import { writeSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

const [entry, ...args] = process.argv.slice(2)
if (entry === undefined) throw new Error('usage: rss-wrapper.ts ENTRY [ARGS...]')
process.argv = [process.argv[0] as string, resolve(entry), ...args]
process.on('exit', () => { writeSync(2, `\ndocsplit-bench maxRSS kB: ${process.resourceUsage().maxRSS}\n`) })
await import(pathToFileURL(resolve(entry)).href)
