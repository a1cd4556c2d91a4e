import { describe, expect, it } from 'vitest';
import { FEED_BODY, type MappingRule } from '../../../src/contract/feeds.js';
import { compilePath } from '../../../src/contract/json-path.js';
import { compileMapping, previewItem } from '../../../src/feeds/mapping.js';

function rule(property: string, path: string, dataType: MappingRule['dataType'], target = 'attributes') {
  return { property, path, dataType, target };
}

function mapOne(rules: MappingRule[], record: unknown, itemIdPath = 'sku') {
  return compileMapping({ itemIdPath, mappingRules: rules })(record, 7);
}

describe('JSONPath', () => {
  it('reads relative and absolute definite paths by walking the record', () => {
    const record = { sku: 'a1', data: { images: [{ url: 'u0' }, { url: 'u1' }] }, 'odd key': { x: 3 } };
    expect(compilePath('sku').read(record)).toBe('a1');
    expect(compilePath('$.sku').read(record)).toBe('a1');
    expect(compilePath('data.images[1].url').read(record)).toBe('u1');
    expect(compilePath("$['odd key'].x").read(record)).toBe(3);
    expect(compilePath('data.missing.deeper').read(record)).toBeUndefined();
    expect(compilePath('sku.length').read(record)).toBeUndefined();
    expect(compilePath('sku').definite).toBe(true);
  });

  it('evaluates wildcards and recursive descent with jsonpath-plus, as a list of matches', () => {
    const record = { data: { images: [{ url: 'u0' }, { url: 'u1' }] } };
    const wildcard = compilePath('data.images[*].url');
    expect(wildcard.definite).toBe(false);
    expect(wildcard.read(record)).toEqual(['u0', 'u1']);
    expect(compilePath('$..url').read(record)).toEqual(['u0', 'u1']);
    expect(compilePath('$..nothing').read(record)).toEqual([]);
  });

  it('refuses filter and script expressions', () => {
    expect(() => compilePath('$.items[?(@.price > 1)]')).toThrow(/not supported/);
    expect(() => compilePath('$.items[(@.length-1)]')).toThrow(/not supported/);
  });
});

describe('mapping rules', () => {
  it('converts each data type', () => {
    const rules = [
      rule('title', 'title', 'string'),
      rule('code', 'code', 'string'),
      rule('weight', 'weight', 'double'),
      rule('stock', 'stock', 'int'),
      rule('photo', 'photo', 'image'),
      rule('colour', 'colour', 'enum'),
      rule('tags', 'tags', 'enum'),
    ];
    const outcome = mapOne(rules, {
      sku: 42,
      title: 'Shoe',
      code: 17,
      weight: '1.25',
      stock: '12',
      photo: ' https://img.example/1.jpg ',
      colour: ' red ',
      tags: ['a', 'b', null],
    });
    expect(outcome).toEqual({
      ok: true,
      item: {
        externalId: '42',
        attributes: {
          title: 'Shoe',
          code: '17',
          weight: 1.25,
          stock: 12,
          photo: 'https://img.example/1.jpg',
          colour: 'red',
          tags: ['a', 'b'],
        },
      },
    });
  });

  it('sends category to the top level and name, basePrice, coverImage to name, price, image', () => {
    const rules = [
      rule('title', 'title', 'string', 'name'),
      rule('amount', 'offer.amount', 'double', 'basePrice'),
      rule('picture', 'pictures[0]', 'image', 'coverImage'),
      rule('dept', 'dept', 'enum', 'category'),
      rule('brand', 'brand', 'string', 'attributes'),
      rule('material', 'material', 'string', 'taxonomy'),
    ];
    const outcome = mapOne(rules, {
      sku: 'x',
      title: 'Boot',
      offer: { amount: 99.5 },
      pictures: ['http://img/b.png'],
      dept: 'shoes',
      brand: 'Acme',
      material: 'leather',
    });
    expect(outcome).toEqual({
      ok: true,
      item: {
        externalId: 'x',
        category: 'shoes',
        attributes: {
          name: 'Boot',
          price: 99.5,
          image: 'http://img/b.png',
          brand: 'Acme',
          material: 'leather',
        },
      },
    });
  });

  it('gives null to values the record lacks (a sync removes them), and a preview leaves them out', () => {
    const outcome = mapOne([rule('title', 'title', 'string'), rule('dept', 'dept', 'string', 'category')], {
      sku: 'x',
      title: null,
    });
    expect(outcome).toEqual({
      ok: true,
      item: { externalId: 'x', category: null, attributes: { title: null } },
    });
    if (!outcome.ok) throw new Error('unreachable');
    expect(previewItem(outcome.item)).toEqual({ externalId: 'x', category: null, attributes: {} });
  });

  it.each([
    ['double', 'abc', 'expected a number, found string "abc"'],
    ['double', true, 'expected a number, found boolean true'],
    ['int', 1.5, 'expected an integer, found number 1.5'],
    ['int', '7x', 'expected an integer, found string "7x"'],
    ['image', 'not a url', 'expected an http(s) URL, found string "not a url"'],
    ['image', 'ftp://host/a.png', 'expected an http(s) URL'],
    ['string', { a: 1 }, 'expected a string, found an object'],
    ['enum', [{ a: 1 }], 'expected a string, found an object'],
  ] as const)('reports a %s rule given %j as an error of the record', (dataType, value, message) => {
    const outcome = mapOne([rule('v', 'v', dataType)], { sku: 's1', v: value });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.externalId).toBe('s1');
    expect(outcome.error.index).toBe(7);
    expect(outcome.error.message).toContain(message);
    expect(outcome.error.message).toMatch(/^v \(v\): /);
  });

  it('reports records without a usable id, and records that are not objects', () => {
    const map = compileMapping({ itemIdPath: '$.id', mappingRules: [] });
    const cases: [unknown, RegExp][] = [
      [{}, /no id at itemIdPath/],
      [{ id: '' }, /empty/],
      [{ id: { nested: 1 } }, /an object/],
      [{ id: 'x'.repeat(600) }, /longer than 512/],
      [JSON.parse('{"id":"a\\ud800"}'), /lone surrogate/],
      ['just a string', /not an object/],
      [null, /not an object/],
    ];
    cases.forEach(([record, message], index) => {
      const outcome = map(record, index);
      expect(outcome.ok).toBe(false);
      if (!outcome.ok) {
        expect(outcome.externalId).toBeUndefined();
        expect(outcome.error).toEqual({ index, message: expect.stringMatching(message) });
      }
    });
  });

  it('refuses a record whose value is not valid Unicode (a lone surrogate): no store could hold it', () => {
    const rules = [rule('name', 'title', 'string', 'name'), rule('tags', 'tags', 'enum')];
    for (const text of ['{"sku":"a","title":"\\udc00x"}', '{"sku":"a","tags":["ok","\\ud800"]}']) {
      const outcome = mapOne(rules, JSON.parse(text));
      expect(outcome).toMatchObject({ ok: false, externalId: 'a', error: { message: /lone surrogate/ } });
    }
    // A pair is a character like any other.
    expect(mapOne(rules, JSON.parse('{"sku":"a","title":"\\ud83d\\ude00"}'))).toMatchObject({
      ok: true,
      item: { attributes: { name: '\u{1F600}' } },
    });
  });

  it('refuses a category that is several values', () => {
    const outcome = mapOne([rule('dept', 'depts[*]', 'string', 'category')], { sku: 'a', depts: ['x', 'y'] });
    expect(outcome).toMatchObject({ ok: false, error: { message: expect.stringContaining('one value') } });
  });
});

