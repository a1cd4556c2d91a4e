/**
 * In-memory tenants for the engine's unit tests: crafted items, interactions, neighbours and configuration,
 * built straight into a TenantState (no store, no HTTP).
 */
import type { z } from 'zod';
import { ApiError } from '../../src/contract/errors.js';
import { RECOMMENDATION_BODY } from '../../src/contract/recommendations.js';
import { RULE, SCENARIO, SEGMENTATION } from '../../src/contract/scenarios.js';
import { DEFAULT_WEIGHTS, type TenantSettings } from '../../src/contract/tenant-settings.js';
import { CandidatePool } from '../../src/engine/candidate-pool.js';
import type { PipelineContext } from '../../src/engine/context.js';
import { recommendList, type RankedList } from '../../src/engine/pipeline.js';
import type { Recommender } from '../../src/engine/recommender.js';
import { fromBody, type RecommendationRequest } from '../../src/engine/request.js';
import { resolve } from '../../src/engine/stages/resolve.js';
import { normalizeCountry } from '../../src/geo/countries.js';
import { ItemNeighbours } from '../../src/state/item-neighbours.js';
import { TenantState } from '../../src/state/tenant-state.js';
import type { InteractionType, StoredItem } from '../../src/store/rows.js';

export const DAY = 86_400_000;
/** The clock of every fixture: events default to it and stages run at it. */
export const NOW = Date.parse('2026-06-01T00:00:00Z');

export function daysAgo(days: number): number {
  return NOW - days * DAY;
}

export interface ItemSpec {
  category?: string | null;
  attributes?: Record<string, unknown>;
  available?: boolean;
  createdAt?: number;
}

/** A stored catalog item; createdAt defaults to a year before NOW (never "fresh"). */
export function item(externalId: string, spec: ItemSpec = {}): StoredItem {
  const createdAt = spec.createdAt ?? daysAgo(365);
  return {
    externalId,
    category: spec.category ?? null,
    attributes: spec.attributes ?? {},
    expiresAt: null,
    available: spec.available ?? true,
    feedManaged: false,
    createdAt,
    updatedAt: createdAt,
  };
}

export interface EventSpec {
  item: string;
  /** Neither user nor session: each event gets its own anonymous session (popularity only). */
  user?: string;
  session?: string;
  type?: InteractionType;
  /** Normalised as ingestion does: invalid codes and OTH become global. */
  country?: string;
  /** Epoch ms; default NOW. */
  ts?: number;
  weight?: number;
  /** The same event this many times. */
  times?: number;
}

/** `[a, b, weight]`: b is a neighbour of a (one direction only, so tests control both sides). */
export type NeighbourPair = [from: string, to: string, weight: number];

export interface TenantSpec {
  tenantId?: string;
  /** A bare string is an available item without category or attributes. */
  items?: (string | StoredItem)[];
  events?: EventSpec[];
  neighbours?: NeighbourPair[];
  scenarios?: z.input<typeof SCENARIO>[];
  rules?: z.input<typeof RULE>[];
  segmentations?: z.input<typeof SEGMENTATION>[];
  freshness?: Partial<TenantSettings['freshness']>;
}

let anonymous = 0;

/** Items first (so dense ids follow their order), then events, neighbours and configuration. */
export function buildTenant(spec: TenantSpec = {}): TenantState {
  const tenant = new TenantState(spec.tenantId ?? 't1');
  for (const entry of spec.items ?? []) tenant.upsertItem(typeof entry === 'string' ? item(entry) : entry);
  addEvents(tenant, spec.events ?? []);
  if (spec.neighbours) tenant.replaceNeighbours(neighboursOf(tenant, spec.neighbours));
  for (const scenario of spec.scenarios ?? []) {
    const parsed = SCENARIO.parse(scenario);
    tenant.putConfigDocument('scenarios', parsed.slug, parsed);
  }
  for (const rule of spec.rules ?? []) {
    const parsed = RULE.parse(rule);
    tenant.putConfigDocument('rules', parsed.slug, parsed);
  }
  for (const segmentation of spec.segmentations ?? []) {
    const parsed = SEGMENTATION.parse(segmentation);
    tenant.putConfigDocument('segmentations', parsed.segmentationId, parsed);
  }
  if (spec.freshness) {
    tenant.replaceSettings({
      ...tenant.settings,
      freshness: { ...tenant.settings.freshness, ...spec.freshness },
    });
  }
  return tenant;
}

