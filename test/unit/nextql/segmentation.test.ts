import { describe, expect, test } from 'vitest';
import { compileSegmentation, type NextqlItem } from '../../../src/nextql/index.js';

const ITEM: NextqlItem = {
  externalId: 'sku-9',
  category: 'shoes',
  createdAt: '2024-01-01T00:00:00Z',
  attributes: {
    price: 150,
    rating: 4.5,
    brand: 'acme',
    onSale: true,
    nothing: null,
    genres: ['rock', 'jazz', 'rock'],
    tags: ['a', 1, true, null, { x: 1 }, ['n']],
    empty: [],
    size: { eu: 42 },
  },
};

/** [expression, expected sorted segment names for ITEM] */
const CASES: ReadonlyArray<readonly [string, readonly string[]]> = [
  [`{"a", "b"}`, ['a', 'b']],
  [`{"b"} + {"a"} + {"b"}`, ['a', 'b']],
  [`{}`, []],
  [`{1, 2.5, true, null}`, ['1', '2.5', 'null', 'true']],
  [`"x"`, ['x']],
  [`1e3`, ['1000']],
  [`-0`, ['0']],
  [`null`, ['null']],
  [`false`, ['false']],
  [`"caf\\u00e9"`, ['café']],
  [`'genres'`, ['jazz', 'rock']],
  [`'brand'`, ['acme']],
  [`'price'`, ['150']],
  [`'rating'`, ['4.5']],
  [`'onSale'`, ['true']],
  [`'nothing'`, []],
  [`'missing'`, []],
  [`'size'`, []],
  [`'size.eu'`, ['42']],
  [`'category'`, ['shoes']],
  [`'itemId'`, ['sku-9']],
  [`'tags'`, ['1', 'a', 'true']],
  [`'empty'`, []],
  [`'genres' + 'brand' + 'missing'`, ['acme', 'jazz', 'rock']],
  [`({"a"})`, ['a']],
  [`if true then {"t"} else {"f"}`, ['t']],
  [`if 'price' > 100 then {"premium"} else {"budget"}`, ['premium']],
  [`if 'price' > 200 then {"premium"} else {"budget"}`, ['budget']],
  [`if 'missing' > 1 then {"a"} else {"b"}`, ['b']],
  [`if not ('missing' > 1) then {"a"} else {"b"}`, ['a']],
  [`if 'price' > 200 then {"premium"} else {"budget"} + {"all"}`, ['all', 'budget']],
  [`if 'price' > 100 then {"premium"} else {"budget"} + {"all"}`, ['premium']],
  [`(if 'price' > 100 then {"premium"} else {"budget"}) + {"all"}`, ['all', 'premium']],
  [`if 'price' > 100 then {"a"} + {"b"} else {"c"}`, ['a', 'b']],
  [
    `if 'price' > 100 then if 'brand' = "acme" then {"acme-premium"} else {"premium"} else {"budget"}`,
    ['acme-premium'],
  ],
  [`if 'genres' contains "rock" and not ('price' < 100) then string('brand', "b-%s") else {}`, ['b-acme']],
  [`if 'createdAt' < now() then {"old"} else {"new"}`, ['old']],
  [`map(lambda g: string(g, "genre-%s"), 'genres') + {"all"}`, ['all', 'genre-jazz', 'genre-rock']],
  [`map(lambda g: g, 'genres')`, ['jazz', 'rock']],
  [`map(lambda g: "x", 'genres')`, ['x']],
  [`map(lambda g: "x", 'missing')`, []],
  [`map(lambda g: string(g, "%s-%s"), {"a"})`, ['a-a']],
  [`map(lambda g: string('brand', "%s-b"), 'genres')`, ['acme-b']],
  [`map(lambda g: string(g, "%s"), {1, true})`, ['1', 'true']],
  [`map(lambda g: string(g, "x%s"), map(lambda h: string(h, "y%s"), 'genres'))`, ['xyjazz', 'xyrock']],
  [`map(lambda g: g, if 'price' > 1 then 'genres' else {"none"})`, ['jazz', 'rock']],
  [`map(lambda g: g, {})`, []],
  [`string('genres', "g:%s")`, ['g:jazz', 'g:rock']],
  [`string('price', "price-%s")`, ['price-150']],
  [`string('missing', "m-%s")`, []],
  [`string('nothing', "m-%s")`, []],
  [`string('brand', "$&-%s")`, ['$&-acme']],
  [`string('brand', "%s%s")`, ['acmeacme']],
];

describe('segmentation evaluation', () => {
  test.each(CASES)('%s', (expression, expected) => {
    expect(compileSegmentation(expression).segments(ITEM, { now: new Date('2025-01-01T00:00:00Z') })).toEqual(
      expected,
    );
  });

  test('the condition of an if reads the evaluation time', () => {
    const segmentation = compileSegmentation(`if 'createdAt' < now() then {"old"} else {"new"}`);
    expect(segmentation.segments(ITEM, { now: Date.parse('2023-01-01T00:00:00Z') })).toEqual(['new']);
    expect(segmentation.segments(ITEM, { now: Date.parse('2025-01-01T00:00:00Z') })).toEqual(['old']);
  });

  test('an item without attributes gives the constant part only', () => {
    const segmentation = compileSegmentation(`map(lambda g: string(g, "genre-%s"), 'genres') + {"all"}`);
    expect(segmentation.segments({ externalId: 'bare' })).toEqual(['all']);
  });
});
