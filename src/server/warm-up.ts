import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Pool } from 'undici';
import { LOGIC_TYPES, type LogicType } from '../contract/scenarios.js';
import type { Ranker } from '../engine/ranker.js';
import { releasingCollection } from '../state/memory.js';
import type { ServingState, TenantState } from '../state/tenant-state.js';
import { WarmUpMessage, dropWarmUpRecommender } from './warm-up-request.js';

/** How much warming up a daemon does before it reports ready (docs/configuration.md, "Health and metrics"). */
export interface WarmUpLimits {
  /** The tenants warmed up: the largest, by items. */
  tenants: number;
  /** Requests sent over all tenants, at most. */
  requests: number;
  /** No request is sent after this many milliseconds. */
  budgetMs: number;
  /** Requests in flight at once, so that ranking takes them in batches as it does under traffic. */
  concurrency: number;
  /** Users with a history, and items, taken from each tenant as the seeds of its requests. */
  seeds: number;
}

export const WARM_UP_LIMITS: Readonly<WarmUpLimits> = Object.freeze({
  tenants: 8,
  requests: 3_000,
  budgetMs: 3_000,
  concurrency: 16,
  seeds: 32,
});

/** What a warm-up did, for the daemon's log. */
export interface WarmUpSummary {
  tenants: number;
  requests: number;
  /** Requests answered 2xx; the others (a scenario whose seeds no item matches, say) warmed up too. */
  answered: number;
  /** How long each step took, in ms (see `warmUp`). */
  ms: { settled: number; requests: number; answerRecord: number; collection: number };
}

/** A request of the warm-up's. */
interface WarmUpCall {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  query?: Record<string, string>;
  body?: object;
}

/** A placement the warm-up asks for: a scenario (of its logic type), or a logic type alone. */
interface Placement {
  scenario?: string;
  logicType: LogicType;
}

/** What a tenant's requests are made of. */
interface Seeds {
  tenantId: string;
  placements: Placement[];
  users: string[];
  items: string[];
  /** Its countries with the most events of the last 7 days, for geo-lifted lists. */
  countries: string[];
  /** A few category names, for the texts of searches. */
  categories: readonly string[];
}

/**
 * Readies serving before the daemon reports ready (docs/configuration.md, "Health and metrics"). First the ranking
 * thread, when there is one, applies what the daemon loaded (its replica of the state, the models), and
 * the vector indexer looks at every item for a text changed while the daemon was stopped (for at most
 * the budget of the requests: embedding many items may take longer, and goes on meanwhile). Then
 * requests for the largest tenants' scenarios and logic types go through the app's own routes, as
 * clients would send them: the event loop's routes and the ranking thread compile their code, and
 * ranking builds what it keeps (a filter's attribute columns, popularity by country, items rendered as
 * answers show them). The requests are the app's warm-up (see `isWarmUp`): they leave no trace in the
 * store, the record of answers, the result cache or the metrics. Bounded by `limits`; a tenant with no
 * item is left out. Then the record of answers reads what it wrote today before a restart, which it
 * would otherwise read before its first write, in the first second of traffic. Last, both threads
 * collect their garbage, what the start-up load and the warm-up left, which V8 would otherwise collect
 * in one long pause under the first traffic.
 */
