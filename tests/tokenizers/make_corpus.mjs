#!/usr/bin/env node
// The corpus compare.mjs encodes: documents separated by form feed (so no document holds one),
// valid UTF-8 without noncharacters, the same bytes on every run (a seeded generator; no clock, no
// Math.random).
//
//   node make_corpus.mjs --out FILE [--licenses DIR] [--austen FILE]
//
// It holds:
//  - every license text under DIR (default /usr/share/common-licenses, Debian's; symbolic links,
//    which there name duplicates, are skipped), each paragraph (split at blank lines) a document and
//    each whole file one more; a form feed in a file (the GPL-1 and LGPL-2 texts have page breaks)
//    becomes a vertical tab in the whole-file document and a paragraph break in the others;
//  - with --austen, the first two chapters of each book of rung's builtin corpus (austen.txt, as
//    deploy/fetch-builtin-corpus.sh writes it: chapters separated by form feed). Not by default:
//    core/data/builtin_corpus.cc embeds no text, it only finds that file at run time;
//  - several hundred generated documents: mixed scripts, NFC and NFD combining marks, NFKC
//    compatibility characters, emoji (ZWJ sequences, skin tones, flags, keycaps, tag sequences),
//    runs of every Unicode White_Space character but form feed (and of characters that look like
//    it but are not), line endings, digit runs of many lengths in many scripts, contractions in
//    every case (with the long s and curly apostrophes), long words (300 to 5000 letters), long
//    punctuation runs, leading and trailing spaces, empty documents, documents of only whitespace,
//    the literal text of special tokens and of the non-special added tokens of the Qwen3 file and
//    of make_variants.mjs's variants, "▁" (U+2581), and byte-fallback material (rare CJK, emoji,
//    private use, control characters) for the llama2 file.
import { lstatSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { GPT2_ADDED, SPM_ADDED } from './make_variants.mjs'
import { parseOptions } from './oracle.mjs'

// mulberry32: a small seeded generator.
function generator(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)) // lo..hi inclusive
  const pick = (list) => list[Math.floor(next() * list.length)]
  const chance = (p) => next() < p
  return { next, int, pick, chance }
}
const R = generator(0x72756e67) // "rung"

const cp = (...codes) => String.fromCodePoint(...codes)
const range = (lo, hi) => Array.from({ length: hi - lo + 1 }, (_, i) => cp(lo + i))
const repeat = (n, f) => Array.from({ length: n }, (_, i) => f(i)).join('')

// Words of many scripts.
const WORDS = {
  english: 'the of and to in is that it was for on are as with his they at be this from have or by one had not but what all were when we there can an your which their said if do will each about how up out them then she many some so these would other into has more her two like him see time could no make than first been its who now people my made over did down only way find use may water long little very after words called just where most know'.split(' '),
  accented: 'café naïve Ångström Straße ÉCOLE façade jalapeño crème brûlée São Paulo Zürich Kraków Łódź Dvořák Ærøskøbing Þórshöfn ğüşıöç İstanbul Ñandú coöperate résumé piñata Œuvre Ÿ ǅ ǈ ǋ ĳssel'.split(' '),
  greek: 'Καλημέρα κόσμε ΑΒΓΔ αβγδ λόγος φιλοσοφία Ἀθῆναι ὁ ἄνθρωπος ΣΊΣΥΦΟΣ σοφός ς ϐ ϑ ϕ'.split(' '),
  cyrillic: 'Привет мир Съешь же ещё этих мягких французских булок да выпей чаю ЁЖИК ёжик Україна Ґанок Српски Ђорђе'.split(' '),
  arabic: 'مرحبا بالعالم اللغة العربية كتاب مكتبة السلام عليكم ﷺ ﻻ'.split(' '),
  hebrew: 'שלום עולם עברית סֵפֶר בְּרֵאשִׁית ירושלים'.split(' '),
  devanagari: 'नमस्ते दुनिया हिन्दी भाषा संस्कृतम् क्षत्रिय ज्ञान'.split(' '),
  thai: 'สวัสดีชาวโลก ภาษาไทย กรุงเทพมหานคร ไม่เป็นไร'.split(' '),
  cjk: '你好世界 中文文本 漢字 日本語 東京都 北京 人工智能 自然语言处理 龘 靐 齉'.split(' '),
  hangul: '안녕하세요 세계 한국어 문장 서울특별시 훈민정음 똠얌꿍'.split(' '),
  kana: 'こんにちは カタカナ ひらがな ありがとう コンピューター ｶﾞｷﾞｸﾞ ヴァイオリン ゟ ヿ'.split(' '),
  rare: [cp(0x20000), cp(0x2a6a5), cp(0x2b740) + cp(0x2b741), cp(0x30000), '𝔘𝔫𝔦𝔠𝔬𝔡𝔢', '𝐁𝐨𝐥𝐝', '𓀀𓀁', '𐌰𐌱𐌲', cp(0xe000) + cp(0xf8ff), cp(0xf0000), cp(0x10fffd)],
}
const ALL_WORDS = Object.values(WORDS).flat()

