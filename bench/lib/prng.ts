/** mulberry32: a small seeded PRNG, so generated inputs and samples are the same on every run. */
export function prng (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6D2B79F5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `n` bytes drawn from `random` (a prng): payloads that look like compressed or encrypted data. */
export function randomBytes (random: () => number, n: number): Buffer {
  return Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)))
}
