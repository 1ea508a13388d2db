#!/usr/bin/env node
// Checks the llama2_vocab variant (make_variants.mjs: Llama 2's vocabulary and merges from
// llama-tokenizer-js in the layout transformers writes for meta-llama/Llama-2-7b-hf) by means that
// do not depend on how it was built:
//
//   node check_llama2.mjs --tokenizer DIR/tokenizer.json [--corpus FILE --documents-separator SEP]
//                         [--node-modules DIR]
//
// 1. published Llama 2 ids (text → ids with <s>) against the Hugging Face library on the file;
// 2. llama-tokenizer-js's own test cases (its defaultTests, run with the library's ids in place of
//    its encoder's);
// 3. with --corpus: llama-tokenizer-js's encode (a separate JavaScript BPE over the same data)
//    against the library on every document, the library configured as compare.mjs configures it
//    for rung (oracle.mjs: <s> added, "<s>" "</s>" "<unk>" in the text not matched as special
//    tokens, which llama-tokenizer-js never matches either). Disagreements are listed, not fatal:
//    llama-tokenizer-js is a reimplementation; rung is compared with the library.
//
// Exit status: 0 when 1 and 2 hold, 1 when one does not, 2 on a usage error.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { loadTokenizers, parseOptions, readJson, referenceTokenizer, tokenizerJsonPath, unescapeSeparator } from './oracle.mjs'
import { LLAMA2_KNOWN_IDS } from './make_variants.mjs'

// More published ids, besides those make_variants.mjs checks whenever it writes the file.
const MORE_KNOWN_IDS = [
  // transformers, tests/models/llama/test_tokenization_llama.py, LlamaTokenizationTest.
  // test_tokenizer_integration (hf-internal-testing/llama-tokenizer at revision 0984d031...):
  // the first two of the mixin's integration sequences (the third, "The quick brown fox...", is in
  // LLAMA2_KNOWN_IDS).
  [
    'Transformers (formerly known as pytorch-transformers and pytorch-pretrained-bert) provides ' +
      'general-purpose architectures (BERT, GPT-2, RoBERTa, XLM, DistilBert, XLNet...) for Natural ' +
      'Language Understanding (NLU) and Natural Language Generation (NLG) with over 32+ pretrained ' +
      'models in 100+ languages and deep interoperability between Jax, PyTorch and TensorFlow.',
    [1, 4103, 689, 414, 313, 24784, 368, 2998, 408, 282, 3637, 25350, 29899, 9067, 414, 322, 282, 3637, 25350, 29899,
      1457, 3018, 1312, 29899, 2151, 29897, 8128, 2498, 29899, 15503, 4220, 6956, 1973, 313, 13635, 29911, 29892,
      402, 7982, 29899, 29906, 29892, 1528, 13635, 29911, 29874, 29892, 1060, 26369, 29892, 6652, 309, 29933, 814,
      29892, 1060, 29931, 6779, 11410, 363, 18385, 17088, 7634, 11235, 313, 25103, 29965, 29897, 322, 18385, 17088,
      28203, 313, 25103, 29954, 29897, 411, 975, 29871, 29941, 29906, 29974, 758, 3018, 1312, 4733, 297, 29871,
      29896, 29900, 29900, 29974, 10276, 322, 6483, 1006, 3372, 3097, 1546, 435, 1165, 29892, 10772, 29911, 25350,
      322, 323, 6073, 17907, 29889],
  ],
  [
    'BERT is designed to pre-train deep bidirectional representations from unlabeled text by jointly ' +
      'conditioning on both left and right context in all layers.',
    [1, 350, 20161, 338, 8688, 304, 758, 29899, 14968, 6483, 21000, 8684, 284, 22540, 515, 443, 29880, 24025, 1426,
      491, 14002, 368, 4195, 292, 373, 1716, 2175, 322, 1492, 3030, 297, 599, 15359, 29889],
  ],
  // Same file, LlamaIntegrationTest.integration_tests (hf-internal-testing/llama-tokenizer-non-normalized).
  ['The following string should be properly encoded: Hello.', [1, 450, 1494, 1347, 881, 367, 6284, 18511, 29901, 15043, 29889]],
  ['But ird and ปี   ird   ด', [1, 1205, 29871, 1823, 322, 29871, 31010, 30691, 1678, 1823, 1678, 30718]],
  // Bumblebee (elixir-nx), test/bumblebee/text/llama_tokenizer_test.exs, hf-internal-testing/llama-tokenizer.
  ['Hello everyobdy, how are you?', [1, 15043, 1432, 711, 4518, 29892, 920, 526, 366, 29973]],
]

function usage(message) {
  if (message) process.stderr.write(`check_llama2: ${message}\n`)
  process.stderr.write(
    'usage: node check_llama2.mjs --tokenizer PATH [--corpus FILE --documents-separator SEP] [--node-modules DIR]\n',
  )
  process.exit(2)
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i])

