import { printString } from '../nextql/index.js';

/**
 * The query parser of hybrid search: splits a shopper's free text into the text left for vector
 * similarity and a nextQL filter extracted from it (price bounds, and the tenant's category names).
 *
 * Price phrases are found over a list of tokens with a few lookups per token, never with one large
 * regular expression, so the work stays linear in the length of the text whatever it contains.
 * Price phrases are removed from the semantic text; category names stay in it (they help similarity).
 */

export interface ParsedSearchQuery {
  original: string;
  /** The text left for vector similarity, whitespace collapsed; may be '' */
  semanticText: string;
  /** nextQL filter text, or null when nothing was extracted */
  filter: string | null;
  /** for tests/debugging: the bounds and categories found */
  minPrice?: number;
  maxPrice?: number;
  categories: string[];
}

type Operator = '<' | '<=' | '>' | '>=';

interface Bound {
  readonly operator: Operator;
  readonly value: number;
}

interface Token {
  readonly kind: 'number' | 'word' | 'symbol';
  /** Words lowercased; numbers and symbols as written. */
  readonly text: string;
  /** Offsets into the original text. */
  readonly start: number;
  readonly end: number;
}

/** Currency symbols and words. */
const CURRENCIES = new Set('$ € £ usd eur euro euros dollar dollars gbp pound pounds'.split(' '));

/** A number directly followed by one of these measures something else: "55 inch", "50%", "3 years". */
const UNITS = new Set([
  "'",
  ...'% " ” inch inches cm mm m km g kg lb lbs oz ml l gb tb mb w v mah hz mp k p x'.split(' '),
  ...'pcs pack pieces year years month months day days'.split(' '),
]);

/** A bare number right after one of these is a measure, not a price: "size 42-44", "ages 3-5". */
const QUALIFIERS = new Set('size sizes age ages aged model version gen series no #'.split(' '));

const DASHES = new Set(['-', '–', '—']);

interface Phrase {
  readonly words: readonly string[];
  readonly operator: Operator;
  /** Only after an amount with a currency: "$50 max" is a bound, "iphone 15 max" is not. */
  readonly needsCurrency: boolean;
}

/** Phrases by their first word, longest first so that "no more than" wins over "more than". */
type PhraseTable = ReadonlyMap<string, readonly Phrase[]>;

function phrases(
  tables: readonly { table: Partial<Record<Operator, string[]>>; needsCurrency: boolean }[],
): PhraseTable {
  const byFirst = new Map<string, Phrase[]>();
  for (const { table, needsCurrency } of tables) {
    for (const [operator, texts] of Object.entries(table) as [Operator, string[]][]) {
      for (const text of texts) {
        const words = text.split(' ');
        const list = byFirst.get(words[0]) ?? [];
        list.push({ words, operator, needsCurrency });
        byFirst.set(
          words[0],
          list.sort((a, b) => b.words.length - a.words.length),
        );
      }
    }
  }
  return byFirst;
}

/** Phrases before an amount: "under 50", "at least $20", "<= 50". */
const PREFIXES = phrases([
  {
    table: {
      '<': ['under', 'below', 'less than', 'cheaper than', 'lower than', '<'],
      '<=': ['up to', 'upto', 'max', 'maximum', 'at most', 'no more than', 'not more than', '<=', '≤'],
      '>': ['over', 'above', 'more than', 'greater than', '>'],
      '>=': ['at least', 'from', 'min', 'minimum', 'no less than', 'not less than', 'starting at', '>=', '≥'],
    },
    needsCurrency: false,
  },
]);

/** Phrases after an amount: "50 or less", "20 or more", "$50 max". */
const SUFFIXES = phrases([
  {
    table: {
      '<=': ['or less', 'or under', 'or below', 'or cheaper', 'and under', 'and below', '& under'],
      '>=': ['or more', 'or above', 'or over', 'and up', 'and above', 'and over', '& up'],
    },
    needsCurrency: false,
  },
  {
    table: { '<=': ['max', 'maximum', 'at most', 'tops'], '>=': ['min', 'minimum', 'at least'] },
    needsCurrency: true,
  },
]);

/**
 * A number ("19.99", "1,299", "1,299.50", "19,99": a comma before exactly three digits groups
 * thousands, before one or two it is a decimal point), a run of letters and digits, a two-character
 * comparison, or any other single character. No alternative can backtrack more than a few characters.
 */
const TOKEN =
  /(\d{1,3}(?:,\d{3}(?!\d))+(?:\.\d+|,\d{1,2}(?!\d))?|\d+(?:\.\d+|,\d{1,2}(?!\d))?)|([\p{L}\p{M}\p{N}_]+)|(<=|>=|\S)/gu;

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  for (const match of text.matchAll(TOKEN)) {
    const start = match.index;
    const end = start + match[0].length;
    const kind = match[1] !== undefined ? 'number' : match[2] !== undefined ? 'word' : 'symbol';
    tokens.push({ kind, text: kind === 'word' ? match[0].toLowerCase() : match[0], start, end });
  }
  return tokens;
}

