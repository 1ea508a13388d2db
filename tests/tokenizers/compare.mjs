#!/usr/bin/env node
// Compares rung's tokenizer.json encoder with Hugging Face `tokenizers`, document by document:
//
//   node compare.mjs --rung-data BIN --tokenizer PATH --corpus FILE
//                    [--documents-separator SEP] [--node-modules DIR]
//
// runs `BIN encode --tokenizer PATH --input FILE [--split-on SEP] --format jsonl --out -` (one JSON
// array of ids per document) and encodes the same documents with the reference library, configured
// as rung encodes (oracle.mjs: the post-processor's tokens are added, added tokens marked "special"
// are never matched in the text). PATH is a tokenizer.json file or a folder holding one. SEP is
// passed to BIN as given and understands the same escapes (\f \n \t \r \\); without it the whole
// file is one document. rung's text reader drops empty documents: when rung-data prints one line
// fewer for each empty document, the non-empty documents are compared (said in the summary). The
// `tokenizers` package is taken from DIR (a node_modules folder) when given, else from this
// folder's node_modules or NODE_PATH.
//
// Exit status: 0 identical (one summary line), 1 the first differing document is reported, 2 a
// usage error, BIN failed or printed something that is not one JSON array of ids per line.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import {
  escapeSeparator,
  loadTokenizers,
  parseOptions,
  readJson,
  referenceTokenizer,
  tokenizerJsonPath,
  unescapeSeparator,
} from './oracle.mjs'

function usage(message) {
  if (message) process.stderr.write(`compare: ${message}\n`)
  process.stderr.write(
    'usage: node compare.mjs --rung-data BIN --tokenizer PATH --corpus FILE ' +
      "[--documents-separator SEP] [--node-modules DIR]\n",
  )
  process.exit(2)
}

function readOptions(argv) {
  const values = parseOptions(
    argv,
    {
      'rung-data': { type: 'string' },
      tokenizer: { type: 'string' },
      corpus: { type: 'string' },
      'documents-separator': { type: 'string' },
      'node-modules': { type: 'string' },
    },
    usage,
  )
  const opts = {
    bin: values['rung-data'],
    tokenizer: values.tokenizer,
    corpus: values.corpus,
    separatorArg: values['documents-separator'],
    nodeModules: values['node-modules'],
  }
  if (!opts.bin || !opts.tokenizer || !opts.corpus) usage('--rung-data, --tokenizer and --corpus are required')
  if (opts.separatorArg !== undefined) {
    try {
      opts.separator = unescapeSeparator(opts.separatorArg)
    } catch (err) {
      usage(err.message)
    }
    if (opts.separator === '') usage('--documents-separator must not be empty')
  }
  return opts
}

const fail = (code, message) => {
  process.stderr.write(`compare: ${message}\n`)
  process.exit(code)
}

// A JSON string of TEXT, cut to at most `max` code points on each side of code point `at`.
function excerpt(chars, at, max = 60) {
  const from = Math.max(0, at - max)
  const to = Math.min(chars.length, at + max)
  return (from > 0 ? '…' : '') + JSON.stringify(chars.slice(from, to).join('')) + (to < chars.length ? '…' : '')
}

function tokenName(original, id) {
  if (id === undefined) return '(none)'
  const name = original.idToToken(id)
  return name === null ? '(no such id)' : JSON.stringify(name)
}

