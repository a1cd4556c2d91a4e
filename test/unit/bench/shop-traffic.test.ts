import { describe, expect, it } from 'vitest';
import {
  isWrite,
  shopTraffic,
  TRAFFIC_KINDS,
  type TrafficKind,
} from '../../../bench/support/shop-traffic.js';
import { INTERACTIONS_BODY, ITEMS_BODY } from '../../../src/contract/ingestion.js';
import {
  ITEMS_TO_ITEMS_BODY,
  LEGACY_QUERY,
  RECOMMENDATION_BODY,
} from '../../../src/contract/recommendations.js';

const itemIds = Array.from({ length: 50 }, (_, i) => `sku-${i}`);
const userIds = Array.from({ length: 20 }, (_, i) => `user ${i}`);

describe('shopTraffic', () => {
  const requests = Array.from({ length: 20_000 }, shopTraffic(itemIds, userIds));

  it('sends 70% recommendations over five routes, 25% interactions and 5% item upserts', () => {
    const share = (pick: (kind: TrafficKind) => boolean) =>
      requests.filter((request) => pick(request.kind)).length / requests.length;
    expect(share((kind) => !isWrite(kind))).toBeCloseTo(0.7, 1);
    expect(share((kind) => kind === 'interaction')).toBeCloseTo(0.25, 1);
    expect(share((kind) => kind === 'item-upsert')).toBeCloseTo(0.05, 1);
    for (const kind of TRAFFIC_KINDS) expect(share((k) => k === kind)).toBeGreaterThan(0.03);
  });

  it("makes only requests the daemon's contract accepts, naming the shop's ids", () => {
    for (const request of requests.slice(0, 2_000)) {
      const [path, query] = request.path.split('?');
      if (request.method === 'GET') {
        const [, , logicType, id] = path.split('/');
        expect(['user-to-item', 'recently-viewed']).toContain(logicType);
        expect(userIds).toContain(decodeURIComponent(id));
        expect(LEGACY_QUERY.safeParse(Object.fromEntries(new URLSearchParams(query))).success).toBe(true);
        continue;
      }
      const body = JSON.parse(request.body!) as Record<string, unknown>;
      const schema = {
        '/recommendations': RECOMMENDATION_BODY,
        '/recommendations/items-to-items': ITEMS_TO_ITEMS_BODY,
        '/ingestion/interactions': INTERACTIONS_BODY,
        '/ingestion/items': ITEMS_BODY,
      }[path];
      expect(schema?.safeParse(body).success).toBe(true);
    }
  });

  it('is the same sequence for the same seed', () => {
    const again = Array.from({ length: 100 }, shopTraffic(itemIds, userIds));
    expect(again).toEqual(requests.slice(0, 100));
    expect(Array.from({ length: 100 }, shopTraffic(itemIds, userIds, 12))).not.toEqual(again);
  });
});