export async function warmUp(
  app: FastifyInstance,
  ranker: Ranker,
  limits: Readonly<WarmUpLimits> = WARM_UP_LIMITS,
): Promise<WarmUpSummary> {
  const since = (start: number) => Math.round(performance.now() - start);
  let start = performance.now();
  // The vector indexer looks at every item at the start (loadBuilt), on this thread: the requests
  // would wait for it turn after turn, and what is left of it would share the first traffic's.
  await Promise.all([ranker.settled?.(), atMost(app.runtime.vectors.idle(), limits.budgetMs)]);
  const settledMs = since(start);

  const requestsStarted = performance.now();
  const tenants = largestTenants(app.runtime.state, limits.tenants).map((tenant) =>
    seedsOf(tenant, limits.seeds),
  );
  const calls = interleaved(tenants.map(requestsOf));
  let requests = 0;
  let answered = 0;
  await app.ready();
  const door = tenants.length > 0 ? await privateDoor(app) : undefined;
  const send = async (pool: Pool) => {
    while (requests < limits.requests && performance.now() - requestsStarted < limits.budgetMs) {
      const call = calls.next();
      if (call.done) return;
      requests++;
      const { method, url, query, body } = call.value;
      const headers =
        body === undefined
          ? call.value.headers
          : Object.assign({ 'content-type': 'application/json' }, call.value.headers);
      const response = await pool.request({
        method,
        path: query === undefined ? url : `${url}?${new URLSearchParams(query)}`,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      await response.body.dump();
      if (response.statusCode < 300) answered++;
    }
  };
  try {
    if (door) {
      const pool = new Pool('http://localhost', {
        socketPath: door.socketPath,
        connections: limits.concurrency,
      });
      try {
        await Promise.all(Array.from({ length: limits.concurrency }, () => send(pool)));
      } finally {
        await pool.close();
      }
    }
  } finally {
    await door?.close();
    dropWarmUpRecommender(app);
  }
  const requestsMs = since(requestsStarted);

  start = performance.now();
  await app.runtime.answers.readStored();
  const answerRecordMs = since(start);

  start = performance.now();
  releasingCollection()();
  ranker.collectGarbage?.();
  await ranker.settled?.();
  return {
    tenants: tenants.length,
    requests,
    answered,
    ms: { settled: settledMs, requests: requestsMs, answerRecord: answerRecordMs, collection: since(start) },
  };
}

/**
 * An HTTP server of the app's own that only the warm-up's requests reach: the app's routes behind a
 * socket file in a directory of the daemon's alone, whose requests are WarmUpMessages. They go through
 * the same code as a client's, Node's HTTP server and the socket's included, which `app.inject` would
 * leave cold.
 */
async function privateDoor(app: FastifyInstance): Promise<{ socketPath: string; close(): Promise<void> }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-warm-up-'));
  const socketPath = path.join(dir, 'http.sock');
  const server: Server = createServer({ IncomingMessage: WarmUpMessage }, (request, response) =>
    app.routing(request, response),
  );
  const close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return { socketPath, close };
}

/** Resolves when `promise` does, or after `ms`, whichever comes first. */
async function atMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([promise, timeout]);
  clearTimeout(timer);
}

/** The tenants with the most items (then the most identities), those with none left out. */
function largestTenants(state: ServingState, count: number): TenantState[] {
  return state
    .ids()
    .map((id) => state.get(id)!)
    .filter((tenant) => tenant.catalog.itemCount > 0)
    .sort((a, b) => b.catalog.itemCount - a.catalog.itemCount || b.histories.size - a.histories.size)
    .slice(0, count);
}

function seedsOf(tenant: TenantState, count: number): Seeds {
  const placements: Placement[] = [...tenant.config.scenarios.values()].map(({ slug, logicType }) => ({
    scenario: slug,
    logicType,
  }));
  for (const logicType of LOGIC_TYPES) placements.push({ logicType });
  return {
    tenantId: tenant.tenantId,
    placements,
    users: spread(tenant.histories.identities(), tenant.histories.size, count),
    items: popularItems(tenant, count),
    countries: busiestCountries(tenant, 3),
    categories: tenant.catalog.categoryTable.all().slice(0, 4),
  };
}

/** `count` of the `size` values, evenly apart. */
function spread(values: Iterable<string>, size: number, count: number): string[] {
  const step = Math.max(1, Math.floor(size / count));
  const taken: string[] = [];
  let index = 0;
  for (const value of values) {
    if (index++ % step === 0) taken.push(value);
    if (taken.length === count) break;
  }
  return taken;
}

/** The catalog's items with the most interactions of the last 30 days, most first. */
function popularItems(tenant: TenantState, count: number): string[] {
  const { catalog, recentCounts } = tenant;
  // The `count` most so far, fewest first.
  const best: { id: number; events: number }[] = [];
  for (let id = 0; id < catalog.size; id++) {
    if (catalog.inCatalog[id] !== 1) continue;
    const events = recentCounts.count(id);
    if (best.length === count) {
      if (events <= best[0].events) continue;
      best.shift();
    }
    let at = 0;
    while (at < best.length && best[at].events < events) at++;
    best.splice(at, 0, { id, events });
  }
  return best.reverse().map(({ id }) => catalog.externalIds[id]);
}

