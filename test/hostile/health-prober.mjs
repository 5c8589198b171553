// A /health prober in its own process, so that work in the test process never delays it:
// node health-prober.mjs URL [everyMs]. Probes until stdin closes, then prints one JSON line
// {probes, failures, maxMs, p99Ms, p50Ms}. Used by the hostile suites and bench/load/run.ts.
const [url, every = '250'] = process.argv.slice(2)
let running = true
const failures = []
const times = []
process.stdin.on('end', () => { running = false })
process.stdin.on('close', () => { running = false })
process.stdin.resume()
while (running) {
  const t0 = performance.now()
  try {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) })
    await res.arrayBuffer()
    if (res.status !== 200) failures.push(`status ${res.status}`)
  } catch (error) {
    failures.push(String(error?.name ?? error))
  }
  times.push(performance.now() - t0)
  await new Promise((resolve) => setTimeout(resolve, Number(every)))
}
const sorted = [...times].sort((a, b) => a - b)
const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0
process.stdout.write(JSON.stringify({ probes: times.length, failures, maxMs: sorted[sorted.length - 1] ?? 0, p99Ms: at(0.99), p50Ms: at(0.5) }) + '\n')
