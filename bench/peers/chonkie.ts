/**
 * Chonkie JS (`@chonkiejs/core`): RecursiveChunker and TokenChunker, with the default character
 * tokenizer (chunkSize 2048 chars ≈ 512 tokens) and with o200k_base through tiktoken (chunkSize
 * 512), passed as a Tokenizer subclass: chonkiejs has no built-in tiktoken (only HuggingFace
 * models through @chonkiejs/token, which downloads them).
 */
import { RecursiveChunker, TokenChunker, Tokenizer } from '@chonkiejs/core'
import { tiktokenO200k, type Peer } from './types.js'

async function o200kTokenizer (): Promise<Tokenizer> {
  const t = await tiktokenO200k()
  const tok = await Tokenizer.create()
  tok.countTokens = t.count
  tok.encode = t.encode
  tok.decode = t.decode
  tok.decodeBatch = (batch: number[][]) => batch.map(t.decode)
  return tok
}

type Chunker = { chunk: (t: string) => Promise<Array<{ text: string }>> }
const texts = (c: Chunker) => async (t: string) => (await c.chunk(t)).map(ch => ch.text)

export const peers: Peer[] = [
  {
    id: 'chonkie-recursive-chars',
    label: 'Chonkie Recursive (2048 chars)',
    budget: 'chars',
    create: async () => texts(await RecursiveChunker.create({ chunkSize: 2048 })),
  },
  {
    id: 'chonkie-token-chars',
    label: 'Chonkie Token (2048 chars)',
    budget: 'chars',
    create: async () => texts(await TokenChunker.create({ chunkSize: 2048 })),
  },
  {
    id: 'chonkie-recursive-tiktoken',
    label: 'Chonkie Recursive (tiktoken 512)',
    budget: 'o200k',
    create: async () => texts(await RecursiveChunker.create({ chunkSize: 512, tokenizer: await o200kTokenizer() })),
  },
  {
    id: 'chonkie-token-tiktoken',
    label: 'Chonkie Token (tiktoken 512)',
    budget: 'o200k',
    create: async () => texts(await TokenChunker.create({ chunkSize: 512, tokenizer: await o200kTokenizer() })),
  },
]