describe('the feed body', () => {
  const base = {
    sourceType: 'json_url',
    url: 'https://shop.example/feed.json',
    itemIdPath: 'sku',
  };

  it('fills defaults', () => {
    expect(FEED_BODY.parse(base)).toEqual({
      ...base,
      method: 'GET',
      headers: {},
      itemsPath: '$',
      pagination: { mode: 'none', cursorParam: 'cursor', limitParam: 'limit', offsetParam: 'offset' },
      mappingRules: [],
      scheduleMode: 'manual',
      timeoutMs: 30_000,
      maxBytes: 64 * 1024 * 1024,
    });
  });

  it('ignores the fields the daemon keeps, so a GET answer may be sent back', () => {
    const parsed = FEED_BODY.parse({
      ...base,
      state: 'active',
      lastSync: null,
      createdAt: 'x',
      updatedAt: 'y',
    });
    expect(parsed).not.toHaveProperty('state');
  });

  it.each([
    [{ url: 'file:///etc/passwd' }, 'url'],
    [{ sourceType: 'ftp' }, 'sourceType'],
    [{ method: 'POST' }, 'method'],
    [{ itemIdPath: '$.items[?(@.x)]' }, 'itemIdPath'],
    [{ pagination: { mode: 'cursor' } }, 'pagination.cursorPath'],
    [{ pagination: { mode: 'pages' } }, 'pagination.mode'],
    [{ scheduleMode: 'interval' }, 'intervalMinutes'],
    [{ scheduleMode: 'cron', cron: 'every tuesday' }, 'cron'],
    [{ scheduleMode: 'cron' }, 'cron'],
    [
      { mappingRules: [{ property: 'a', path: 'a', dataType: 'date', target: 'attributes' }] },
      'mappingRules.0.dataType',
    ],
    [{ mappingRules: [{ property: '__proto__', path: 'a', dataType: 'string' }] }, 'mappingRules.0.property'],
    [
      {
        mappingRules: [
          { property: 'a', path: 'a', dataType: 'string', target: 'name' },
          { property: 'b', path: 'b', dataType: 'string', target: 'name' },
        ],
      },
      'mappingRules.1.target',
    ],
    [{ timeoutMs: 10 }, 'timeoutMs'],
    [{ unknown: 1 }, ''],
  ])('refuses %j at %s', (change, path) => {
    const parsed = FEED_BODY.safeParse({ ...base, ...change });
    expect(parsed.success).toBe(false);
    if (!parsed.success) expect(parsed.error.issues.map((issue) => issue.path.join('.'))).toContain(path);
  });

  it('accepts api sources with a method, headers and a body, and cron with seconds', () => {
    const parsed = FEED_BODY.parse({
      ...base,
      sourceType: 'api',
      method: 'POST',
      headers: { authorization: 'Bearer t' },
      body: { query: 'all' },
      scheduleMode: 'cron',
      cron: '*/5 * * * * *',
    });
    expect(parsed).toMatchObject({ method: 'POST', cron: '*/5 * * * * *', body: { query: 'all' } });
  });
});