// NFKC-sensitive and NFC-sensitive material.
const COMPAT = ['ﬁ', 'ﬂ', 'ﬀ', 'ﬃ', 'ＡＢＣ', 'ｈｅｌｌｏ', '１２３', '²', '³', '¹', '⁴', '₅', '①', '⑳', 'Ⅻ', 'ⅷ', '½', '¾', '№', '™', '℡', '㎞', '㍿', 'ｶﾞ', 'ﾊﾟ', '\u2126', '\u212b', '\u212a', 'ſ', 'ẛ', 'µ', '\u00a0', '\u2002', '\u3000', '…', '‥', '¨', '´', '¸', 'Ǆ', 'ǲ', 'ŉ', 'ﹰ', 'ﺀ', '︵', '︙', '⑴', '⒜', '㈱', '🄰', '𝟘𝟙𝟚']
const COMBINING = range(0x300, 0x36f).concat(['\u0483', '\u05b0', '\u0651', '\u093c', '\u0e31', '\u1ab0', '\u20d0', '\u302a', '\ufe20'])

// Emoji.
const EMOJI = [
  '😀', '👍', '👍🏻', '👍🏽', '👍🏿', '❤️', '❤', '☺️', '✌🏾', '🫠', '🧑‍💻', '👩‍❤️‍💋‍👨', '👨‍👩‍👧‍👦', '👩🏽‍🚀', '🏳️‍🌈', '🏴‍☠️',
  '🇫🇷', '🇯🇵', '🇺🇸', '🇩🇪🇫🇷', '🇦', '1️⃣', '#️⃣', '*️⃣', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '🏴󠁧󠁢󠁥󠁮󠁧󠁿', '👁‍🗨', '🐈‍⬛', '🧔🏻‍♂️', '©️', '™️', '\u200d', '\ufe0f',
]

// Every White_Space character but form feed (U+000C), and some that are not White_Space.
const WHITESPACE = ['\t', '\n', '\u000b', '\r', ' ', '\u0085', '\u00a0', '\u1680', ...range(0x2000, 0x200a), '\u2028', '\u2029', '\u202f', '\u205f', '\u3000']
const NOT_WHITESPACE = ['\u200b', '\u200c', '\u200d', '\u2060', '\u180e', '\ufeff', '\u001c', '\u001d', '\u001e', '\u001f', '\u00ad']
const LINE_ENDINGS = ['\n', '\r\n', '\r', '\n\r', '\r\r\n', '\n\n', '\r\n\r\n', '\n\n\n']

// Digits.
const DIGIT_SETS = [
  range(0x30, 0x39), // ASCII
  range(0x660, 0x669), // Arabic-Indic
  range(0x6f0, 0x6f9), // extended Arabic-Indic
  range(0x966, 0x96f), // Devanagari
  range(0xe50, 0xe59), // Thai
  range(0xff10, 0xff19), // fullwidth
  ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'], // superscripts (No)
  range(0x2080, 0x2089), // subscripts (No)
  range(0x1d7ce, 0x1d7d7), // mathematical bold digits (Nd)
  range(0x2160, 0x216b), // Roman numerals (Nl)
  range(0x2460, 0x2473), // circled numbers (No)
  ['½', '⅓', '¼', '⅞', '〇', '零', '一', '二', '三'],
]
const digits = (n, set = DIGIT_SETS[0]) => repeat(n, () => R.pick(set))

