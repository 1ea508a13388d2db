// Shared by this folder's scripts that take options and bench/hf_encode_batch.mjs: reading their
// command lines, finding the `tokenizers` package (Hugging Face's Node binding), reading a
// tokenizer.json, and building the reference encoder configured the way rung encodes: added tokens
// marked "special" are never matched in document text.
import { existsSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const here = dirname(fileURLToPath(import.meta.url))

// A script's options from ARGV (its arguments, without node and the script), read by Node's
// util.parseArgs in strict mode: OPTIONS is parseArgs's `options` ({ name: { type: 'string' or
// 'boolean', default } }), and -h/--help is added to them. No positional arguments. USAGE is the
// script's usage(message): it prints the usage (after the message when given) and exits 2; it is
// called with parseArgs's message on an unknown option, a missing value or a positional argument,
// and with none for -h/--help. A value that starts with "-" (other than "-" itself) is given as
// --name=VALUE. Returns the values by option name (an option given twice: the last).
export function parseOptions(argv, options, usage) {
  let parsed
  try {
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true })
  } catch (err) {
    if (typeof err.code === 'string' && err.code.startsWith('ERR_PARSE_ARGS_')) usage(err.message)
    throw err
  }
  if (parsed.values.help) usage()
  return parsed.values
}

// The `tokenizers` module and the node_modules folder it was found in: NODE_MODULES when given
// (--node-modules), else ordinary resolution from this folder (its own node_modules, the folders
// above it, then NODE_PATH).
export function loadTokenizers(nodeModules) {
  const require = createRequire(join(here, 'package.json'))
  if (nodeModules) {
    const dir = resolve(nodeModules, 'tokenizers')
    if (!existsSync(join(dir, 'package.json'))) {
      throw new Error(`no tokenizers package in ${resolve(nodeModules)} (run npm ci there)`)
    }
    return { module: require(dir), nodeModules: resolve(nodeModules) }
  }
  let main
  try {
    main = require.resolve('tokenizers')
  } catch {
    throw new Error(
      `cannot find the tokenizers package: run \`npm ci\` in ${here}, or pass --node-modules DIR ` +
        '(or set NODE_PATH) to a node_modules folder where it is installed',
    )
  }
  // main is NODE_MODULES/tokenizers/index.js
  return { module: require(main), nodeModules: dirname(dirname(main)) }
}

// PATH is a tokenizer.json file or a folder holding one.
export function tokenizerJsonPath(path) {
  const p = resolve(path)
  if (existsSync(p) && statSync(p).isDirectory()) return join(p, 'tokenizer.json')
  return p
}

// SEP as rung-data's --split-on reads it: \f \n \t \r \\ are escapes, anything else is literal.
export function unescapeSeparator(s) {
  return s.replace(/\\(.)/gs, (whole, e) => {
    switch (e) {
      case 'f': return '\f'
      case 'n': return '\n'
      case 't': return '\t'
      case 'r': return '\r'
      case '\\': return '\\'
      default: throw new Error(`unknown escape ${whole} in separator (known: \\f \\n \\t \\r \\\\)`)
    }
  })
}

// The inverse: SEP written with those escapes.
export function escapeSeparator(s) {
  return s.replace(/[\\\f\n\t\r]/g, (c) => ({ '\\': '\\\\', '\f': '\\f', '\n': '\\n', '\t': '\\t', '\r': '\\r' })[c])
}

// Text that stands in for a special added token in the reference: it must never occur in a
// document (compare.mjs checks).
export function placeholderContent(index) {
  return `\u{10FFFD}rung:special-never-matched:${index}\u{10FFFD}`
}

// rung never matches added tokens marked "special" in document text: "<|endoftext|>" in a document
// is encoded as ordinary characters (Hugging Face's Rust option encode_special_tokens, which the
// Node binding does not expose). This builds that reference from the parsed tokenizer.json `json`:
//
// The library ignores the "id" written beside an added token: it gives a token whose content is in
// the model's vocabulary that vocabulary id, and every other one, in the order of "added_tokens",
// the next id from the vocabulary's size. Simply removing the special entries would renumber the
// non-special tokens after them (Qwen3's "<think>" would move from 151667 to 151653). So a special
// token whose content is in the vocabulary is removed (that changes no other id), and every other
// special token keeps its place with its content replaced by a placeholder that no document holds
// (placeholderContent). The ids of the remaining added tokens are then checked against the file as
// the library loads it unedited. The post-processor is untouched: a TemplateProcessing carries its
// special tokens' ids itself.
//
// Returns { tokenizer, original, edited, neverMatched: [contents], placeholders: [contents] }:
// tokenizer encodes; original (the file loaded unedited) names ids in reports.
export function referenceTokenizer(tokenizers, json) {
  const { Tokenizer } = tokenizers
  const text = JSON.stringify(json)
  const original = Tokenizer.fromString(text)
  const vocab = json.model && json.model.vocab && typeof json.model.vocab === 'object' ? json.model.vocab : {}
  const edited = JSON.parse(text)
  const neverMatched = []
  const placeholders = []
  edited.added_tokens = []
  for (const token of json.added_tokens || []) {
    if (!token.special) {
      edited.added_tokens.push(token)
      continue
    }
    neverMatched.push(token.content)
    if (Object.prototype.hasOwnProperty.call(vocab, token.content)) continue
    const content = placeholderContent(placeholders.length)
    placeholders.push(content)
    edited.added_tokens.push({
      ...token,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
    })
  }
  const tokenizer = Tokenizer.fromString(JSON.stringify(edited))
  for (const token of edited.added_tokens) {
    if (token.special) continue
    const want = original.tokenToId(token.content)
    const got = tokenizer.tokenToId(token.content)
    if (want !== got) {
      throw new Error(
        `emulating "special tokens never matched" changed the id of the added token ` +
          `${JSON.stringify(token.content)}: ${want} in the file as loaded, ${got} after the edit`,
      )
    }
  }
  return { tokenizer, original, edited, neverMatched, placeholders }
}

export function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'))
}