async function main() {
  const opts = readOptions(process.argv.slice(2))
  const tokenizerPath = tokenizerJsonPath(opts.tokenizer)
  let tokenizers, json, reference
  try {
    tokenizers = loadTokenizers(opts.nodeModules).module
    json = readJson(tokenizerPath)
    reference = referenceTokenizer(tokenizers, json)
  } catch (err) {
    fail(2, `${tokenizerPath}: ${err.message}`)
  }
  const text = readFileSync(opts.corpus, 'utf8')
  const documents = opts.separator === undefined ? [text] : text.split(opts.separator)
  for (const [i, doc] of documents.entries()) {
    for (const p of reference.placeholders) {
      if (doc.includes(p)) fail(2, `document ${i} holds the reference's placeholder ${JSON.stringify(p)}; cannot compare`)
    }
  }

  // rung-data
  const args = ['encode', '--tokenizer', opts.tokenizer, '--input', opts.corpus]
  if (opts.separatorArg !== undefined) args.push('--split-on', escapeSeparator(opts.separator))
  args.push('--format', 'jsonl', '--out', '-')
  const started = process.hrtime.bigint()
  const run = spawnSync(opts.bin, args, { maxBuffer: 1 << 30, encoding: 'utf8' })
  const rungSeconds = Number(process.hrtime.bigint() - started) / 1e9
  const command = [opts.bin, ...args].map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(' ')
  if (run.error) fail(2, `cannot run ${command}: ${run.error.message}`)
  if (run.status !== 0) {
    fail(2, `${command} exited with ${run.status ?? `signal ${run.signal}`}; its stderr:\n${run.stderr}`)
  }
  const lines = run.stdout.split('\n')
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  const ours = lines.map((line, i) => {
    let ids
    try {
      ids = JSON.parse(line)
    } catch {
      ids = null
    }
    if (!Array.isArray(ids) || !ids.every((id) => Number.isInteger(id) && id >= 0)) {
      fail(2, `${command}: output line ${i + 1} is not a JSON array of ids: ${JSON.stringify(line.slice(0, 200))}`)
    }
    return ids
  })

  // The reference
  const referenceStarted = process.hrtime.bigint()
  const encodings = await reference.tokenizer.encodeBatch(documents, { addSpecialTokens: true })
  const referenceSeconds = Number(process.hrtime.bigint() - referenceStarted) / 1e9

  // Which documents rung-data printed a line for: every one, or (as rung's text reader, which
  // drops empty documents, does) every non-empty one. Compared in order, the corpus index kept.
  const all = documents.map((_, i) => i)
  const nonEmpty = all.filter((i) => documents[i] !== '')
  const emptyCount = all.length - nonEmpty.length
  const compared = ours.length === all.length ? all : nonEmpty
  const where = `tokenizer ${tokenizerPath}, corpus ${opts.corpus}`
  const n = Math.min(ours.length, compared.length)
  let tokens = 0
  for (let line = 0; line < n; line++) {
    const d = compared[line]
    const want = encodings[d].getIds()
    const got = ours[line]
    let p = 0
    while (p < want.length && p < got.length && want[p] === got[p]) p++
    if (p === want.length && p === got.length) {
      tokens += want.length
      continue
    }
    const doc = documents[d]
    const chars = Array.from(doc)
    const offsets = encodings[d].getOffsets() // in characters (code points)
    // Where the text goes wrong: the start of the reference's token at p (after the previous one
    // for a token of the post-processor, which covers nothing), or the end of the last.
    let at = 0
    if (p < offsets.length) at = offsets[p][0]
    else if (offsets.length > 0) at = offsets[offsets.length - 1][1]
    if (p < offsets.length && offsets[p][0] === 0 && offsets[p][1] === 0 && p > 0) at = offsets[p - 1][1]
    const out = []
    out.push(`compare: MISMATCH in document ${d} of ${documents.length} (line ${line + 1} of rung-data's output; ${where})`)
    out.push(
      `  document: ${chars.length} characters, ${Buffer.byteLength(doc, 'utf8')} UTF-8 bytes; ` +
        `reference ${want.length} ids, rung-data ${got.length} ids; first difference at id position ${p}`,
    )
    const from = Math.max(0, p - 6)
    const to = Math.max(Math.min(Math.max(want.length, got.length), p + 6), p + 1)
    out.push('  pos     reference                            rung-data')
    for (let k = from; k < to; k++) {
      const w = k < want.length ? `${want[k]} ${tokenName(reference.original, want[k])}` : '-'
      const g = k < got.length ? `${got[k]} ${tokenName(reference.original, got[k])}` : '-'
      const mark = k === p ? '>' : k < p ? ' ' : want[k] === got[k] ? ' ' : '*'
      out.push(`  ${mark}${String(k).padEnd(6)} ${w.padEnd(36)} ${g}`)
    }
    const span = p < offsets.length ? ` (the reference's token ${p} covers characters ${offsets[p][0]}..${offsets[p][1]})` : ''
    out.push(`  text around character ${at}${span}:`)
    out.push(`    ${excerpt(chars, at)}`)
    out.push(`  text from character ${at}: ${JSON.stringify(chars.slice(at, at + 40).join(''))}`)
    if (chars.length <= 400) out.push(`  whole document: ${JSON.stringify(doc)}`)
    if (reference.neverMatched.length > 0) {
      out.push(`  (special added tokens never matched in text: ${reference.neverMatched.length}, e.g. ` +
        `${JSON.stringify(reference.neverMatched.slice(0, 3))})`)
    }
    if (compared !== all) out.push(`  (the ${emptyCount} empty documents have no line in rung-data's output and are not compared)`)
    process.stdout.write(out.join('\n') + '\n')
    process.exit(1)
  }
  if (ours.length !== compared.length) {
    process.stdout.write(
      `compare: MISMATCH: ${documents.length} documents in the corpus (split on ` +
        `${opts.separator === undefined ? 'nothing' : JSON.stringify(opts.separator)}), ${nonEmpty.length} not empty; ` +
        `rung-data printed ${ours.length} lines; the first ${n} agree with the ${compared === all ? 'documents' : 'non-empty documents'} (${where})\n`,
    )
    if (ours.length < compared.length) {
      const doc = documents[compared[n]]
      process.stdout.write(`  first document without a line: ${compared[n]}, ${JSON.stringify(doc.slice(0, 120))}${doc.length > 120 ? '…' : ''}\n`)
    }
    process.exit(1)
  }
  const shown = relative(process.cwd(), tokenizerPath)
  process.stdout.write(
    `compare: identical: ${compared.length} documents` +
      (compared === all ? '' : ` (and ${emptyCount} empty ones rung-data skips)`) +
      `, ${tokens} tokens, tokenizer ${shown.startsWith('..') ? tokenizerPath : shown} ` +
      `(rung-data ${rungSeconds.toFixed(2)} s, reference ${referenceSeconds.toFixed(2)} s)\n`,
  )
}

main().catch((err) => fail(2, err && err.stack ? err.stack : String(err)))
