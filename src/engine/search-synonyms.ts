import { wordsOf, type SearchSynonym } from '../contract/vectors.js';

/**
 * Search synonyms (docs/guide.md, "Search"): the semantic text of a query is expanded with the
 * synonyms of the words and phrases it holds, so that "sofa" also finds what is described as a couch.
 * A term matches a run of whole words, case aside; a two-way pair expands either side with the other, a
 * one-way pair the term with the synonym only. Expansion is one step (a synonym's own synonyms are not
 * added), and a phrase the text already holds is not added again.
 */

/** Phrases added to one query at most: a text of many matching words stays a text, not a thesaurus. */
export const MAX_EXPANSIONS = 32;

/** One direction of a pair: when the text holds `from`, `to` is added. */
interface Expansion {
  from: readonly string[];
  to: string;
  toWords: readonly string[];
}

/** A tenant's expansions by the first word of their `from`, made once per version of its configuration. */
interface Index {
  version: number;
  byFirst: Map<string, Expansion[]>;
}

/** What expansion reads of a tenant's configuration (TenantConfig). */
export interface SynonymSource {
  readonly searchSynonyms: ReadonlyMap<string, SearchSynonym>;
  /** Bumps on every change of the configuration. */
  readonly version: number;
}

const indexes = new WeakMap<SynonymSource, Index>();

/** `text` with the synonyms of what it holds appended, in the order they were found. */
export function expandSynonyms(text: string, config: SynonymSource): string {
  if (config.searchSynonyms.size === 0) return text;
  const words = wordsOf(text);
  if (words.length === 0) return text;
  const { byFirst } = indexOf(config);
  const added: string[] = [];
  const addedWords: string[][] = [];
  for (let at = 0; at < words.length && added.length < MAX_EXPANSIONS; at++) {
    for (const expansion of byFirst.get(words[at]) ?? []) {
      if (!startsAt(words, at, expansion.from)) continue;
      if (holds(words, expansion.toWords) || addedWords.some((phrase) => same(phrase, expansion.toWords)))
        continue;
      added.push(expansion.to);
      addedWords.push([...expansion.toWords]);
      if (added.length === MAX_EXPANSIONS) break;
    }
  }
  return added.length === 0 ? text : `${text} ${added.join(' ')}`;
}

function indexOf(config: SynonymSource): Index {
  const cached = indexes.get(config);
  if (cached?.version === config.version) return cached;
  const byFirst = new Map<string, Expansion[]>();
  const add = (from: string, to: string) => {
    const fromWords = wordsOf(from);
    const toWords = wordsOf(to);
    if (fromWords.length === 0 || toWords.length === 0) return;
    const list = byFirst.get(fromWords[0]) ?? [];
    list.push({ from: fromWords, to: toWords.join(' '), toWords });
    byFirst.set(fromWords[0], list);
  };
  for (const pair of config.searchSynonyms.values()) {
    add(pair.term, pair.synonym);
    if (!pair.oneWay) add(pair.synonym, pair.term);
  }
  // Longer phrases first, so that "sofa bed" is matched before "sofa".
  for (const list of byFirst.values()) list.sort((a, b) => b.from.length - a.from.length);
  const index = { version: config.version, byFirst };
  indexes.set(config, index);
  return index;
}

function startsAt(words: readonly string[], at: number, phrase: readonly string[]): boolean {
  if (at + phrase.length > words.length) return false;
  for (let i = 0; i < phrase.length; i++) if (words[at + i] !== phrase[i]) return false;
  return true;
}

function holds(words: readonly string[], phrase: readonly string[]): boolean {
  for (let at = 0; at + phrase.length <= words.length; at++) if (startsAt(words, at, phrase)) return true;
  return false;
}

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((word, i) => word === b[i]);
}
