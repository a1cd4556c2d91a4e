import type { LakeDb } from '../lake/lake-db.js';

/** Which events count, and how much, in every item model. */
export interface EventSelection {
  /** Events older than this many days are not counted. */
  windowDays: number;
  /** An event counts half as much this many days later; 0: age does not matter. */
  halfLifeDays: number;
  /** Each user's most recent distinct items only, so heavy users cost at most this squared in pairs. */
  itemsPerUser: number;
}

const DAY_MS = 86_400_000;

/**
 * Fills the temp tables every item model starts from:
 * - `model_items (item_id, idx)`: the items that occur, numbered 0.. by external id;
 * - `user_items (who, idx, v, strength)`: one row per user and item, strength = Σ weight × age decay and
 *   v = ln(1 + strength) — an item seen ten times counts more than once but not ten times;
 * - `item_users (idx, n, sq)`: per item its number of users and Σ v².
 */
export async function selectUserItems(lake: LakeDb, selection: EventSelection, now: number): Promise<void> {
  const since = now - selection.windowDays * DAY_MS;
  const decay =
    selection.halfLifeDays > 0
      ? `pow(0.5, greatest(${now} - ts, 0) / ${selection.halfLifeDays * DAY_MS})`
      : '1';
  await lake.db.run(`
    CREATE OR REPLACE TEMP TABLE strengths AS
      SELECT * FROM (
        SELECT coalesce(user_id, session_id) AS who, item_id, sum(weight * ${decay}) AS strength, max(ts) AS last_ts
          FROM interactions
         WHERE ts >= ${since} AND coalesce(user_id, session_id) IS NOT NULL AND weight > 0
         GROUP BY ALL)
     QUALIFY row_number() OVER (PARTITION BY who ORDER BY last_ts DESC, item_id) <= ${selection.itemsPerUser}`);
  await lake.db.run(`
    CREATE OR REPLACE TEMP TABLE model_items AS
      SELECT item_id, (row_number() OVER (ORDER BY item_id) - 1)::INTEGER AS idx
        FROM (SELECT DISTINCT item_id FROM strengths)`);
  await lake.db.run(`
    CREATE OR REPLACE TEMP TABLE user_items AS
      SELECT s.who, i.idx, ln(1 + s.strength) AS v, s.strength FROM strengths s JOIN model_items i USING (item_id)`);
  await lake.db.run(`
    CREATE OR REPLACE TEMP TABLE item_users AS
      SELECT idx, count(*) AS n, sum(v * v) AS sq FROM user_items GROUP BY idx`);
}

/** The model's items in index order. */
export async function modelItems(lake: LakeDb): Promise<string[]> {
  return lake.texts('SELECT item_id FROM model_items ORDER BY idx');
}
