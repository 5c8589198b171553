/**
 * How a Redis failure is worded in the rate limit's log line, without a Redis: the errors are
 * built as ioredis and Node make them. (redis.test.ts and faults/redis.test.ts see them happen.)
 */
import t from 'tap'
import { redisFailure } from '../../server/plugins/rate-limit.js'

const withCode = (message: string, code: string): Error => Object.assign(new Error(message), { code })

t.test('an outage is told by its code or as the connection lost, never as a bare error class', async (t) => {
  // ioredis fails the commands in flight with this when the connection drops under them.
  t.same(redisFailure(new Error('Connection is closed.'), 0, 500), { reason: 'connection lost', misconfigured: false })
  t.same(redisFailure(withCode('connect ECONNREFUSED 127.0.0.1:6390', 'ECONNREFUSED'), 0, 500), { reason: 'ECONNREFUSED', misconfigured: false })
  t.same(redisFailure(new Error('Command timed out'), 0, 750), { reason: 'no answer within 750 ms', misconfigured: false })
  t.notMatch(redisFailure(withCode('connect ECONNREFUSED 10.1.2.3:6379', 'ECONNREFUSED'), 0, 500).reason, /10\.1\.2\.3/, 'no address')
})

t.test('a mistake in the URL is told as one, with what to check', async (t) => {
  t.match(redisFailure(new Error('WRONGPASS invalid username-password pair or user is disabled.'), 0, 500), { reason: /^authentication failed \(WRONGPASS\): check the user and password/, misconfigured: true })
  t.match(redisFailure(withCode('getaddrinfo ENOTFOUND redis.internal', 'ENOTFOUND'), 0, 500), { reason: /^host not found \(ENOTFOUND\): check the host/, misconfigured: true })
  t.notMatch(redisFailure(withCode('getaddrinfo ENOTFOUND redis.internal', 'ENOTFOUND'), 0, 500).reason, /redis\.internal/, 'no host name')
})
