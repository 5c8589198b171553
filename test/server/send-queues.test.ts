/**
 * The kernel's send queue of a connection (Linux /proc/self/net/tcp): what tells a client that
 * reads slowly from one that stopped, once the send buffer is full.
 */
import { existsSync } from 'node:fs'
import { createServer, connect, type Socket } from 'node:net'
import t from 'tap'
import { SendQueueReader, connectionKey, parseSendQueues } from '../../server/plugins/send-queues.js'

t.test('the queues of /proc/net/tcp and tcp6, by local and remote port', async (t) => {
  const tcp = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 00000000:1F40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1679 1 0000000000000000 100 0 0 10 0',
    '   1: 0100007F:1F40 0100007F:C5B2 01 003A2F10:00000000 01:00000014 00000000     0        0 0 3 0000000000000000',
    '   2: 0100007F:1F40 0A00000A:D431 01 00000200:00000000 01:00000014 00000000     0        0 0 3 0000000000000000',
    '   3: 0100007F:1F40 0B00000A:D431 01 00000300:00000000 01:00000014 00000000     0        0 0 3 0000000000000000',
    '   4: 0100007F:1F40 0100007F:A000 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0000000000000000',
    '   5: 0100007F:1F40 0100007F:A000 01 00000040:00000000 01:00000014 00000000     0        0 0 3 0000000000000000',
  ].join('\n')
  const tcp6 = [
    '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 0000000000000000FFFF00000100007F:1F41 0000000000000000FFFF00000100007F:9C40 01 00000010:00000000 00:00000000 00000000     0        0 0 1 0000000000000000',
  ].join('\n')
  const queues = parseSendQueues(tcp6, parseSendQueues(tcp))
  t.equal(queues.get(connectionKey(8000, 50610)), 0x3a2f10, 'an IPv4 connection of port 8000')
  t.equal(queues.get(connectionKey(8001, 40000)), 16, 'an IPv6 (IPv4-mapped) one')
  t.equal(queues.get(connectionKey(8000, 54321)), -1, 'two clients on the same remote port: not sure which')
  t.equal(queues.get(connectionKey(8000, 40960)), 64, 'a connection in TIME_WAIT on the same ports is left out')
  t.equal(queues.get(connectionKey(8000, 1)), undefined)
})

t.test('a connection whose reader stopped holds bytes in its send queue; they go as it reads', { skip: existsSync('/proc/self/net/tcp') ? false : 'no /proc/self/net/tcp (not Linux)' }, async (t) => {
  let accepted: Socket | undefined
  const server = createServer((socket) => { accepted = socket })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.close() })
  const client = connect((server.address() as { port: number }).port, '127.0.0.1')
  client.pause()
  t.teardown(() => { client.destroy() })
  while (accepted === undefined) await new Promise((resolve) => setTimeout(resolve, 10))
  const key = connectionKey(accepted.localPort!, accepted.remotePort!)
  accepted.write(Buffer.alloc(32 << 20))
  await new Promise((resolve) => setTimeout(resolve, 300))
  const reader = new SendQueueReader()
  const read = async (): Promise<number | undefined> => {
    reader.current()
    await new Promise((resolve) => setTimeout(resolve, 200))
    return reader.current()?.queues.get(key)
  }
  const held = await read()
  t.ok(held !== undefined && held > 0, `the kernel holds bytes for a client that reads nothing (${held})`)
  client.resume()
  await new Promise((resolve) => setTimeout(resolve, 300))
  const after = await read()
  t.ok(after !== undefined && after < held!, `fewer once it reads (${after})`)
  accepted.destroy()
})
