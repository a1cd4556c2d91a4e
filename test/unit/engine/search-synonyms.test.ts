import { describe, expect, it } from 'vitest';
import { SEARCH_SYNONYM_BODY, type SearchSynonym } from '../../../src/contract/vectors.js';
import { MAX_EXPANSIONS, expandSynonyms } from '../../../src/engine/search-synonyms.js';

/** A tenant configuration holding `pairs`, at `version`. */
function config(pairs: Omit<SearchSynonym, 'id'>[], version = 1) {
  return {
    searchSynonyms: new Map(pairs.map((pair, n) => [`s${n}`, { id: `s${n}`, ...pair }])),
    version,
  };
}

describe('search synonyms', () => {
  it('expand a two-way pair either way, and a one-way pair from its term only', () => {
    const two = config([{ term: 'sofa', synonym: 'couch', oneWay: false }]);
    expect(expandSynonyms('grey sofa', two)).toBe('grey sofa couch');
    expect(expandSynonyms('leather Couch', two)).toBe('leather Couch sofa');
    const one = config([{ term: 'sneakers', synonym: 'Running Shoes', oneWay: true }]);
    expect(expandSynonyms('white sneakers', one)).toBe('white sneakers running shoes');
    expect(expandSynonyms('running shoes', one)).toBe('running shoes');
  });

  it('match whole words and phrases, case and punctuation aside, and add nothing the text holds', () => {
    const synonyms = config([
      { term: 'sofa bed', synonym: 'sleeper', oneWay: true },
      { term: 'sofa', synonym: 'couch', oneWay: false },
      { term: 'tv', synonym: 'television', oneWay: false },
    ]);
    expect(expandSynonyms('Sofa-Bed for guests', synonyms)).toBe('Sofa-Bed for guests sleeper couch');
    expect(expandSynonyms('sofas', synonyms)).toBe('sofas');
    expect(expandSynonyms('tvstand', synonyms)).toBe('tvstand');
    expect(expandSynonyms('sofa or couch', synonyms)).toBe('sofa or couch');
    expect(expandSynonyms('tv and another tv', synonyms)).toBe('tv and another tv television');
    expect(expandSynonyms('', synonyms)).toBe('');
  });

  it('expand one step, at most MAX_EXPANSIONS phrases', () => {
    const chain = config([
      { term: 'a', synonym: 'b', oneWay: true },
      { term: 'b', synonym: 'c', oneWay: true },
    ]);
    expect(expandSynonyms('a', chain)).toBe('a b');
    const many = config(
      Array.from({ length: 100 }, (_, n) => ({ term: `w${n}`, synonym: `x${n}`, oneWay: true })),
    );
    const text = Array.from({ length: 100 }, (_, n) => `w${n}`).join(' ');
    expect(expandSynonyms(text, many).split(' ')).toHaveLength(100 + MAX_EXPANSIONS);
  });

  it('follow changes of the configuration by its version', () => {
    const tenant = config([{ term: 'sofa', synonym: 'couch', oneWay: false }]);
    expect(expandSynonyms('sofa', tenant)).toBe('sofa couch');
    tenant.searchSynonyms.set('s1', { id: 's1', term: 'sofa', synonym: 'settee', oneWay: true });
    // The same version: the index made for it stands.
    expect(expandSynonyms('sofa', tenant)).toBe('sofa couch');
    tenant.version++;
    expect(expandSynonyms('sofa', tenant)).toBe('sofa couch settee');
  });

  it('refuse a pair whose sides are the same words, or hold no word', () => {
    expect(SEARCH_SYNONYM_BODY.safeParse({ term: 'Sofa', synonym: 'sofa!' }).success).toBe(false);
    expect(SEARCH_SYNONYM_BODY.safeParse({ term: '--', synonym: 'sofa' }).success).toBe(false);
    expect(SEARCH_SYNONYM_BODY.parse({ term: ' sofa ', synonym: 'couch' })).toEqual({
      term: 'sofa',
      synonym: 'couch',
      oneWay: false,
    });
  });
});
