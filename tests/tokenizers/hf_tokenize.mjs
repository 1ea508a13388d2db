#!/usr/bin/env node
// Test-only reference tokenizer: encodes text with Hugging Face `tokenizers`
// (the official Node binding, a native build of the Rust library) so rung's
// own tokenizer.json encoder can be compared id for id.
//
//   node hf_tokenize.mjs --tokenizer PATH/tokenizer.json --text FILE
//                        [--documents-separator SEP] [--add-special-tokens]
//     prints one JSON array of id arrays, one per document. FILE is read as
//     UTF-8. Documents are split on SEP (escapes \f \n \r \t \0 \\ \xHH
//     \uHHHH are understood, so --documents-separator '\f' means form feed);
//     without SEP the whole file is one document. Special tokens (BOS etc.
//     from the post-processor) are added only with --add-special-tokens.
//
//   node hf_tokenize.mjs --list
//     prints the absolute path of every tokenizer.json shipped by the
//     packages installed under this folder's node_modules, one per line.

import { readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { parseOptions } from './oracle.mjs'

const here = dirname(fileURLToPath(import.meta.url))

function usage(message) {
  if (message) process.stderr.write(`hf_tokenize: ${message}\n`)
  process.stderr.write(
    'usage: node hf_tokenize.mjs --tokenizer PATH/tokenizer.json --text FILE ' +
      "[--documents-separator SEP] [--add-special-tokens]\n" +
      '       node hf_tokenize.mjs --list\n',
  )
  process.exit(2)
}

function unescape(s) {
  return s.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)/g, (_, e) => {
    switch (e[0]) {
      case 'f': return '\f'
      case 'n': return '\n'
      case 'r': return '\r'
      case 't': return '\t'
      case '0': return '\0'
      case '\\': return '\\'
      case 'x':
      case 'u': return String.fromCharCode(parseInt(e.slice(1), 16))
      default: usage(`unknown escape \\${e} in --documents-separator`)
    }
  })
}

export function listTokenizerJsons(root = join(here, 'node_modules')) {
  const found = []
  const walk = (dir) => {
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const e of entries) {
      const p = join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.name === 'tokenizer.json' && statSync(p).isFile()) found.push(resolve(p))
    }
  }
  walk(root)
  return found.sort()
}

function readOptions(argv) {
  const values = parseOptions(
    argv,
    {
      tokenizer: { type: 'string' },
      text: { type: 'string' },
      'documents-separator': { type: 'string' },
      'add-special-tokens': { type: 'boolean', default: false },
      list: { type: 'boolean', default: false },
    },
    usage,
  )
  const separator = values['documents-separator']
  return {
    tokenizer: values.tokenizer,
    text: values.text,
    separator: separator === undefined ? undefined : unescape(separator),
    addSpecialTokens: values['add-special-tokens'],
    list: values.list,
  }
}

async function main() {
  const opts = readOptions(process.argv.slice(2))
  if (opts.list) {
    for (const p of listTokenizerJsons()) process.stdout.write(p + '\n')
    return
  }
  if (!opts.tokenizer || opts.text === undefined) usage('--tokenizer and --text are required')
  if (opts.separator === '') usage('--documents-separator must not be empty')

  // The binding is CommonJS; load it from this folder's node_modules.
  const { Tokenizer } = createRequire(join(here, 'package.json'))('tokenizers')
  const tokenizer = Tokenizer.fromFile(resolve(opts.tokenizer))

  const text = readFileSync(opts.text, 'utf8')
  const documents = opts.separator === undefined ? [text] : text.split(opts.separator)
  const encodeOptions = { addSpecialTokens: opts.addSpecialTokens }
  const encodings =
    documents.length === 1
      ? [await tokenizer.encode(documents[0], null, encodeOptions)]
      : await tokenizer.encodeBatch(documents, encodeOptions)
  process.stdout.write(JSON.stringify(encodings.map((e) => e.getIds())) + '\n')
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`hf_tokenize: ${err && err.stack ? err.stack : err}\n`)
    process.exit(1)
  })
}
