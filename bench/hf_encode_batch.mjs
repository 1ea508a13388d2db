#!/usr/bin/env node
// Hugging Face tokenizers' own speed on a text (bench/hf_tokenizer_throughput.py runs it): the
// documents of FILE (cut at SEP, empty ones left out, as rung-data reads them) encoded by one
// `encodeBatch` call of the Node binding (its Rust threads: RAYON_NUM_THREADS), with the template
// tokens, special added tokens never matched in text (tests/tokenizers/oracle.mjs builds the encoder
// as the id comparison does). Prints one JSON line: {"seconds", "tokens", "documents"}; with --ids OUT
// also writes each document's ids, one JSON array a line.
//
//   node bench/hf_encode_batch.mjs --tokenizer PATH --input FILE --split-on SEP --node-modules DIR [--ids OUT]
import { readFileSync, writeFileSync } from 'node:fs'
import { loadTokenizers, parseOptions, readJson, referenceTokenizer, tokenizerJsonPath, unescapeSeparator } from '../tests/tokenizers/oracle.mjs'

function usage(message) {
  if (message) process.stderr.write(`hf_encode_batch: ${message}\n`)
  process.stderr.write(
    'usage: node bench/hf_encode_batch.mjs --tokenizer PATH --input FILE --split-on SEP --node-modules DIR [--ids OUT]\n',
  )
  process.exit(2)
}

const options = parseOptions(
  process.argv.slice(2),
  {
    tokenizer: { type: 'string' },
    input: { type: 'string' },
    'split-on': { type: 'string' },
    'node-modules': { type: 'string' },
    ids: { type: 'string' },
  },
  usage,
)
for (const key of ['tokenizer', 'input', 'split-on', 'node-modules']) {
  if (!options[key]) {
    process.stderr.write(`hf_encode_batch: --${key} is required\n`)
    process.exit(2)
  }
}
const { module: tokenizers } = loadTokenizers(options['node-modules'])
const { tokenizer } = referenceTokenizer(tokenizers, readJson(tokenizerJsonPath(options.tokenizer)))
const documents = readFileSync(options.input, 'utf8').split(unescapeSeparator(options['split-on'])).filter((d) => d.length > 0)
const start = process.hrtime.bigint()
const encodings = await tokenizer.encodeBatch(documents, { addSpecialTokens: true })
const ids = encodings.map((encoding) => encoding.getIds())
const seconds = Number(process.hrtime.bigint() - start) / 1e9
let tokens = 0
for (const list of ids) tokens += list.length
if (options.ids) writeFileSync(options.ids, ids.map((list) => JSON.stringify(Array.from(list))).join('\n') + '\n')
process.stdout.write(JSON.stringify({ seconds, tokens, documents: documents.length }) + '\n')
