/**
 * LangChain.js (`@langchain/textsplitters`): RecursiveCharacterTextSplitter by characters
 * (2048 chars ≈ 512 tokens) and with a tiktoken length function (512 tokens), MarkdownTextSplitter
 * and `fromLanguage` for code with the same length function. TokenTextSplitter is not used: it
 * fetches its BPE tables from a CDN at run time.
 */
import { MarkdownTextSplitter, RecursiveCharacterTextSplitter } from '@langchain/textsplitters'
import { tiktokenO200k, type Peer } from './types.js'

const split = (s: { splitText: (t: string) => Promise<string[]> }) => async (t: string) => await s.splitText(t)

export const peers: Peer[] = [
  {
    id: 'langchain-recursive-chars',
    label: 'LangChain Recursive (2048 chars)',
    budget: 'chars',
    create: async () => split(new RecursiveCharacterTextSplitter({ chunkSize: 2048, chunkOverlap: 0 })),
  },
  {
    id: 'langchain-recursive-tiktoken',
    label: 'LangChain Recursive (tiktoken 512)',
    budget: 'o200k',
    create: async () => {
      const { count } = await tiktokenO200k()
      return split(new RecursiveCharacterTextSplitter({ chunkSize: 512, chunkOverlap: 0, lengthFunction: count }))
    },
  },
  {
    id: 'langchain-markdown-tiktoken',
    label: 'LangChain Markdown (tiktoken 512)',
    budget: 'o200k',
    kinds: ['markdown'],
    create: async () => {
      const { count } = await tiktokenO200k()
      return split(new MarkdownTextSplitter({ chunkSize: 512, chunkOverlap: 0, lengthFunction: count }))
    },
  },
  {
    id: 'langchain-code-tiktoken',
    label: 'LangChain fromLanguage (tiktoken 512)',
    budget: 'o200k',
    kinds: ['code-ts', 'code-py'],
    create: async (kind) => {
      const { count } = await tiktokenO200k()
      return split(RecursiveCharacterTextSplitter.fromLanguage(kind === 'code-py' ? 'python' : 'js', { chunkSize: 512, chunkOverlap: 0, lengthFunction: count }))
    },
  },
]