// Special-token text: none of it may be matched as a special token by rung.
const SPECIAL_TEXT = ['<|endoftext|>', '<s>', '</s>', '<unk>', '<|begin_of_text|>', '<|end_of_text|>', '<|reserved_special_token_0|>',
  '<|reserved_special_token_250|>', '<|im_start|>', '<|im_end|>', '<|vision_pad|>', '<|mask|>']
// Non-special added tokens: matched (Qwen3's, and the variants').
const QWEN3_ADDED = ['<tool_call>', '</tool_call>', '<|fim_prefix|>', '<|fim_middle|>', '<|fim_suffix|>', '<|fim_pad|>', '<|repo_name|>',
  '<|file_sep|>', '<tool_response>', '</tool_response>', '<think>', '</think>']
const VARIANT_ADDED = [...new Set([...GPT2_ADDED, ...SPM_ADDED].map((t) => t.content))]
const TOKEN_TEXT = [...SPECIAL_TEXT, ...QWEN3_ADDED, ...VARIANT_ADDED, '▁<n>', 'No7', '"Q', 'ffz', 'fix', '<think', 'think>', '<|endoftext|', '<<think>>', '<|im_start|>>']

const PUNCT = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~¡¿«»‹›“”‘’„‚–—―…·•′″‰§¶†‡※、。，．！？；：「」『』【】〈〉《》'.split('')
const APOSTROPHES = ["'", '’', 'ʼ', '‘', '′', '＇']
const CONTRACTIONS = ['s', 't', 're', 've', 'm', 'll', 'd', 'S', 'T', 'RE', 'VE', 'M', 'LL', 'D', 'Re', 'rE', 'Ve', 'vE', 'Ll', 'lL', 'ſ', 'ſt', 'İ', 'K']

const documents = []
const add = (text) => documents.push(text)

// A word from any of the pools.
function word() {
  const r = R.next()
  if (r < 0.45) return R.pick(WORDS.english)
  if (r < 0.55) return R.pick(WORDS.accented)
  if (r < 0.6) return R.pick(WORDS.accented).normalize('NFD')
  if (r < 0.85) return R.pick(ALL_WORDS)
  if (r < 0.88) return R.pick(COMPAT)
  if (r < 0.91) return R.pick(EMOJI)
  if (r < 0.94) return digits(R.int(1, 12), R.pick(DIGIT_SETS))
  if (r < 0.96) return R.pick(WORDS.english) + R.pick(APOSTROPHES) + R.pick(CONTRACTIONS)
  if (r < 0.98) return R.pick(TOKEN_TEXT)
  return R.pick(WORDS.english) + repeat(R.int(1, 3), () => R.pick(COMBINING))
}
function separator() {
  const r = R.next()
  if (r < 0.6) return ' '
  if (r < 0.7) return R.pick(PUNCT) + ' '
  if (r < 0.78) return R.pick(LINE_ENDINGS)
  if (r < 0.86) return repeat(R.int(1, 4), () => R.pick(WHITESPACE))
  if (r < 0.9) return R.pick(NOT_WHITESPACE)
  if (r < 0.94) return ''
  return repeat(R.int(2, 6), () => ' ')
}
function mixed(words) {
  let s = ''
  for (let i = 0; i < words; i++) s += word() + separator()
  return s
}

// (a) license texts
function licenses(dir) {
  let names
  try {
    names = readdirSync(dir).sort()
  } catch (err) {
    process.stderr.write(`make_corpus: no license texts (${err.message}); skipped\n`)
    return 0
  }
  let files = 0
  for (const name of names) {
    const path = join(dir, name)
    const stat = lstatSync(path)
    if (stat.isSymbolicLink() || !stat.isFile()) continue
    const text = readFileSync(path, 'utf8')
    files++
    for (const paragraph of text.split(/\n(?:[ \t\f\v\r]*\n)+/)) add(paragraph.replaceAll('\f', '\n'))
    add(text.replaceAll('\f', '\v'))
  }
  return files
}

// (b) the builtin corpus, when given: the first two chapters of each book.
function austen(path) {
  let text
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    process.stderr.write(`make_corpus: --austen ${path}: ${error.message} (the builtin corpus: run \`make corpus\` first)\n`)
    process.exit(2)
  }
  const chapters = text.split('\f')
  // A book's front matter is a short document starting with its title; take the two documents
  // after each one.
  let taken = 0
  for (let i = 0; i < chapters.length; i++) {
    if (i === 0 || !/^\n?CHAPTER|^\n?Chapter/.test(chapters[i])) {
      for (const c of chapters.slice(i + 1, i + 3)) {
        add(c)
        taken++
      }
    }
  }
  return taken
}

