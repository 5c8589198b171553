/**
 * The bytes each TCP connection of this process's network namespace still holds in its kernel
 * send queue (sent and not yet acknowledged, or not yet sent), from Linux's /proc/self/net/tcp
 * and tcp6 (the `tx_queue` column). Node tells what the kernel took from it, not what the client
 * has read since: once a large answer fills the send buffer, the kernel takes more only after
 * the client has read about a third of it, so a client that reads slowly but steadily looked
 * idle. A queue that shrinks is a client that reads.
 */
import { readFileSync } from 'node:fs'

/** Where a connection is found: its local and remote ports. */
export const connectionKey = (localPort: number, remotePort: number): string => `${localPort} ${remotePort}`

/**
 * Queues by connectionKey, added from the text of /proc/net/tcp or tcp6. A key seen twice (two
 * clients on the same remote port, from different addresses) gets -1: it tells nothing sure.
 */
export function parseSendQueues (table: string, into = new Map<string, number>()): Map<string, number> {
  for (const line of table.split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue ...
    const fields = line.trim().split(/\s+/)
    if (fields.length < 5) continue
    const local = fields[1]!
    const remote = fields[2]!
    const key = connectionKey(parseInt(local.slice(local.lastIndexOf(':') + 1), 16), parseInt(remote.slice(remote.lastIndexOf(':') + 1), 16))
    const queued = parseInt(fields[4]!.slice(0, fields[4]!.indexOf(':')), 16)
    if (!Number.isFinite(queued)) continue
    into.set(key, into.has(key) ? -1 : queued)
  }
  return into
}

let unavailable = false

/** The send queues now, or undefined where the kernel does not tell them (not Linux, no /proc). */
export function sendQueues (): Map<string, number> | undefined {
  if (unavailable) return undefined
  const queues = new Map<string, number>()
  let read = false
  for (const path of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
    try {
      parseSendQueues(readFileSync(path, 'latin1'), queues)
      read = true
    } catch {
      // tcp6 is missing where IPv6 is off
    }
  }
  if (!read) unavailable = true
  return read ? queues : undefined
}
