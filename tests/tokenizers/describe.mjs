#!/usr/bin/env node
// Prints, for each tokenizer.json (arguments, or every one `hf_tokenize.mjs
// --list` finds), the components rung's encoder has to implement, as a
// Markdown table.
import { readFileSync } from 'node:fs'
import { relative, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { listTokenizerJsons } from './hf_tokenize.mjs'

const here = dirname(fileURLToPath(import.meta.url))

// A component's type; Sequence components list their members' types.
function kind(c) {
  if (c === null || c === undefined) return 'none'
  const members = c.normalizers || c.pretokenizers || c.decoders || c.processors
  if (c.type === 'Sequence' && Array.isArray(members)) return `Sequence[${members.map(kind).join(', ')}]`
  return c.type
}

function mergesForm(merges) {
  if (!Array.isArray(merges) || merges.length === 0) return 'none'
  const first = merges[0]
  if (typeof first === 'string') return 'strings "a b"'
  if (Array.isArray(first)) return 'pairs [a, b]'
  return typeof first
}

const files = process.argv.length > 2 ? process.argv.slice(2) : listTokenizerJsons()
const rows = [['tokenizer.json', 'model.type', 'vocab', 'added', 'normalizer', 'pre_tokenizer',
  'post_processor', 'decoder', 'byte_fallback', 'ignore_merges', 'merges']]
for (const f of files) {
  const t = JSON.parse(readFileSync(f, 'utf8'))
  const m = t.model || {}
  rows.push([
    relative(here, f),
    m.type ?? 'none',
    String(Object.keys(m.vocab || {}).length),
    String((t.added_tokens || []).length),
    kind(t.normalizer),
    kind(t.pre_tokenizer),
    kind(t.post_processor),
    kind(t.decoder),
    String(m.byte_fallback ?? 'absent'),
    String(m.ignore_merges ?? 'absent'),
    `${mergesForm(m.merges)} (${(m.merges || []).length})`,
  ])
}
for (const [i, r] of rows.entries()) {
  console.log(`| ${r.join(' | ')} |`)
  if (i === 0) console.log(`|${r.map(() => '---').join('|')}|`)
}
