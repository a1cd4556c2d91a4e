/**
 * What the bare routes of the benchmarks' baselines answer for a list: a fixed one shaped like the
 * daemon's (10 items projected to name and price), serialized per request.
 */
export const BARE_LIST = {
  items: Array.from({ length: 10 }, (_, i) => ({
    itemId: `sku-${String(1234 + 97 * i).padStart(6, '0')}`,
    score: 0.87312345 / (i + 1),
    attributes: { name: 'Linea Oxford Shirt', price: 27.99 + i },
  })),
  count: 10,
  algorithm: 'co-occurrence',
  scenario: 'bench-item-to-item',
  recommId: '5f0c6a36-8d0e-4c9b-9a53-0b6f1d2e7c41',
};