/** The value of a number token: the last "." is a decimal point, the last "," one only before 1-2 digits. */
function numberValue(raw: string): number {
  const last = Math.max(raw.lastIndexOf('.'), raw.lastIndexOf(','));
  const decimal = last >= 0 && (raw[last] === '.' || raw.length - last - 1 < 3);
  const whole = (decimal ? raw.slice(0, last) : raw).replaceAll(',', '');
  return Number(decimal ? `${whole}.${raw.slice(last + 1)}` : whole);
}

function isCurrency(token: Token | undefined): boolean {
  return token !== undefined && token.kind !== 'number' && CURRENCIES.has(token.text);
}

function isText(token: Token | undefined, ...texts: string[]): boolean {
  return token !== undefined && token.kind !== 'number' && texts.includes(token.text);
}

function isDash(token: Token | undefined): boolean {
  return token !== undefined && token.kind === 'symbol' && DASHES.has(token.text);
}

interface Amount {
  readonly value: number;
  /** Whether a currency word or symbol came with it. */
  readonly currency: boolean;
  /** The index of the first token after it. */
  readonly end: number;
}

/** A number with an optional currency before and/or after it ("$50", "30€", "50 usd", "50"). */
function readAmount(tokens: readonly Token[], index: number): Amount | null {
  let at = index;
  let currency = false;
  if (isCurrency(tokens[at])) {
    currency = true;
    at++;
  }
  const number = tokens[at];
  if (number?.kind !== 'number') return null;
  const value = numberValue(number.text);
  if (!Number.isFinite(value)) return null;
  at++;
  const next = tokens[at];
  if (isCurrency(next)) {
    currency = true;
    at++;
  } else if (next !== undefined && next.kind === 'word' && next.start === number.end) {
    return null; // part of a word: "4k", "256gb"
  } else if (next !== undefined && next.kind !== 'number' && UNITS.has(next.text)) {
    return null; // a measure: "55 inch", "50%"
  }
  return { value, currency, end: at };
}

/** The longest phrase of the table that starts at `index`, if any. */
function readPhrase(tokens: readonly Token[], index: number, table: PhraseTable): Phrase | null {
  const first = tokens[index];
  if (first === undefined || first.kind === 'number') return null;
  for (const phrase of table.get(first.text) ?? []) {
    if (phrase.words.every((word, offset) => isText(tokens[index + offset], word))) return phrase;
  }
  return null;
}

/** A range is inclusive at both ends, whichever order its ends were written in. */
function range(a: Amount, b: Amount): Bound[] {
  return [
    { operator: '>=', value: Math.min(a.value, b.value) },
    { operator: '<=', value: Math.max(a.value, b.value) },
  ];
}

interface PriceMatch {
  readonly bounds: Bound[];
  /** The index of the first token after the phrase. */
  readonly end: number;
}

/** The price phrase that starts at token `index`, if any. */
function matchPrice(tokens: readonly Token[], index: number): PriceMatch | null {
  // "between 20 and 50", "between $20-$50"
  if (isText(tokens[index], 'between')) {
    const a = readAmount(tokens, index + 1);
    if (a === null) return null;
    const separator = tokens[a.end];
    if (!isText(separator, 'and', 'to', '&') && !isDash(separator)) return null;
    const b = readAmount(tokens, a.end + 1);
    return b === null ? null : { bounds: range(a, b), end: b.end };
  }

  // "under 50", "at least $20", and "from 20 to 50" as a range
  const prefix = readPhrase(tokens, index, PREFIXES);
  if (prefix !== null) {
    const a = readAmount(tokens, index + prefix.words.length);
    if (a === null) return null;
    if (prefix.words[0] === 'from' && (isText(tokens[a.end], 'to') || isDash(tokens[a.end]))) {
      const b = readAmount(tokens, a.end + 1);
      if (b !== null) return { bounds: range(a, b), end: b.end };
    }
    return { bounds: [{ operator: prefix.operator, value: a.value }], end: a.end };
  }

  // Phrases led by the amount itself.
  const a = readAmount(tokens, index);
  if (a === null) return null;
  const qualified =
    index > 0 && tokens[index - 1].kind !== 'number' && QUALIFIERS.has(tokens[index - 1].text);
  const after = tokens[a.end];

  // "20-50", "$20-$50", "20 - 50 EUR", "20 to 50 dollars" (a bare "20 to 50" is not a price)
  if (isDash(after) || isText(after, 'to')) {
    const b = readAmount(tokens, a.end + 1);
    const currency = a.currency || (b !== null && b.currency);
    if (b !== null && (currency || (isDash(after) && !qualified))) return { bounds: range(a, b), end: b.end };
  }
  if (qualified && !a.currency) return null;

  // "20+", directly attached
  if (after !== undefined && after.text === '+' && after.start === tokens[a.end - 1].end) {
    return { bounds: [{ operator: '>=', value: a.value }], end: a.end + 1 };
  }
  // "50 or less", "$50 max"
  const suffix = readPhrase(tokens, a.end, SUFFIXES);
  if (suffix !== null && (a.currency || !suffix.needsCurrency)) {
    return { bounds: [{ operator: suffix.operator, value: a.value }], end: a.end + suffix.words.length };
  }
  // A lone amount with a currency ("€30", "50 usd") is the shopper's budget: a ceiling.
  if (a.currency) return { bounds: [{ operator: '<=', value: a.value }], end: a.end };
  return null;
}

