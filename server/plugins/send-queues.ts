/**
 * The bytes each TCP connection of this process's network namespace still holds in its kernel
 * send queue (sent and not yet acknowledged, or not yet sent), from Linux's /proc/self/net/tcp
 * and tcp6 (the `tx_queue` column). Node tells what the kernel took from it, not what the client
 * has read since: once a large answer fills the send buffer, the kernel takes more only after
 * the client has read about a third of it, so a client that reads slowly but steadily looked
 * idle. A queue that shrinks is a client that reads.
 */
import { readFile } from 'node:fs/promises'

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
    // Established (01) or closed by the client while it still reads (CLOSE_WAIT, 08) only: a
    // connection in TIME_WAIT on the same ports is gone.
    if (fields.length < 5 || (fields[3] !== '01' && fields[3] !== '08') || !fields[4]!.includes(':')) continue
    const local = fields[1]!
    const remote = fields[2]!
    const key = connectionKey(parseInt(local.slice(local.lastIndexOf(':') + 1), 16), parseInt(remote.slice(remote.lastIndexOf(':') + 1), 16))
    const queued = parseInt(fields[4]!.slice(0, fields[4]!.indexOf(':')), 16)
    if (!Number.isFinite(queued)) continue
    into.set(key, into.has(key) ? -1 : queued)
  }
  return into
}

/** The queues by connectionKey, and when (performance.now()) their read began: a reading is that old at least. */
export interface SendQueues { queues: Map<string, number>, at: number }

/**
 * Reads the send queues off the event loop (a read of the tables takes 11 ms with a few
 * connections, 37 ms with 4,000 sockets, most of it the kernel's): `current()` gives those of the
 * last read done, and when it began, and starts the next.
 */
export class SendQueueReader {
  private latest: SendQueues | undefined
  private reading = false
  /** No /proc here (not Linux): never read again. */
  private unavailable = false

  current (): SendQueues | undefined {
    if (!this.unavailable && !this.reading) {
      this.reading = true
      void this.read().finally(() => { this.reading = false })
    }
    return this.latest
  }

  private async read (): Promise<void> {
    const at = performance.now()
    const queues = new Map<string, number>()
    let read = false
    for (const path of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
      try {
        parseSendQueues(await readFile(path, 'latin1'), queues)
        read = true
      } catch (error) {
        // tcp6 is missing where IPv6 is off; a failure such as EMFILE is tried again next time
        if ((error as { code?: unknown }).code !== 'ENOENT') return
      }
    }
    if (!read) this.unavailable = true
    this.latest = read ? { queues, at } : undefined
  }
}
