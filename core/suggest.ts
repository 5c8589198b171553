/**
 * "Did you mean" for a name that is not known (an option, a format, a splitter, a tokenizer, a
 * flag): the accepted name closest to it, when it is close enough to be a slip of the keyboard.
 */

/** Names compared up to this length: a longer one is no typo of a name. */
const LONGEST = 64

/**
 * Edits between `a` and `b` (insert, delete, replace, swap two neighbours), or more than `most`
 * as soon as the answer must be (one row of the table at a time).
 */
function distance (a: string, b: string, most: number): number {
  if (Math.abs(a.length - b.length) > most) return most + 1
  let before = new Array<number>(b.length + 1).fill(0)
  let row = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    let least = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1)
      next.push(d)
      least = Math.min(least, d)
    }
    if (least > most) return most + 1
    before = row
    row = next
  }
  return row[b.length]!
}

/** A name without its case, dashes and underscores: `--chunk-size`, `chunk_size`, `chunkSize`. */
const bare = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, '')

/** The digits of a name: `gpt-5` is no slip for `gpt-6`, whatever the distance says. */
const digitsOf = (name: string): string => name.replace(/\D+/g, '')

/**
 * The accepted name `given` most likely meant, in any letter case: one within an edit or two
 * (three for a long name) with the same digits, or the only one that starts with it (`o200k`
 * for `o200k_base`); else none.
 */
export function closestName (given: string, accepted: readonly string[], aliases: Readonly<Record<string, string>> = {}): string | undefined {
  const name = given.toLowerCase()
  if (name.length === 0 || name.length > LONGEST) return undefined
  // Own names only: `constructor` is no alias.
  const alias = Object.hasOwn(aliases, bare(name)) ? aliases[bare(name)] : undefined
  if (alias !== undefined) {
    const meant = accepted.find((candidate) => bare(candidate) === bare(alias))
    if (meant !== undefined) return meant
  }
  const extending = name.length >= 3 ? accepted.filter((candidate) => candidate.toLowerCase().startsWith(name)) : []
  if (extending.length === 1) return extending[0]
  const most = name.length <= 4 ? 1 : name.length <= 10 ? 2 : 3
  const digits = digitsOf(name)
  let best: string | undefined
  let bestDistance = most + 1
  for (const candidate of accepted) {
    const lower = candidate.toLowerCase()
    if (digitsOf(lower) !== digits) continue
    const d = distance(name, lower, most)
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

/**
 * ` (did you mean "x"?)`, or nothing: to follow what a message says is not known. `aliases`:
 * other names for an accepted one (by their bare form), such as another splitter's option names.
 */
export function didYouMean (given: string, accepted: readonly string[], aliases?: Readonly<Record<string, string>>): string {
  const name = closestName(given, accepted, aliases)
  return name === undefined ? '' : ` (did you mean ${JSON.stringify(name)}?)`
}
