/**
 * A depth-first walk over a tree of plain objects and arrays (a parser's syntax tree), without
 * recursion: a tree thousands of levels deep (hostile input) must not overflow the stack, and
 * a stack overflow inside V8's regexp engine can leave the process unable to compile regexps.
 */

/**
 * Calls `visit` for every object under `root` (arrays are looked through: their items are at
 * the array's own depth), with its depth (root: 1); a visit that returns false ends the walk.
 * Returns false when a visit ended it.
 */
export function walkObjects (root: unknown, visit: (node: object, depth: number) => boolean | undefined | void): boolean {
  const nodes: unknown[] = [root]
  const depths: number[] = [1]
  while (nodes.length > 0) {
    const node = nodes.pop()
    const depth = depths.pop()!
    if (Array.isArray(node)) {
      for (const item of node) { nodes.push(item); depths.push(depth) }
    } else if (node !== null && typeof node === 'object') {
      if (visit(node, depth) === false) return false
      for (const value of Object.values(node)) {
        if (value !== null && typeof value === 'object') { nodes.push(value); depths.push(depth + 1) }
      }
    }
  }
  return true
}
