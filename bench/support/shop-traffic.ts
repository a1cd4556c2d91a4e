import { Rng } from '../../fixtures/prng.js';

/**
 * The traffic a live shop sends (docs/benchmarks.md: bench/soak, and bench/memory's soak): 70%
 * recommendations over the routes of docs/guide.md, "Recommendations", 25% single-event interactions and 5%
 * item upserts (a price or stock change of an item of the catalog).
 */
export const TRAFFIC_KINDS = [
  'user-to-item',
  'item-to-item',
  'items-to-items',
  'legacy-get',
  'recently-viewed',
  'interaction',
  'item-upsert',
] as const;
export type TrafficKind = (typeof TRAFFIC_KINDS)[number];

/** Each kind's share of the requests, in the order of TRAFFIC_KINDS. */
const SHARES: Record<TrafficKind, number> = {
  'user-to-item': 0.2,
  'item-to-item': 0.15,
  'items-to-items': 0.1,
  'legacy-get': 0.15,
  'recently-viewed': 0.1,
  interaction: 0.25,
  'item-upsert': 0.05,
};

/** Writes: the ingestion routes. Everything else asks for a list. */
export function isWrite(kind: TrafficKind): boolean {
  return kind === 'interaction' || kind === 'item-upsert';
}

export interface ShopRequest {
  kind: TrafficKind;
  method: 'GET' | 'POST';
  path: string;
  /** JSON text, for POSTs. */
  body?: string;
}

/** What a shop's pages show of an item. */
const PROJECTION = ['attributes.name', 'attributes.price'];
const PROJECTION_QUERY = `count=10&includedProperties=${PROJECTION.join(',')}`;

/** The next request of the mix, drawn at random (deterministic for `seed`) over the shop's ids. */
export function shopTraffic(
  itemIds: readonly string[],
  userIds: readonly string[],
  seed = 11,
): () => ShopRequest {
  const rng = new Rng(seed);
  const item = () => itemIds[rng.int(itemIds.length)];
  const user = () => userIds[rng.int(userIds.length)];
  const bounds: [TrafficKind, number][] = [];
  let sum = 0;
  for (const kind of TRAFFIC_KINDS) bounds.push([kind, (sum += SHARES[kind])]);
  const post = (kind: TrafficKind, path: string, body: unknown): ShopRequest => ({
    kind,
    method: 'POST',
    path,
    body: JSON.stringify(body),
  });
  const list = { count: 10, includedProperties: PROJECTION };

  return () => {
    const roll = rng.next() * sum;
    const kind = bounds.find(([, bound]) => roll < bound)?.[0] ?? 'item-upsert';
    switch (kind) {
      case 'user-to-item':
        return post(kind, '/recommendations', { logicType: kind, userId: user(), ...list });
      case 'item-to-item':
        return post(kind, '/recommendations', { logicType: kind, itemId: item(), ...list });
      case 'items-to-items':
        return post(kind, '/recommendations/items-to-items', { itemIds: [item(), item(), item()], ...list });
      case 'legacy-get':
        return {
          kind,
          method: 'GET',
          path: `/recommendations/user-to-item/${encodeURIComponent(user())}?${PROJECTION_QUERY}`,
        };
      case 'recently-viewed':
        return {
          kind,
          method: 'GET',
          path: `/recommendations/recently-viewed/${encodeURIComponent(user())}?${PROJECTION_QUERY}`,
        };
      case 'interaction': {
        const type = rng.chance(0.8) ? 'view' : rng.chance(0.7) ? 'cart' : 'purchase';
        return post(kind, '/ingestion/interactions', {
          interactions: [{ userId: user(), itemId: item(), type }],
        });
      }
      case 'item-upsert': {
        const attributes = { stock: rng.int(50), price: 5 + rng.int(200) };
        return post(kind, '/ingestion/items', { items: [{ externalId: item(), attributes }] });
      }
    }
  };
}