// (c) generated documents
function generated() {
  // Empty documents and documents of only whitespace.
  add('')
  add(' ')
  add('     ')
  add('\n')
  add('\r\n')
  add('\t')
  add('')
  add(' \n \n ')
  add('\u00a0')
  add('\u3000\u3000')
  for (const w of [...WHITESPACE, ...NOT_WHITESPACE]) add(w)
  add(WHITESPACE.join(''))
  add(repeat(300, () => ' '))
  add('')

  // Leading and trailing spaces around plain text.
  for (const pad of [' ', '  ', '\t', '\n', '\r\n', ' \n', '\n ', '\u00a0', '\u3000', '   \t\n']) {
    add(pad + 'Hello world' + pad)
    add(pad + 'Hello' + pad + 'world')
    add('x' + pad)
    add(pad + 'x')
  }

  // Whitespace runs of every kind, mixed with newlines, tabs and CRLF.
  for (let i = 0; i < 40; i++) {
    let s = ''
    for (let k = 0; k < 30; k++) {
      s += R.pick(WORDS.english)
      const n = R.int(1, 12)
      s += repeat(n, () => (R.chance(0.3) ? R.pick(LINE_ENDINGS) : R.chance(0.5) ? R.pick(WHITESPACE) : ' '))
      if (R.chance(0.2)) s += R.pick(PUNCT)
    }
    add(s)
  }
  for (const w of WHITESPACE) {
    add(`a${w}b${w}${w}c ${w}d${w} e${w}\n${w}f${w}${w}${w}`)
    add(`${w}${w}leading and trailing${w}${w}`)
  }

  // Line endings.
  add('line one\r\nline two\r\n\r\nline four\r\n')
  add('old mac\rline\r\rend\r')
  add('mixed\n\r\n\r\n\n\rend  \n  \n\t\n')
  add('a \n b  \n\n  c\t\n\td')
  add('!!!\r\n???\n\n...\r\r\n')

  // Digits.
  for (const set of DIGIT_SETS) {
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 31, 32, 33, 64, 100]) {
      add(`${digits(n, set)} ${digits(n, set)}x${digits(n, set)} ${digits(n, set)}.${digits(R.int(1, 5), set)}`)
    }
  }
  add('Pi is 3.14159265358979323846, e is 2.718281828; 1,000,000 and 1 000 000 and 1.000.000,00; +44 (0)20 7946 0958')
  add('v1.2.3-rc4 0x1F 0b1010 1e-10 -42 +7 007 2026-12-05T13:45:00Z 12:30 50% $19.99 €5 £3 ¥100 1/2 3×4 2²')
  add(digits(5000))
  add(digits(1000, DIGIT_SETS[1]) + digits(1000, DIGIT_SETS[5]))
  add('abc123def4567ghi89012jkl ١٢٣abc٤٥٦ ０１２abc ²³¹ x²+y² H₂O ⅻ ⑴⑵ ①②③')

  // Contractions in every case.
  {
    let s = ''
    for (const w of ['it', 'IT', 'we', 'WE', 'they', 'THEY', 'I', 'don', 'DON', 'can', 'You', 'sHe']) {
      for (const a of APOSTROPHES) for (const c of CONTRACTIONS) s += `${w}${a}${c} `
      s += '\n'
    }
    add(s)
  }
  add("'s 's 'S 'll 'LL 'Re 're 'rE ' s 'ſ 'ſt ''s 's's 'ss 'sss 'lll x's's don't've ' ''")
  add("don't I'm we'll they've she'd it's DON'T You'RE I'LL WE'VE SHE'D IT'S Peter's PETER'S")
  add("don’t I’m we’ll they’ve it’s DON’T it‘s it′s it＇s it`s")
  add("'tis 'twas 'Tis o'clock rock'n'roll y'all ma'am '90s '\n's ' 's")
  add("L'homme l'été aujourd'hui d'Artagnan qu'il n'est s'il")

  // Long words: 300 to 5000 letters.
  for (const n of [300, 301, 512, 777, 1000, 1024, 2048, 3333, 5000]) {
    add(repeat(n, () => String.fromCharCode(97 + R.int(0, 25))))
  }
  add(repeat(4000, () => 'a'))
  add(repeat(1000, () => 'ab'))
  add(repeat(600, () => R.pick(['é', 'ü', 'ø', 'ß', 'ñ', 'ç'])))
  add(repeat(500, () => 'e\u0301'))
  add(repeat(1500, () => R.pick(WORDS.cjk)))
  add(repeat(400, () => R.pick(WORDS.hangul)))
  add(repeat(300, () => R.pick(WORDS.thai)))
  add(repeat(300, () => R.pick(EMOJI)))
  add('Supercalifragilisticexpialidocious ' + repeat(5, () => 'pneumonoultramicroscopicsilicovolcanoconiosis'))
  add('▁' + repeat(700, () => String.fromCharCode(65 + R.int(0, 25))))

  // Long punctuation runs.
  for (const c of ['!', '.', '-', '=', '*', '#', '~', '_', '/', '\\', '<', '>', '?', '"', "'", '…', '—', '。', '！']) {
    add(`${c.repeat(R.int(10, 60))} word ${c.repeat(R.int(100, 2000))}\n${c.repeat(3)}\r\n${c}`)
  }
  add(repeat(1500, () => R.pick(PUNCT)))
  add('<<<>>> ((( ))) [[[ ]]] {{{ }}} ``` ~~~ !!!??? ?!?! ...\n\n--- *** ___ ||| :: ;; ,, ^^^ %% $$$')

  // Special-token text (never matched as special tokens) and non-special added tokens (matched).
  for (const t of TOKEN_TEXT) {
    add(t)
    add(` ${t} `)
    add(`x${t}y`)
    add(`Hello ${t}world ${t} again${t}\n${t}\n\n${t}${t}  ${t}\t${t}`)
    add(`${t}Hello`)
    add(`  ${t}  \n  `)
  }
  {
    let s = ''
    for (let i = 0; i < 400; i++) {
      s += R.pick(TOKEN_TEXT)
      s += R.pick(['', ' ', '  ', '\n', ' \n ', 'a', 'word ', ' word', '_', '1', 'é', '.', '\t', '\u00a0', '\u3000'])
    }
    add(s)
  }
  add('<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHello!<|im_end|>\n<|endoftext|>')
  add('<s>[INST] What is 2+2? [/INST] 4</s><s>[INST] And 3+3? [/INST] 6</s>')
  add('<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|end_of_text|>')
  add('<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n</tool_call>\n<tool_response>ok</tool_response>')
  add('<|fim_prefix|>def f(x):\n    <|fim_suffix|>\n    return y<|fim_middle|>y = x * 2<|fim_pad|><|repo_name|>rung<|file_sep|>a.py')
  // Single-word, lstrip and rstrip contexts.
  add('XYZ aXYZ XYZb _XYZ XYZ_ 1XYZ XYZ1 éXYZ XYZé .XYZ. (XYZ) XYZW XYZWXYZ XYZXYZ XYZ\nXYZ\tXYZ XYZ\u00a0XYZ XYZ\u3000')
  add('[w] a[w] [w]b  [w]  \n[w]\n x [w] y [w][w] ,[w], é[w] 中[w]中')
  add('a <tool>b a  \n\t<tool>  b <tool><tool>  <tool>\n\n<tool>s')
  add('x END  y x END\n\ny x  END END END\tEND\r\nEND. xEND ENDx  END')
  add('<both>  <both>a <both> b\n<both>\n  x  <both>  y<both><both>')
  add('№7 No7 No 7 №77 ｎｏ７ №７ «raw» « raw » «RAW» ``Q "Q ``q ``` Q ```Q ﬀz ffz ﬀZ ﬁx fix ﬁX ﬁxﬁx')
  add('<n> a<n>b a <n> b ▁<n> <n><n>  <n>\n<n>x')

  // "▁" (U+2581) in the text.
  add('▁')
  add('▁▁▁')
  add('▁Hello ▁world a▁b ▁ ▁ ▁  ▁\n▁')
  add(' ▁ ▁▁ x▁▁y ▁▁▁▁▁▁▁▁ ▁' + repeat(50, () => '▁a'))
  add('_ ▁ ﹍ ‗ ＿ ▂ ▁▁_')

  // Byte-fallback material and control characters.
  add(repeat(200, () => R.pick(WORDS.rare)))
  add(WORDS.rare.join(' '))
  add('控制: \u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008 \u000e\u000f\u0010 \u001b[31mred\u001b[0m \u007f \u0080\u0081\u009f')
  add('nul \u0000 in \u0000\u0000 text')
  add('𠀀𠀁𠀂 𪚥 𰻞𰻞麵 𩸽 𠮷野家 丂丄丅 〄〆 ㄅㄆㄇ ꀀꀁ ᚠᚢᚦ ᠮᠣᠩ ⴰⵣⵓ ꯃꯤ 𑀓𑀔 ܐܒܓ ދިވެހި')

  // Combining marks: NFC and NFD forms side by side, stacks, and Hangul jamo.
  for (let i = 0; i < 20; i++) {
    const words = Array.from({ length: 20 }, () => R.pick([...WORDS.accented, ...WORDS.greek, ...WORDS.cyrillic, ...WORDS.hangul, ...WORDS.kana, ...WORDS.hebrew]))
    const nfc = words.join(' ').normalize('NFC')
    add(`${nfc}\n${nfc.normalize('NFD')}\n${nfc.normalize('NFKD')}`)
  }
  add(repeat(200, () => R.pick(['a', 'o', 'u', 'x', 'ш', 'α', ' ']) + repeat(R.int(1, 4), () => R.pick(COMBINING))))
  add('\u0301leading combining mark, e\u0301\u0301 twice, a\u0308\u0304 ǟ, \u1100\u1161\u11a8 각, 각, Å Å Å, Ω Ω')
  add(COMPAT.join(' ') + '\n' + COMPAT.join(''))
  add(repeat(100, () => R.pick(COMPAT) + R.pick(WORDS.english)))

  // Mixed documents of every length.
  for (let i = 0; i < 900; i++) {
    const words = R.pick([1, 2, 3, 5, 10, 20, 50, 100, 200, 400])
    add(mixed(words))
  }
  // Script by script.
  for (const [name, pool] of Object.entries(WORDS)) {
    for (let i = 0; i < 6; i++) add(repeat(R.int(20, 200), () => R.pick(pool) + R.pick([' ', ' ', ' ', '', '\n', '、', '。', ', ', '. '])))
    add(`${name}: ${pool.join(' ')}`)
  }
  // Emoji sequences.
  for (let i = 0; i < 10; i++) add(repeat(R.int(5, 80), () => R.pick(EMOJI) + R.pick(['', '', ' ', 'a', '\n', '  '])))
  add(EMOJI.join('') + '\n' + EMOJI.join(' '))
}

