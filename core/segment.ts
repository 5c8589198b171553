/**
 * Cut points inside a block that is over budget, from coarse to fine. Intl.Segmenter instances
 * are created once, on first use. Every function returns offsets relative to `text`, strictly
 * inside (0 < p < text.length), ascending, and never inside a surrogate pair.
 */

export type CutLevel = 'line' | 'sentence' | 'word' | 'grapheme' | 'codepoint'

export interface Segmenters {
  /** Cut points of `text` at `level`. */
  cuts (text: string, level: CutLevel): number[]
}

let sentenceSegmenter: Intl.Segmenter | undefined
let wordSegmenter: Intl.Segmenter | undefined
let graphemeSegmenter: Intl.Segmenter | undefined

function lineCuts (text: string): number[] {
  const out: number[] = []
  let i = text.indexOf('\n')
  while (i !== -1 && i + 1 < text.length) {
    out.push(i + 1)
    i = text.indexOf('\n', i + 1)
  }
  return out
}

function segmentStarts (text: string, segmenter: Intl.Segmenter, wordsOnly: boolean): number[] {
  const out: number[] = []
  for (const s of segmenter.segment(text)) {
    if (s.index === 0) continue
    // A cut before a word keeps punctuation and spaces with the word before them.
    if (wordsOnly && s.isWordLike !== true) continue
    out.push(s.index)
  }
  return out
}

function codepointCuts (text: string): number[] {
  const out: number[] = []
  for (let i = 1; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xdc00 && c <= 0xdfff) {
      const p = text.charCodeAt(i - 1)
      if (p >= 0xd800 && p <= 0xdbff) continue
    }
    out.push(i)
  }
  return out
}

export const segmenters: Segmenters = {
  cuts (text, level) {
    switch (level) {
      case 'line':
        return lineCuts(text)
      case 'sentence':
        sentenceSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'sentence' })
        return segmentStarts(text, sentenceSegmenter, false)
      case 'word':
        wordSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'word' })
        return segmentStarts(text, wordSegmenter, true)
      case 'grapheme':
        graphemeSegmenter ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' })
        return segmentStarts(text, graphemeSegmenter, false)
      case 'codepoint':
        return codepointCuts(text)
    }
  },
}

/** The order in which a block over budget is cut, by its cut style. */
export const cutLevels = {
  prose: ['sentence', 'word', 'grapheme', 'codepoint'],
  lines: ['line', 'word', 'grapheme', 'codepoint'],
} as const satisfies Record<string, readonly CutLevel[]>
