import { MODEL_FORMATS } from '../../src/artifacts/formats.js';
import { modelItems, selectUserItems, type EventSelection } from '../item-models/user-items.js';
import type { LakeDb } from '../lake/lake-db.js';
import type { ModelJob } from '../model-job.js';
import { trainAls, type UserItemMatrix } from './als.js';

export interface FactorParameters extends EventSelection {
  factors: number;
  iterations: number;
  regularization: number;
  alpha: number;
  seed: number;
  /** `auto`: exact solves while they cost at most a few seconds per iteration, else conjugate gradient. */
  solver: 'auto' | 'cholesky' | 'cg';
}

/** Exact solves cost about entries × k² per half-step; above this, conjugate gradient. */
const EXACT_BUDGET = 4e9;

/** Reads the tenant's user × item strengths, by user, as CSR. */
async function userItemMatrix(
  lake: LakeDb,
  items: number,
): Promise<{ users: string[]; matrix: UserItemMatrix }> {
  await lake.db.run(`
    CREATE OR REPLACE TEMP TABLE model_users AS
      SELECT who, (row_number() OVER (ORDER BY who) - 1)::INTEGER AS row FROM (SELECT DISTINCT who FROM user_items)`);
  const users = await lake.texts('SELECT who FROM model_users ORDER BY row');
  const entries = await lake.count('SELECT count(*) FROM user_items');
  const offsets = new Int32Array(users.length + 1);
  const indexes = new Int32Array(entries);
  const values = new Float32Array(entries);
  const result = await lake.db.stream(`
    SELECT m.row, u.idx, u.strength::FLOAT FROM user_items u JOIN model_users m USING (who) ORDER BY m.row, u.idx`);
  let at = 0;
  for (
    let chunk = await result.fetchChunk();
    chunk && chunk.rowCount > 0;
    chunk = await result.fetchChunk()
  ) {
    const rows = chunk.getColumnVector(0);
    const idx = chunk.getColumnVector(1);
    const strength = chunk.getColumnVector(2);
    for (let r = 0; r < chunk.rowCount; r++) {
      offsets[(rows.getItem(r) as number) + 1]++;
      indexes[at] = idx.getItem(r) as number;
      values[at++] = strength.getItem(r) as number;
    }
  }
  for (let u = 0; u < users.length; u++) offsets[u + 1] += offsets[u];
  return { users, matrix: { users: users.length, items, offsets, indexes, values } };
}

/**
 * Implicit-feedback ALS (docs/batch-models.md): user and item factors whose dot products rank a user's
 * items, confidence 1 + alpha × strength, trained on both cores.
 */
export const factorsJob: ModelJob<FactorParameters> = {
  model: 'factors',
  defaults: {
    factors: 32,
    iterations: 15,
    regularization: 50,
    alpha: 5,
    seed: 2020,
    solver: 'auto',
    windowDays: 90,
    halfLifeDays: 0,
    itemsPerUser: 2_000,
  },
  async build(lake, parameters, context) {
    await selectUserItems(lake, parameters, context.now);
    const items = await modelItems(lake);
    const { users, matrix } = await userItemMatrix(lake, items.length);
    const solver =
      parameters.solver !== 'auto'
        ? parameters.solver
        : matrix.indexes.length * parameters.factors ** 2 <= EXACT_BUDGET
          ? 'cholesky'
          : 'cg';
    const model = await trainAls(matrix, { ...parameters, solver, threads: context.threads });
    const encoded = MODEL_FORMATS.factors.encode({
      factors: parameters.factors,
      items,
      itemFactors: model.itemFactors,
      users,
      userFactors: model.userFactors,
    });
    return {
      ...encoded,
      parameters: { ...parameters, solver, losses: model.losses },
      source: {
        interactions: await lake.count('SELECT count(*) FROM interactions'),
        users: users.length,
        items: items.length,
      },
    };
  },
};