async function main() {
  const values = parseOptions(
    process.argv.slice(2),
    {
      tokenizer: { type: 'string' },
      corpus: { type: 'string' },
      'documents-separator': { type: 'string' },
      'node-modules': { type: 'string' },
    },
    usage,
  )
  const separator = values['documents-separator']
  const opts = {
    tokenizer: values.tokenizer,
    corpus: values.corpus,
    separator: separator === undefined ? undefined : unescapeSeparator(separator),
    nodeModules: values['node-modules'],
  }
  if (!opts.tokenizer) usage('--tokenizer is required')
  const { module: tokenizers, nodeModules } = loadTokenizers(opts.nodeModules)
  const path = tokenizerJsonPath(opts.tokenizer)
  const library = tokenizers.Tokenizer.fromFile(path)
  const { default: js } = await import(pathToFileURL(join(nodeModules, 'llama-tokenizer-js', 'llama-tokenizer.js')).href)
  const encode = async (text) => (await library.encode(text, null, { addSpecialTokens: true })).getIds()
  let failed = 0

  // 1. Published ids.
  const known = [...LLAMA2_KNOWN_IDS, ...MORE_KNOWN_IDS]
  for (const [text, want] of known) {
    const got = await encode(text)
    if (!same(got, want)) {
      failed++
      process.stdout.write(`published ids: ${JSON.stringify(text)}: library [${got}], published [${want}]\n`)
    }
  }
  process.stdout.write(`published ids: ${known.length - failed} of ${known.length} texts give the published ids\n`)

  // 2. llama-tokenizer-js's own test cases, with the library's ids. Its tests call encode
  // synchronously, so they run twice: first with its own encoder, to collect the texts, then with
  // the library's ids for them. Its decode checks use its own decoder; the library's decode is
  // checked here to give each text back.
  // (Its tests print a line when they pass: kept out of this output.)
  const quietly = (f) => {
    const log = console.log
    console.log = () => {}
    try {
      return f()
    } finally {
      console.log = log
    }
  }
  const texts = []
  quietly(() => js.defaultTests({
    encode: (text) => (texts.push(text), js.encode(text)),
    decode: (...args) => js.decode(...args),
  }))
  const ids = new Map()
  let roundTrips = 0
  for (const text of texts) {
    ids.set(text, await encode(text))
    if ((await library.decode(ids.get(text), true)) === text) roundTrips++
  }
  try {
    quietly(() => js.defaultTests({ encode: (text) => ids.get(text), decode: (...args) => js.decode(...args) }))
    process.stdout.write(
      `llama-tokenizer-js's tests: its ${texts.length} expected encodings all equal the library's ids on the file; ` +
        `the library decodes ${roundTrips} of them back to their text\n`,
    )
  } catch (err) {
    failed++
    process.stdout.write(`llama-tokenizer-js's tests: with the library's ids: ${err.message}\n`)
  }
  if (roundTrips !== texts.length) failed++

  // 3. The corpus: llama-tokenizer-js's encode against the library, as compare.mjs configures it.
  if (opts.corpus) {
    const text = readFileSync(opts.corpus, 'utf8')
    const documents = opts.separator === undefined ? [text] : text.split(opts.separator)
    const reference = referenceTokenizer(tokenizers, readJson(path))
    const encodings = await reference.tokenizer.encodeBatch(documents, { addSpecialTokens: true })
    const differing = []
    let tokens = 0
    for (const [d, doc] of documents.entries()) {
      const want = encodings[d].getIds()
      // llama-tokenizer-js gives [] for an empty text (no <s>); the library [1].
      const got = doc === '' ? [1] : js.encode(doc)
      if (same(got, want)) tokens += want.length
      else differing.push(d)
    }
    const emptyCount = documents.filter((doc) => doc === '').length
    process.stdout.write(
      `corpus: llama-tokenizer-js and the library agree on ${documents.length - differing.length} of ` +
        `${documents.length} documents (${tokens} tokens; the ${emptyCount} empty ones counted as agreeing: ` +
        `llama-tokenizer-js gives [] for them, the library [1])\n`,
    )
    for (const d of differing) {
      const doc = documents[d]
      const want = encodings[d].getIds()
      const got = js.encode(doc)
      let p = 0
      while (p < want.length && p < got.length && want[p] === got[p]) p++
      const name = (id) => (id === undefined ? '-' : `${id} ${JSON.stringify(reference.original.idToToken(id))}`)
      const show = (list) => list.slice(Math.max(0, p - 2), p + 4).map(name).join(', ')
      process.stdout.write(
        `  document ${d}: ${Array.from(doc).length} characters (${doc.length} UTF-16 units), library ${want.length} ids, ` +
          `llama-tokenizer-js ${got.length}; first difference at id ${p}\n` +
          `    library:            ... ${show(want)}\n` +
          `    llama-tokenizer-js: ... ${show(got)}\n`,
      )
    }
  }
  process.exit(failed ? 1 : 0)
}

main().catch((err) => {
  process.stderr.write(`check_llama2: ${err && err.stack ? err.stack : err}\n`)
  process.exit(2)
})