/** Of two bounds on the same side, the one that keeps fewer prices (the exclusive one on a tie). */
function tighter(current: Bound | undefined, next: Bound, lower: boolean): Bound {
  if (current === undefined) return next;
  if (next.value !== current.value) return lower === next.value > current.value ? next : current;
  return next.operator.length < current.operator.length ? next : current;
}

interface CategoryIndex {
  /** Normalised word sequence (see `categoryWords`) → the category as stored. */
  readonly byKey: ReadonlyMap<string, string>;
  /** The most words in one category name. */
  readonly longest: number;
}

/** Words keep inner hyphens and apostrophes ("t-shirts", "men's"); anything else separates them. */
const WORD = /[\p{L}\p{M}\p{N}]+(?:[-'’][\p{L}\p{M}\p{N}]+)*/gu;

/** A crude singular, applied alike to the text and to category names, so that only consistency matters. */
function singular(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(?:ss|x|z|ch|sh)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 2 && word.endsWith('s') && !/(?:ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

function categoryWords(text: string): string[] {
  return Array.from(text.toLowerCase().matchAll(WORD), (match) => singular(match[0]));
}

/** Built once per categories array, which is read as immutable, and dropped with it. */
const categoryIndexes = new WeakMap<readonly string[], CategoryIndex>();

function categoryIndex(categories: readonly string[]): CategoryIndex {
  let index = categoryIndexes.get(categories);
  if (index === undefined) {
    const byKey = new Map<string, string>();
    let longest = 0;
    for (const category of categories) {
      const words = categoryWords(category);
      const key = words.join(' ');
      // The first spelling listed wins when two categories normalise alike.
      if (words.length === 0 || byKey.has(key)) continue;
      byKey.set(key, category);
      longest = Math.max(longest, words.length);
    }
    index = { byKey, longest };
    categoryIndexes.set(categories, index);
  }
  return index;
}

/** The categories named in the text, in the order they first appear, longest name first at each word. */
function findCategories(text: string, categories: readonly string[]): string[] {
  const { byKey, longest } = categoryIndex(categories);
  const words = categoryWords(text);
  const found = new Set<string>();
  for (let start = 0; start < words.length; start++) {
    for (let length = Math.min(longest, words.length - start); length > 0; length--) {
      const category = byKey.get(words.slice(start, start + length).join(' '));
      if (category !== undefined) {
        found.add(category);
        start += length - 1;
        break;
      }
    }
  }
  return [...found];
}

/**
 * Splits a search text into its semantic part and a nextQL filter: `'category' in {…}` for the
 * categories named, then `'price' >`/`>=` for the tightest lower bound and `'price' <`/`<=` for the
 * tightest upper bound, joined with ` and `; null when nothing was found. Never throws.
 * `categories` is the tenant's list as stored; an index of it is kept while the array lives, so pass a
 * new array rather than changing one in place.
 */
export function parseSearchQuery(text: string, categories: readonly string[]): ParsedSearchQuery {
  const tokens = tokenize(text);
  let lower: Bound | undefined;
  let upper: Bound | undefined;
  let semantic = '';
  let copied = 0;
  for (let index = 0; index < tokens.length;) {
    const match = matchPrice(tokens, index);
    if (match === null) {
      index++;
      continue;
    }
    for (const bound of match.bounds) {
      if (bound.operator[0] === '>') lower = tighter(lower, bound, true);
      else upper = tighter(upper, bound, false);
    }
    semantic += `${text.slice(copied, tokens[index].start)} `;
    copied = tokens[match.end - 1].end;
    index = match.end;
  }
  semantic = (semantic + text.slice(copied)).replace(/\s+/g, ' ').trim();

  // Bounds written the wrong way round ("over 50 under 20") still mean the prices between them.
  if (lower !== undefined && upper !== undefined && lower.value > upper.value) {
    [lower, upper] = [
      { operator: lower.operator, value: upper.value },
      { operator: upper.operator, value: lower.value },
    ];
  }

  const found = findCategories(semantic, categories);
  const clauses: string[] = [];
  if (found.length > 0) clauses.push(`'category' in {${found.map(printString).join(', ')}}`);
  if (lower !== undefined) clauses.push(`'price' ${lower.operator} ${String(lower.value)}`);
  if (upper !== undefined) clauses.push(`'price' ${upper.operator} ${String(upper.value)}`);

  const parsed: ParsedSearchQuery = {
    original: text,
    semanticText: semantic,
    filter: clauses.length > 0 ? clauses.join(' and ') : null,
    categories: found,
  };
  if (lower !== undefined) parsed.minPrice = lower.value;
  if (upper !== undefined) parsed.maxPrice = upper.value;
  return parsed;
}