function usage(message) {
  if (message) process.stderr.write(`make_corpus: ${message}\n`)
  process.stderr.write('usage: node make_corpus.mjs --out FILE [--licenses DIR] [--austen FILE]\n')
  process.exit(2)
}

function main() {
  const opts = parseOptions(
    process.argv.slice(2),
    {
      out: { type: 'string' },
      licenses: { type: 'string', default: '/usr/share/common-licenses' },
      austen: { type: 'string' },
    },
    usage,
  )
  if (!opts.out) usage('--out is required')

  const files = licenses(opts.licenses)
  const fromLicenses = documents.length
  const fromAusten = opts.austen ? austen(opts.austen) : 0
  const before = documents.length
  generated()
  const fromGenerated = documents.length - before

  const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
  for (const [i, d] of documents.entries()) {
    if (d.includes('\f')) throw new Error(`document ${i} holds a form feed`)
    if (loneSurrogate.test(d)) throw new Error(`document ${i} holds a lone surrogate`)
    if (/[\uFDD0-\uFDEF\uFFFE\uFFFF]|[\u{1FFFE}\u{1FFFF}\u{2FFFE}\u{2FFFF}\u{10FFFE}\u{10FFFF}]/u.test(d)) {
      throw new Error(`document ${i} holds a noncharacter`)
    }
  }
  const text = documents.join('\f')
  writeFileSync(resolve(opts.out), text, 'utf8')
  process.stdout.write(
    `make_corpus: ${opts.out}: ${documents.length} documents, ${Buffer.byteLength(text, 'utf8')} bytes ` +
      `(${fromLicenses} from ${files} license texts, ${fromAusten} builtin-corpus chapters, ${fromGenerated} generated)\n`,
  )
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
