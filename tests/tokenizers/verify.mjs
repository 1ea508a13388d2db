#!/usr/bin/env node
// Sanity check of the oracle: encodes a varied text with every tokenizer.json
// that `hf_tokenize.mjs --list` finds (through hf_tokenize.mjs itself, as a
// test would), decodes the ids back with the library, and checks the round
// trip, that encodeBatch agrees with encode, and that the ids are in range.
// Exits 1 on any failure.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { listTokenizerJsons } from './hf_tokenize.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const { Tokenizer } = createRequire(join(here, 'package.json'))('tokenizers')

const documents = [
  'Hello, world! The quick brown fox jumps over the lazy dog.',
  'Accents: café, naïve, Ångström, Straße, ÉCOLE; combining e\u0301 vs é.',
  'CJK: 你好，世界。日本語のテキスト。한국어 문장.',
  'Emoji: 👍 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🇫🇷',
  'Digits: 1 12 123 1234 12345 3.14159 2026-12-05 0007',
  'CRLF line one\r\nline two\r\n\r\nline four\n',
  'Whitespace:   three spaces,\ttab,\t\t two tabs,      six spaces   \n\n\n   ',
  "Contractions: don't, I'm, we'll, they've, she'd, it's, DON'T, You'RE",
  'word: ' + 'abcdefghij'.repeat(30),
  ' leading space and trailing space ',
  '',
]
const dir = mkdtempSync(join(tmpdir(), 'hf-tokenize-'))
const textFile = join(dir, 'text.txt')
writeFileSync(textFile, documents.join('\f'))

let failures = 0
const fail = (msg) => { failures++; console.log(`  FAIL ${msg}`) }
for (const path of listTokenizerJsons()) {
  console.log(path)
  const run = (...extra) => JSON.parse(execFileSync(process.execPath,
    [join(here, 'hf_tokenize.mjs'), '--tokenizer', path, '--text', textFile, ...extra], { encoding: 'utf8' }))
  const batch = run('--documents-separator', '\\f')
  const batchSpecial = run('--documents-separator', '\\f', '--add-special-tokens')
  const whole = run()
  const tokenizer = Tokenizer.fromFile(path)
  const size = tokenizer.getVocabSize(true)
  // A tokenizer whose normalizer is NFC round-trips to the NFC form of the text.
  const nfc = JSON.parse(readFileSync(path, 'utf8')).normalizer?.type === 'NFC'
  if (batch.length !== documents.length) fail(`${batch.length} documents, expected ${documents.length}`)
  if (whole.length !== 1) fail('no separator should give one document')
  let tokens = 0
  for (const [i, doc] of documents.entries()) {
    const ids = batch[i]
    tokens += ids.length
    if (ids.some((id) => !Number.isInteger(id) || id < 0 || id >= size)) fail(`doc ${i}: id out of range`)
    const single = (await tokenizer.encode(doc, null, { addSpecialTokens: false })).getIds()
    if (JSON.stringify(single) !== JSON.stringify(ids)) fail(`doc ${i}: encodeBatch differs from encode`)
    if (doc !== '' && ids.length === 0) fail(`doc ${i}: no tokens`)
    const back = await tokenizer.decode(ids, false)
    // SentencePiece-style decoders strip the one space the normalizer prepends.
    const expected = nfc ? doc.normalize('NFC') : doc
    if (back !== expected) fail(`doc ${i}: round trip ${JSON.stringify(back)} != ${JSON.stringify(expected)}`)
    const extra = batchSpecial[i].length - ids.length
    if (i === 0) console.log(`  --add-special-tokens adds ${extra} id(s): ${JSON.stringify(batchSpecial[i].slice(0, extra))}`)
  }
  console.log(`  ${documents.length} documents, ${tokens} tokens, vocab with added tokens ${size}; ` +
    `first: ${JSON.stringify(batch[0].slice(0, 8))}`)
}
console.log(failures ? `${failures} failure(s)` : 'all ok')
process.exit(failures ? 1 : 0)
