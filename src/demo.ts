import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateShop } from '../fixtures/shop.js';
import { experiments, scenarios } from './config/resources.js';
import { IMPRESSIONS_BODY, INTERACTIONS_BODY, ITEMS_BODY, USERS_BODY } from './contract/ingestion.js';
import { EXPERIMENT, SCENARIO } from './contract/scenarios.js';
import { variantOf } from './engine/experiments.js';
import { recommendList } from './engine/pipeline.js';
import { newRecommId } from './engine/recomm-id.js';
import { renderList } from './engine/response-body.js';
import { resolveProjection } from './engine/projection.js';
import type { TenantCredentials } from './contract/tenants.js';
import { appendImpressions, appendInteractions } from './ingestion/events.js';
import { upsertItems } from './ingestion/items.js';
import { upsertUsers } from './ingestion/users.js';
import type { Runtime } from './runtime.js';
import { createTenant } from './tenants/tenant-service.js';

export const DEMO_TENANT = 'demo';
const BATCH = 5_000;

function chunks<T>(rows: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += size) out.push(rows.slice(i, i + size));
  return out;
}

/**
 * On an empty data dir, creates the `demo` tenant with a generated shop so that a newcomer has something
 * to ask for. Returns the credentials, or undefined when the data dir already had tenants.
 */
export async function seedDemoTenant(runtime: Runtime): Promise<TenantCredentials | undefined> {
  if (runtime.state.ids().length > 0) return undefined;
  const credentials = await createTenant(runtime, DEMO_TENANT);
  const tenant = runtime.state.get(DEMO_TENANT)!;
  const shop = generateShop({ now: new Date() });
  // Through the same schemas as HTTP bodies, so the demo data is validated and normalised like any other.
  for (const items of chunks(shop.items, BATCH)) {
    await upsertItems(runtime, tenant, ITEMS_BODY.parse({ items }).items);
  }
  for (const users of chunks(shop.users, BATCH)) {
    await upsertUsers(runtime, tenant, USERS_BODY.parse({ users }).users);
  }
  // The placements the generated events name, and an experiment on the home page, so that the dashboard
  // has funnels and results to show from the first start.
  for (const scenario of DEMO_SCENARIOS) await scenarios.create(runtime, tenant, SCENARIO.parse(scenario));
  const experiment = EXPERIMENT.parse(DEMO_EXPERIMENT);
  await experiments.create(runtime, tenant, experiment);
  // Home events go to the variant each user is assigned, as a client logging with the served slug would;
  // purchases carry their item's price and a profit of a fifth of it (docs/guide.md, "Revenue").
  const prices = new Map(shop.items.map((item) => [item.externalId, Number(item.attributes.price)]));
  const interactions = shop.interactions.map((event) =>
    withPrice(
      event.scenarioSlug === 'home' && event.userId !== undefined
        ? { ...event, scenarioSlug: variantOf(experiment, event.userId).scenario }
        : event,
      prices,
    ),
  );
  for (const batch of chunks(interactions, BATCH)) {
    await appendInteractions(runtime, tenant, INTERACTIONS_BODY.parse({ interactions: batch }).interactions);
  }
  for (const batch of chunks(
    demoImpressions(
      interactions,
      shop.items.map((item) => item.externalId),
    ),
    BATCH,
  )) {
    await appendImpressions(runtime, tenant, IMPRESSIONS_BODY.parse({ impressions: batch }).impressions);
  }
  const answers = recordDemoAnswers(
    runtime,
    shop.users.map((user) => user.externalId),
  );
  // The answers' impressions, and a click on every fifth, carrying their recommIds (per-algorithm CTR).
  const shownAt = new Date().toISOString();
  await appendImpressions(
    runtime,
    tenant,
    IMPRESSIONS_BODY.parse({
      impressions: answers.map((answer) => ({ ...answer, timestamp: shownAt })),
    }).impressions,
  );
  await appendInteractions(
    runtime,
    tenant,
    INTERACTIONS_BODY.parse({
      interactions: answers
        .filter((_, i) => i % 5 === 0)
        .map(({ userId, itemIds, recommId, scenarioSlug }) => ({
          userId,
          itemId: itemIds[0],
          type: 'view',
          recommId,
          scenarioSlug,
          timestamp: shownAt,
        })),
    }).interactions,
  );
  writeFileSync(path.join(runtime.dataDir, 'demo-credentials.json'), JSON.stringify(credentials, null, 2), {
    mode: 0o600,
  });
  return credentials;
}

