/**
 * Rotation benchmark (docs/guide.md, "Rotation"): user-to-item requests ranked in this thread, the same
 * requests without rotation (noCache, so that both rank every time) as the baseline, then with
 * rotationRate 0.5 and 1 for users whose record already holds 20 answers each (and more with each round,
 * up to the record's 500 returns an identity). Also the record's own work per request (the factors before
 * ranking, the record after). Prints one JSON line; ratios are against the baseline measured just before
 * and just after in the same round, medians over the rounds.
 */
import { LocalRanker } from '../src/engine/ranker.js';
import { Recommender } from '../src/engine/recommender.js';
import { fromBody, type RecommendationRequest } from '../src/engine/request.js';
import { RotationRecord, type RotationSettings } from '../src/engine/rotation.js';
import { DEFAULT_WEIGHTS } from '../src/contract/tenant-settings.js';
import { TenantState } from '../src/state/tenant-state.js';
import { median } from './support/latency-windows.js';
import { random } from './support/random.js';

const ITEM_COUNT = 50_000;
const EVENT_COUNT = 200_000;
const USER_COUNT = 500;
const COUNT = 10;
const ANSWERS_BEFORE = 20;
const MEASURED = 3_000;
const ROUNDS = 5;
const NOW = Date.now();

function buildTenant(): TenantState {
  const tenant = new TenantState('bench');
  for (let i = 0; i < ITEM_COUNT; i++) {
    tenant.upsertItem({
      externalId: `sku-${i}`,
      category: `c${i % 40}`,
      attributes: { price: i % 300 },
      expiresAt: null,
      available: true,
      feedManaged: false,
      createdAt: NOW - 400 * 86_400_000,
      updatedAt: NOW - 400 * 86_400_000,
    });
  }
  const next = random(7);
  for (let e = 0; e < EVENT_COUNT; e++) {
    // Skewed popularity: low ids are viewed much more often.
    const item = Math.floor(ITEM_COUNT * next() ** 3);
    const user = e % (USER_COUNT * 4);
    tenant.recordInteraction(
      {
        eventId: null,
        userId: `user-${user}`,
        sessionId: null,
        itemId: `sku-${item}`,
        type: 'view',
        weight: DEFAULT_WEIGHTS.view,
        scenarioSlug: null,
        country: null,
        ts: NOW - Math.floor(next() * 20 * 86_400_000),
        receivedAt: NOW,
      },
      NOW,
    );
  }
  return tenant;
}

function requestFor(user: number, extra: Record<string, unknown>): RecommendationRequest {
  return fromBody({
    logicType: 'user-to-item',
    userId: `user-${user}`,
    count: COUNT,
    returnProperties: false,
    ...extra,
  });
}

/** Requests per second over MEASURED requests, users in turn. */
function throughput(recommender: Recommender, tenant: TenantState, extra: Record<string, unknown>): number {
  const done = (answer: string | Error) => {
    if (answer instanceof Error) throw answer;
  };
  const start = process.hrtime.bigint();
  for (let i = 0; i < MEASURED; i++)
    recommender.recommend(tenant, requestFor(i % USER_COUNT, extra), done, NOW);
  return MEASURED / (Number(process.hrtime.bigint() - start) / 1e9);
}

/** Microseconds per request of the record's own work: the factors of an identity, then its record. */
function recordMicros(tenant: TenantState): number {
  const record = new RotationRecord();
  const settings = (user: number): RotationSettings => ({
    identity: `user-${user}`,
    rate: 0.5,
    windowMs: 7_200_000,
  });
  const items = (user: number, answer: number) =>
    Array.from({ length: COUNT }, (_, k) => `sku-${(user * 7 + answer * COUNT + k) % ITEM_COUNT}`);
  for (let answer = 0; answer < ANSWERS_BEFORE; answer++) {
    for (let user = 0; user < USER_COUNT; user++)
      record.record(tenant, settings(user), items(user, answer), NOW);
  }
  const start = process.hrtime.bigint();
  for (let i = 0; i < MEASURED * 10; i++) {
    const user = i % USER_COUNT;
    record.rotated(tenant, settings(user), NOW);
    record.record(tenant, settings(user), items(user, ANSWERS_BEFORE + i), NOW);
  }
  return Number(process.hrtime.bigint() - start) / 1e3 / (MEASURED * 10);
}

const tenant = buildTenant();
const recommender = new Recommender(new LocalRanker());
// Warm-up, and the rotation record of every user: ANSWERS_BEFORE answers each.
throughput(recommender, tenant, { noCache: true });
for (let answer = 0; answer < ANSWERS_BEFORE; answer++) {
  for (let user = 0; user < USER_COUNT; user++) {
    recommender.recommend(tenant, requestFor(user, { rotationRate: 0.5 }), () => undefined, NOW);
  }
}
// Rounds of the three cases, judged by their median ratios: the machine's speed drifts.
const ratios05: number[] = [];
const ratios1: number[] = [];
const baselines: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  const baseline = throughput(recommender, tenant, { noCache: true });
  const half = throughput(recommender, tenant, { rotationRate: 0.5 });
  const full = throughput(recommender, tenant, { rotationRate: 1 });
  const baselineAgain = throughput(recommender, tenant, { noCache: true });
  const reference = (baseline + baselineAgain) / 2;
  baselines.push(reference);
  ratios05.push(half / reference);
  ratios1.push(full / reference);
}
const micros = recordMicros(tenant);

console.log(
  JSON.stringify({
    benchmark: 'rotation',
    items: ITEM_COUNT,
    users: USER_COUNT,
    rounds: ROUNDS,
    baselineRequestsPerSecond: Math.round(median(baselines)),
    ratioToBaseline: {
      rotation05: Number(median(ratios05).toFixed(3)),
      rotation1: Number(median(ratios1).toFixed(3)),
    },
    ratiosByRound: {
      rotation05: ratios05.map((r) => Number(r.toFixed(3))),
      rotation1: ratios1.map((r) => Number(r.toFixed(3))),
    },
    recordMicrosPerRequest: Number(micros.toFixed(2)),
    rankingMicrosPerRequest: Number((1e6 / median(baselines)).toFixed(1)),
  }),
);
