import type { DuckDBConnection } from '@duckdb/node-api';
import type { Store } from '../store/database.js';
import { DAY_MS } from '../state/user-histories.js';
import { ItemNeighbours } from './item-neighbours.js';

export interface CooccurrenceOptions {
  /** Interactions older than this are not counted. */
  windowMs: number;
  /** Each identity contributes its most recent distinct items only, so heavy users don't dominate. */
  itemsPerIdentity: number;
  /** Neighbours kept per item. */
  neighboursPerItem: number;
}

export const DEFAULT_COOCCURRENCE: CooccurrenceOptions = {
  windowMs: 90 * DAY_MS,
  itemsPerIdentity: 50,
  neighboursPerItem: 50,
};

/**
 * Co-occurrence as cosine similarity of the items' identity sets: w(a,b) = |U_a ∩ U_b| / sqrt(|U_a| |U_b|).
 * The set work runs in DuckDB over the stored interactions; only the top neighbours per item come back,
 * already as dense ids, read column by column into the CSR arrays.
 */
const COOCCURRENCE_SQL = `
  WITH events AS (
    SELECT coalesce(user_id, session_id) AS who, item_id, max(ts) AS last_ts
      FROM interactions WHERE tenant_id = $1 AND ts >= $2
     GROUP BY ALL),
  recent AS (
    SELECT who, item_id FROM events
   QUALIFY row_number() OVER (PARTITION BY who ORDER BY last_ts DESC, item_id) <= $3),
  mapped AS (
    SELECT r.who, m.id FROM recent r JOIN temp.model_item_ids m ON m.external_id = r.item_id),
  frequency AS (SELECT id, count(*) AS n FROM mapped GROUP BY id),
  pairs AS (
    SELECT a.id AS a, b.id AS b, count(*) AS together
      FROM mapped a JOIN mapped b ON a.who = b.who AND a.id <> b.id
     GROUP BY ALL),
  scored AS (
    SELECT p.a, p.b, (p.together / sqrt(fa.n * fb.n))::FLOAT AS w
      FROM pairs p JOIN frequency fa ON fa.id = p.a JOIN frequency fb ON fb.id = p.b)
  SELECT a, b, w FROM scored
  QUALIFY row_number() OVER (PARTITION BY a ORDER BY w DESC, b) <= $4
  ORDER BY a, w DESC, b`;

async function uploadItemIds(db: DuckDBConnection, externalIds: readonly string[]): Promise<void> {
  await db.run('CREATE OR REPLACE TEMP TABLE model_item_ids (external_id VARCHAR, id INTEGER)');
  const appender = await db.createAppender('model_item_ids', 'main', 'temp');
  try {
    for (let id = 0; id < externalIds.length; id++) {
      appender.appendVarchar(externalIds[id]);
      appender.appendInteger(id);
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

/** Reads (a, b, w) rows sorted by a into CSR arrays over `itemCount` dense ids. */
async function readNeighbours(
  db: DuckDBConnection,
  tenantId: string,
  itemCount: number,
  options: CooccurrenceOptions,
  now: number,
): Promise<{ offsets: Int32Array; neighbours: Int32Array; weights: Float32Array }> {
  const result = await db.stream(COOCCURRENCE_SQL, [
    tenantId,
    now - options.windowMs,
    options.itemsPerIdentity,
    options.neighboursPerItem,
  ]);
  const counts = new Int32Array(itemCount + 1);
  let neighbours = new Int32Array(1024);
  let weights = new Float32Array(1024);
  let length = 0;
  for (
    let chunk = await result.fetchChunk();
    chunk && chunk.rowCount > 0;
    chunk = await result.fetchChunk()
  ) {
    const a = chunk.getColumnVector(0);
    const b = chunk.getColumnVector(1);
    const w = chunk.getColumnVector(2);
    if (length + chunk.rowCount > neighbours.length) {
      const size = Math.max(neighbours.length * 2, length + chunk.rowCount);
      const grownNeighbours = new Int32Array(size);
      grownNeighbours.set(neighbours.subarray(0, length));
      neighbours = grownNeighbours;
      const grownWeights = new Float32Array(size);
      grownWeights.set(weights.subarray(0, length));
      weights = grownWeights;
    }
    for (let row = 0; row < chunk.rowCount; row++) {
      counts[(a.getItem(row) as number) + 1]++;
      neighbours[length] = b.getItem(row) as number;
      weights[length] = w.getItem(row) as number;
      length++;
    }
  }
  for (let i = 1; i <= itemCount; i++) counts[i] += counts[i - 1];
  return { offsets: counts, neighbours: neighbours.slice(0, length), weights: weights.slice(0, length) };
}

export async function buildCooccurrence(
  store: Store,
  tenantId: string,
  externalIds: readonly string[],
  interactionCount: number,
  options: CooccurrenceOptions = DEFAULT_COOCCURRENCE,
  now = Date.now(),
): Promise<ItemNeighbours> {
  const ids = externalIds.slice();
  const csr = await store.read(async (db) => {
    await uploadItemIds(db, ids);
    return readNeighbours(db, tenantId, ids.length, options, now);
  });
  return new ItemNeighbours(csr.offsets, csr.neighbours, csr.weights, interactionCount, now);
}