/** Share of a demo purchase's price that is profit. */
const DEMO_MARGIN = 0.2;

/** A purchase with the price of one unit of its item and its profit; any other event as it is. */
function withPrice<T extends { type: string; itemId: string }>(event: T, prices: Map<string, number>): T {
  const price = prices.get(event.itemId);
  if (event.type !== 'purchase' || price === undefined || !Number.isFinite(price)) return event;
  return { ...event, amount: 1, price, profit: Math.round(price * DEMO_MARGIN * 100) / 100 };
}

const DEMO_SCENARIOS = [
  { slug: 'home', name: 'Home page', logicType: 'user-to-item' },
  {
    slug: 'home-b',
    name: 'Home page, matrix factorization',
    logicType: 'user-to-item',
    algorithm: 'matrix-factorization',
  },
  { slug: 'pdp', name: 'Product page', logicType: 'item-to-item' },
  { slug: 'cart', name: 'Cart', logicType: 'items-to-items' },
];

const DEMO_EXPERIMENT = {
  slug: 'home-test',
  name: 'Weighted history against matrix factorization on the home page',
  baseScenario: 'home',
  variants: [
    { scenario: 'home', weight: 1 },
    { scenario: 'home-b', weight: 1 },
  ],
};

/** Items shown beside the one clicked in an impression. */
const SHOWN_BESIDE = 4;

/**
 * An impression before each view that carries a scenario: the viewed item among SHOWN_BESIDE others, so
 * that funnels have a CTR. The others are drawn from the catalog by the event's position, deterministically.
 */
function demoImpressions(
  events: {
    userId?: string;
    sessionId?: string;
    itemId: string;
    type: string;
    scenarioSlug?: string;
    timestamp?: string;
  }[],
  itemIds: string[],
) {
  return events.flatMap((event, i) => {
    if (event.type !== 'view' || event.scenarioSlug === undefined || event.timestamp === undefined) return [];
    const others = Array.from(
      { length: SHOWN_BESIDE },
      (_, k) => itemIds[(i * 7919 + k * 104_729) % itemIds.length],
    );
    return [
      {
        ...(event.userId !== undefined ? { userId: event.userId } : { sessionId: event.sessionId }),
        itemIds: [...new Set([event.itemId, ...others])],
        scenarioSlug: event.scenarioSlug,
        timestamp: new Date(Date.parse(event.timestamp) - 1_000).toISOString(),
      },
    ];
  });
}

/**
 * Answers to a few hundred users' home page, recorded as served ones are, for catalog coverage; returns
 * what each answer showed, under which scenario (the user's experiment variant) and recommId.
 */
function recordDemoAnswers(runtime: Runtime, userIds: string[]) {
  const tenant = runtime.state.get(DEMO_TENANT)!;
  const projection = resolveProjection({ returnProperties: false });
  const now = Date.now();
  return userIds.slice(0, 300).flatMap((userId) => {
    const request = { scenario: 'home', userId, count: 10, noCache: true, overrides: {}, projection: {} };
    const list = recommendList(tenant, request, now);
    const recommId = newRecommId(list.algorithm);
    runtime.answers.record(DEMO_TENANT, userId, renderList(tenant.catalog, list, projection));
    const itemIds = list.ids.map((id) => tenant.catalog.externalIds[id]);
    return itemIds.length === 0 ? [] : [{ userId, itemIds, recommId, scenarioSlug: list.scenario ?? 'home' }];
  });
}

export function demoInstructions(credentials: TenantCredentials, baseUrl: string, itemId: string): string {
  const auth = `-H 'X-Tenant-Id: ${credentials.tenantId}' -H 'X-Api-Key: ${credentials.apiKey}'`;
  return [
    `demo tenant created (credentials saved in demo-credentials.json in the data dir):`,
    JSON.stringify(credentials, null, 2),
    `try:`,
    `  curl -s ${auth} '${baseUrl}/catalog/items?page=1&limit=2'`,
    `  curl -s ${auth} '${baseUrl}/recommendations/item-to-item/${itemId}?count=5&returnProperties=false'`,
    `  curl -s ${auth} -H 'Content-Type: application/json' -X POST ${baseUrl}/ingestion/interactions \\`,
    `       -d '{"interactions":[{"userId":"user-00001","itemId":"${itemId}","type":"view","country":"US"}]}'`,
  ].join('\n');
}
