import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateShop } from '../fixtures/shop.js';
import { INTERACTIONS_BODY, ITEMS_BODY, USERS_BODY } from './contract/ingestion.js';
import type { TenantCredentials } from './contract/tenants.js';
import { appendInteractions } from './ingestion/events.js';
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
  for (const interactions of chunks(shop.interactions, BATCH)) {
    await appendInteractions(runtime, tenant, INTERACTIONS_BODY.parse({ interactions }).interactions);
  }
  writeFileSync(path.join(runtime.dataDir, 'demo-credentials.json'), JSON.stringify(credentials, null, 2), {
    mode: 0o600,
  });
  return credentials;
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
