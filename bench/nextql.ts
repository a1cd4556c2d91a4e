/**
 * nextQL column-path benchmark: a three-clause filter over 100,000 items through `filterAll`, against a
 * hand-written predicate over the same column arrays. Prints one JSON line.
 */
import { compileFilter, type ItemColumns, type TopLevelField } from '../src/nextql/index.js';
import { random } from './support/random.js';

const ITEM_COUNT = 100_000;
const WARMUP_RUNS = 10;
const MEASURED_RUNS = 21;
const FILTER = `'price' < 100 and 'category' in {"shoes", "boots", "sandals"} and 'stock' > 0`;

const CATEGORIES = [
  'shoes',
  'boots',
  'sandals',
  'shirts',
  'trousers',
  'jackets',
  'hats',
  'bags',
  'socks',
  'belts',
];
const BRANDS = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark'];
const GENRES = ['casual', 'sport', 'formal', 'outdoor', 'vintage'];

class BenchColumns implements ItemColumns {
  readonly version = 1;
  readonly fields = new Map<TopLevelField, unknown[]>();
  readonly attributes = new Map<string, unknown[]>();

  constructor(readonly size: number) {
    const next = random(42);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(next() * values.length)];
    const column = (build: (id: number) => unknown): unknown[] =>
      Array.from({ length: size }, (_, id) => build(id));
    const day = 86_400_000;
    const origin = Date.UTC(2024, 0, 1);
    this.fields.set(
      'externalId',
      column((id) => `sku-${id}`),
    );
    this.fields.set(
      'category',
      column(() => pick(CATEGORIES)),
    );
    this.fields.set(
      'available',
      column(() => next() > 0.05),
    );
    this.fields.set(
      'feedManaged',
      column(() => next() > 0.5),
    );
    this.fields.set(
      'createdAt',
      column(() => new Date(origin + Math.floor(next() * 365) * day).toISOString()),
    );
    this.fields.set(
      'expiresAt',
      column(() => (next() > 0.8 ? new Date(origin + 400 * day).toISOString() : null)),
    );
    this.attributes.set(
      'price',
      column(() => Math.round(next() * 30_000) / 100),
    );
    this.attributes.set(
      'stock',
      column(() => (next() > 0.1 ? Math.floor(next() * 40) : undefined)),
    );
    this.attributes.set(
      'brand',
      column(() => pick(BRANDS)),
    );
    this.attributes.set(
      'genres',
      column(() => GENRES.filter(() => next() > 0.7)),
    );
    this.attributes.set(
      'rating',
      column(() => Math.round(next() * 50) / 10),
    );
    this.attributes.set(
      'blockedCountries',
      column(() => (next() > 0.9 ? ['DE'] : [])),
    );
  }

  field(name: TopLevelField): ArrayLike<unknown> {
    return this.fields.get(name) ?? [];
  }

  attribute(key: string): ArrayLike<unknown> | undefined {
    return this.attributes.get(key);
  }
}

function handWritten(columns: BenchColumns): Uint8Array {
  const price = columns.attribute('price') ?? [];
  const stock = columns.attribute('stock') ?? [];
  const category = columns.field('category');
  const wanted = new Set(['shoes', 'boots', 'sandals']);
  const mask = new Uint8Array(columns.size);
  for (let id = 0; id < columns.size; id++) {
    const itemPrice = price[id];
    const itemStock = stock[id];
    const itemCategory = category[id];
    if (
      typeof itemPrice === 'number' &&
      itemPrice < 100 &&
      typeof itemCategory === 'string' &&
      wanted.has(itemCategory) &&
      typeof itemStock === 'number' &&
      itemStock > 0
    ) {
      mask[id] = 1;
    }
  }
  return mask;
}

function medianMs(run: () => Uint8Array): { ms: number; mask: Uint8Array } {
  let mask = run();
  for (let index = 1; index < WARMUP_RUNS; index++) mask = run();
  const times: number[] = [];
  for (let index = 0; index < MEASURED_RUNS; index++) {
    const start = process.hrtime.bigint();
    mask = run();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(times.length / 2)], mask };
}

const columns = new BenchColumns(ITEM_COUNT);
const filter = compileFilter(FILTER);
const column = medianMs(() => filter.filterAll(columns));
const hand = medianMs(() => handWritten(columns));
const kept = column.mask.reduce((sum, bit) => sum + bit, 0);
const agree = column.mask.every((bit, id) => bit === hand.mask[id]);
const round = (value: number): number => Math.round(value * 1000) / 1000;
console.log(
  JSON.stringify({
    bench: 'nextql',
    items: ITEM_COUNT,
    columnMs: round(column.ms),
    handMs: round(hand.ms),
    ratio: round(column.ms / hand.ms),
    kept,
    agree,
  }),
);
if (!agree) process.exitCode = 1;
