import { generateInteractions, type ShopInteraction } from '../../fixtures/shop.js';
import type { Batch } from './load.js';

/** A mid-sized shop, so that events spread over many users and items as in production. */
const SHOP = { items: 10_000, users: 50_000, sessions: 20_000 };

/**
 * `events` generated interactions as bodies of `/ingestion/interactions` of `size` events each, serialized
 * once, before any timing, so that sending costs the load generator little.
 */
export function interactionBatches(events: number, size: number): Batch[] {
  const batches: Batch[] = [];
  let pending: ShopInteraction[] = [];
  const flush = () => {
    batches.push({ body: Buffer.from(JSON.stringify({ interactions: pending })), events: pending.length });
    pending = [];
  };
  for (const event of generateInteractions({ ...SHOP, interactions: events })) {
    pending.push(event);
    if (pending.length === size) flush();
  }
  if (pending.length > 0) flush();
  return batches;
}
