import { describe, expect, it } from 'vitest';
import { forEachBoosted, forEachKept } from '../../../src/engine/match-bits.js';
import { compileBooster, compileFilter } from '../../../src/nextql/index.js';
import { TenantState } from '../../../src/state/tenant-state.js';

const NOW = Date.parse('2026-06-01T00:00:00Z');

function catalogWith(prices: Record<string, number>, expiresAt: string | null = null) {
  const tenant = new TenantState('t');
  for (const [externalId, price] of Object.entries(prices)) {
    tenant.catalog.upsert({
      externalId,
      category: null,
      attributes: { price },
      expiresAt,
      available: true,
      feedManaged: false,
      createdAt: NOW,
      updatedAt: NOW,
    });
  }
  return tenant.catalog;
}

function kept(filterText: string, catalog: ReturnType<typeof catalogWith>, now = NOW): string[] {
  const ids = Int32Array.from({ length: catalog.size }, (_, i) => i);
  const out: string[] = [];
  forEachKept(compileFilter(filterText), catalog, ids, now, (i, keep) => {
    if (keep) out.push(catalog.externalIds[ids[i]]);
  });
  return out;
}

describe('remembered filter and booster answers', () => {
  it('answer like the expression, and follow catalog changes', () => {
    const catalog = catalogWith({ a: 5, b: 50, c: 8 });
    expect(kept("'price' < 10", catalog)).toEqual(['a', 'c']);
    expect(kept("'price' < 10", catalog)).toEqual(['a', 'c']);
    catalog.upsert({ ...catalog.get('b')!, attributes: { price: 1 } });
    expect(kept("'price' < 10", catalog)).toEqual(['a', 'b', 'c']);
    catalog.upsert({ ...catalog.get('a')!, externalId: 'd', attributes: { price: 3 } });
    expect(kept("'price' < 10", catalog)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('evaluate expressions that read now() every time', () => {
    const catalog = catalogWith({ a: 1 }, '2026-07-01T00:00:00.000Z');
    expect(kept("'expiresAt' > now()", catalog, NOW)).toEqual(['a']);
    expect(kept("'expiresAt' > now()", catalog, Date.parse('2026-08-01T00:00:00Z'))).toEqual([]);
  });

  it('name the positions whose items a booster applies to, and only those', () => {
    const catalog = catalogWith({ a: 5, b: 50 });
    const ids = Int32Array.from([0, 1, 0]);
    const booster = compileBooster("boost by 2 where 'price' < 10");
    for (let round = 0; round < 2; round++) {
      const boosted: number[] = [];
      forEachBoosted(booster, catalog, ids, NOW, (index) => boosted.push(index));
      expect(boosted).toEqual([0, 2]);
    }
  });
});
