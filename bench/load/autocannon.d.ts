/** The part of autocannon's API that run.ts uses (the package ships no types). */
declare module 'autocannon' {
  interface Request { method?: string, path?: string, headers?: Record<string, string>, body?: string | Buffer }
  interface Options { url: string, connections?: number, duration?: number, timeout?: number, requests?: Request[] }
  interface Histogram { average: number, total: number, p50: number, p99: number, max: number }
  interface Result {
    requests: Histogram
    latency: Histogram
    errors: number
    timeouts: number
    resets?: number
    non2xx: number
    statusCodeStats?: Record<string, { count: number }>
  }
  function autocannon (options: Options): Promise<Result>
  export default autocannon
}