/** The countries with the most events of the last 7 days. */
function busiestCountries(tenant: TenantState, count: number): string[] {
  const codes = Array.from({ length: Math.max(0, tenant.countries.size - 1) }, (_, i) => i + 1);
  return codes
    .filter((code) => tenant.geoCounts.countryTotal(code) > 0)
    .sort((a, b) => tenant.geoCounts.countryTotal(b) - tenant.geoCounts.countryTotal(a))
    .slice(0, count)
    .map((code) => tenant.countries.nameOf(code)!);
}

/** The tenants' requests in turn, one of each tenant's at a time, until every tenant's have ended. */
function* interleaved(sources: Iterator<WarmUpCall>[]): Generator<WarmUpCall> {
  let live = sources;
  while (live.length > 0) {
    const going: Iterator<WarmUpCall>[] = [];
    for (const source of live) {
      const next = source.next();
      if (next.done) continue;
      yield next.value;
      going.push(source);
    }
    live = going;
  }
}

/**
 * A tenant's requests, round after round: each round asks for every placement once, with the next
 * seeds, by turns through the GET and POST routes, with and without the result cache, and every third
 * with a country; a search once a round. Without end (the limits end the warm-up); none for a
 * placement whose seeds the tenant lacks.
 */
function* requestsOf(seeds: Seeds): Generator<WarmUpCall> {
  const { tenantId, users, items, countries } = seeds;
  const headers = { 'x-tenant-id': tenantId };
  // A tenant with neither users nor items has no request to make.
  if (users.length === 0 && items.length === 0) return;
  for (let round = 0; ; round++) {
    const country = round % 3 === 2 && countries.length > 0 ? countries[round % countries.length] : undefined;
    const get = round % 2 === 0;
    for (const { scenario, logicType } of seeds.placements) {
      const seed = seedFor(logicType, users, items, round);
      if (!seed) continue;
      const query: Record<string, string> = { count: '10', noCache: String(round % 4 < 2) };
      if (scenario !== undefined) query.scenario = scenario;
      if (country !== undefined) query.country = country;
      // The POST routes remember bodies that use the result cache (repeated-bodies.ts): the warm-up's
      // never do.
      if (logicType === 'items-to-items') {
        const body = Object.assign({ noCache: true }, seed);
        yield { method: 'POST', url: '/recommendations/items-to-items', headers, query, body };
      } else if (get) {
        const id = seed.userId ?? seed.itemId!;
        const url = `/recommendations/${logicType}/${encodeURIComponent(id)}`;
        yield { method: 'GET', url, headers, query };
      } else {
        const body = Object.assign(
          scenario === undefined ? { logicType } : { scenario },
          { count: 10, noCache: true },
          seed,
          country !== undefined && { country },
        );
        yield { method: 'POST', url: '/recommendations', headers, body };
      }
    }
    // A category and an item's id, of the seeds': the texts searched for are as few as the seeds, and
    // so are the query vectors the vector indexer keeps of them.
    const { categories } = seeds;
    if (categories.length > 0 && items.length > 0) {
      const text = `${categories[round % categories.length]} ${items[round % items.length]}`;
      yield { method: 'GET', url: '/recommendations/search', headers, query: { query: text, count: '10' } };
    }
  }
}

function seedFor(
  logicType: LogicType,
  users: string[],
  items: string[],
  round: number,
): { userId?: string; itemId?: string; itemIds?: string[] } | undefined {
  if (logicType === 'user-to-item' || logicType === 'recently-viewed') {
    return users.length > 0 ? { userId: users[round % users.length] } : undefined;
  }
  if (items.length === 0) return undefined;
  if (logicType === 'items-to-items') {
    return { itemIds: [items[round % items.length], items[(round + 1) % items.length]] };
  }
  return { itemId: items[round % items.length] };
}
