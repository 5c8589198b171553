/**
 * Plain text has no heading syntax, but books, contracts and RFCs set titles on lines of their
 * own: `CHAPTER IV.`, `ARTICLE 5` over `CONFIDENTIALITY`, `Section 3 - Term`, `§ 12`, `3.2.  Scope`.
 * Such a paragraph goes with the one after it (the block's attachNext), so no chunk ends with
 * a title while its text starts the next one. A guess that is wrong costs little: a short line
 * travels with the paragraph after it.
 */

/** Lines of a title paragraph, at most. */
const MAX_LINES = 3
/** Characters of a title line, at most. */
const MAX_LINE = 80
/** A named division (`Chapter`, `ARTICLE`) and, in DIVISION_NUMBER, its number. */
const DIVISION = /^(?:chapter|part|section|article|book|volume|appendix|annex|schedule|exhibit|title|act|scene|canto|lecture|lesson)\s+/i
/** `4`, `IV`, `B`: not `a` (`Book a flight`). */
const DIVISION_NUMBER = /^(?:\d+|[IVXLCDM]+|[A-Z])\b/
/** A section sign or a section number before a title: `§ 12`, `3.2.  Scope`, `4 Results`. */
const NUMBERED = /^(?:§+\s*\d|\d{1,3}(?:\.\d{1,3})*\.?\s+\S)/
/** A number's shape (`1.`, `2.3`): a numbered line that the next paragraph's numbering repeats is a list's item. */
const NUMBER_SHAPE = /^\s*(\d{1,3})((?:\.\d{1,3})*)(\.?)\s/
/** A division or number alone, its stop included: `Chapter IV.`, `§ 12.` */
const LABEL_ONLY = /^(?:\S+\s+)?(?:§+\s*)?(?:\d+|[ivxlcdm]+|[a-z])\.?$/i
/** How a sentence, not a title, ends. */
const SENTENCE_END = /[.!?:;,]["'”’)]?$/
const LOWER = /\p{Ll}/u
const LETTERS = /\p{L}.*\p{L}/u

function titleLine (line: string): boolean {
  if (line.length > MAX_LINE) return false
  // In capitals: `CONFIDENTIALITY`, `THE SEEDED ESTATE`, `CHAPTER IV.`
  if (LETTERS.test(line) && !LOWER.test(line)) return true
  const division = DIVISION.exec(line)
  const numbered = division !== null ? DIVISION_NUMBER.test(line.slice(division[0].length)) : NUMBERED.test(line)
  return numbered && (!SENTENCE_END.test(line) || LABEL_ONLY.test(line))
}

/** `1.` then `2.`, `3.1` then `3.2`: the same depth of numbering, and the same stop after it. */
function sameNumbering (a: string, b: string): boolean {
  const x = NUMBER_SHAPE.exec(a)
  const y = NUMBER_SHAPE.exec(b)
  return x !== null && y !== null && x[2]!.split('.').length === y[2]!.split('.').length && x[3] === y[3]
}

/**
 * Whether a paragraph (with the blank lines after it) reads as a title, or as a page's running
 * header: one short line at the top of a page (after its form feed), whatever its case. `next`:
 * the first line of the paragraph after it, if any (numbered steps are a list, not titles).
 */
export function headingLike (paragraph: string, next = ''): boolean {
  if (sameNumbering(paragraph, next)) return false
  const lines = paragraph.split(/\r\n?|\n/)
  let count = 0
  let title = true
  for (const raw of lines) {
    const line = raw.trim()
    if (line === '') continue
    if (++count > MAX_LINES) return false
    title &&= titleLine(line)
  }
  return count > 0 && (title || (count === 1 && paragraph.charCodeAt(0) === 12 /* \f */ && paragraph.trim().length <= MAX_LINE))
}