/** Upserts shoes a (price 10) and b (20), bags c (30) and d (40), each named by its id in capitals. */
export function upsertShoesAndBags(tenant: TenantState): void {
  for (const [id, category, price] of [
    ['a', 'shoes', 10],
    ['b', 'shoes', 20],
    ['c', 'bags', 30],
    ['d', 'bags', 40],
  ] as const) {
    tenant.upsertItem(item(id, { category, attributes: { name: id.toUpperCase(), price } }));
  }
}

/** Records interactions as ingestion stores them (countries normalised, per-type default weights). */
export function addEvents(tenant: TenantState, events: readonly EventSpec[], now = NOW): void {
  for (const event of events) {
    for (let n = 0; n < (event.times ?? 1); n++) {
      const type = event.type ?? 'view';
      const anonymousSession = event.user === undefined && event.session === undefined;
      tenant.recordInteraction(
        {
          eventId: null,
          userId: event.user ?? null,
          sessionId: anonymousSession ? `sess_anon_${anonymous++}` : (event.session ?? null),
          itemId: event.item,
          type,
          weight: event.weight ?? DEFAULT_WEIGHTS[type],
          scenarioSlug: null,
          country: normalizeCountry(event.country),
          ts: event.ts ?? now,
          receivedAt: now,
        },
        now,
      );
    }
  }
}

/** The pairs as a CSR model over the tenant's dense ids, each item's neighbours best first. */
export function neighboursOf(tenant: TenantState, pairs: readonly NeighbourPair[]): ItemNeighbours {
  const rows = new Map<number, [number, number][]>();
  for (const [from, to, weight] of pairs) {
    const a = tenant.catalog.ensureId(from);
    const row = rows.get(a) ?? [];
    row.push([tenant.catalog.ensureId(to), weight]);
    rows.set(a, row);
  }
  const size = tenant.catalog.size;
  const offsets = new Int32Array(size + 1);
  const neighbours: number[] = [];
  const weights: number[] = [];
  for (let id = 0; id < size; id++) {
    for (const [to, weight] of (rows.get(id) ?? []).sort((x, y) => y[1] - x[1])) {
      neighbours.push(to);
      weights.push(weight);
    }
    offsets[id + 1] = neighbours.length;
  }
  return new ItemNeighbours(
    offsets,
    Int32Array.from(neighbours),
    Float32Array.from(weights),
    pairs.length,
    NOW,
  );
}

export type RequestBody = z.input<typeof RECOMMENDATION_BODY>;

/** A request as `POST /recommendations` builds it from this body (validated by the route's schema). */
export function request(body: RequestBody): RecommendationRequest {
  return fromBody(RECOMMENDATION_BODY.parse(body));
}

/** Stage 1 for a body. */
export function contextOf(tenant: TenantState, body: RequestBody, now = NOW): PipelineContext {
  return resolve(tenant, request(body), now);
}

/** The whole pipeline for a body. */
export function rank(tenant: TenantState, body: RequestBody, now = NOW): RankedList {
  return recommendList(tenant, request(body), now);
}

/** The external ids the pipeline returns for a body, in order. */
export function rankIds(tenant: TenantState, body: RequestBody, now = NOW): string[] {
  return externalIds(tenant, rank(tenant, body, now).ids);
}

export function externalIds(tenant: TenantState, ids: ArrayLike<number>): string[] {
  return Array.from(ids, (id) => tenant.catalog.externalIds[id]);
}

export function idOf(tenant: TenantState, externalId: string): number {
  return tenant.catalog.idOf(externalId);
}

/** A pool of `[externalId, score]` entries, in that order. */
export function poolOf(tenant: TenantState, entries: [string, number][]): CandidatePool {
  const pool = new CandidatePool();
  for (const [externalId, score] of entries) pool.push(idOf(tenant, externalId), score);
  return pool;
}

/** The pool's entries as `[externalId, score]`, in order. */
export function entriesOf(tenant: TenantState, pool: CandidatePool): [string, number][] {
  return Array.from(pool.idView(), (id, i) => [tenant.catalog.externalIds[id], pool.scores[i]]);
}

/**
 * The recommender's answer to a request it answers synchronously: cached, or ranked by a `LocalRanker`
 * without a turn queue.
 */
export function answerNow(
  recommender: Recommender,
  tenant: TenantState,
  recommendation: RecommendationRequest,
  now = NOW,
): string {
  let answer: string | Error | undefined;
  recommender.recommend(tenant, recommendation, (outcome) => (answer = outcome), now);
  if (answer === undefined) throw new Error('the recommender did not answer synchronously');
  if (answer instanceof Error) throw answer;
  return answer;
}

/** The ApiError `run` throws; anything else (or nothing) fails the test. */
export function apiErrorOf(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError, nothing was thrown');
}
