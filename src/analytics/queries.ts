import { INTERACTION_TYPES as TYPE_NAMES } from '../contract/ingestion.js';
import { algorithmCode } from '../engine/recomm-id.js';
import type { AnalyticsReads, ItemFunnel, ScenarioDay, TypeTotal } from '../store/api/analytics.js';
import { money, rate, type Window } from './window.js';

/**
 * The analytics of a tenant over a window of UTC days (docs/guide.md, "Analytics and experiments"), each
 * one read of the store's analytics (src/store/api/analytics.ts), shaped as the routes answer. Clicks are
 * views that carry a scenarioSlug; an impression counts once per item it showed. Copies of session events
 * made by identity merges are left out: their originals count.
 */

const DAY_MS = 86_400_000;

/** A zero-filled series over the window's days from rows of a day number and its values. */
function series<R extends { day: number }, T>(
  window: Window,
  found: readonly R[],
  make: (row: R | undefined) => T,
): (T & { date: string })[] {
  const byDay = new Map(found.map((row) => [row.day, row]));
  return window.days.map((date) => {
    const row = byDay.get(Date.parse(`${date}T00:00:00Z`) / DAY_MS);
    return { date, ...make(row) };
  });
}

export async function summary(reads: AnalyticsReads, tenantId: string, window: Window, items: number) {
  const found = await reads.summary(tenantId, window);
  const byType = typeTotals(found.types);
  return {
    items,
    users: found.users,
    interactions: byType.data.reduce((sum, { count }) => sum + count, 0),
    impressions: found.impressions,
    byType: Object.fromEntries(byType.data.map(({ type, count }) => [type, count])),
    // The prices and profits of purchases (docs/guide.md, "Revenue").
    revenue: money(byType.revenue),
    profit: money(byType.profit),
  };
}

export async function interactionVolume(reads: AnalyticsReads, tenantId: string, window: Window) {
  const found = await reads.interactionsByDay(tenantId, window);
  return { data: series(window, found, (row) => ({ count: row?.count ?? 0 })) };
}

/** Interactions of every type (0 for those without any), and the sums of purchases' prices and profits. */
function typeTotals(found: readonly TypeTotal[]) {
  const counts = new Map(found.map(({ type, count }) => [type, count]));
  const purchases = found.find(({ type }) => type === 'purchase');
  return {
    data: TYPE_NAMES.map((type) => ({ type, count: counts.get(type) ?? 0 })),
    revenue: purchases?.price ?? 0,
    profit: purchases?.profit ?? 0,
  };
}

export async function interactionsByType(reads: AnalyticsReads, tenantId: string, window: Window) {
  return { data: typeTotals(await reads.interactionTotals(tenantId, window)).data };
}

export async function topItems(reads: AnalyticsReads, tenantId: string, window: Window, limit: number) {
  return { data: await reads.topItems(tenantId, window, limit) };
}

export async function catalogCoverage(
  reads: AnalyticsReads,
  tenantId: string,
  window: Window,
  catalogSize: number,
) {
  const recommendedItems = Math.min(await reads.itemsAnswered(tenantId, window), catalogSize);
  return { catalogSize, recommendedItems, coverage: rate(recommendedItems, catalogSize) };
}

/** An item's funnel as the answers give it. */
function funnelRow({ itemId, impressions, clicks, carts, purchases }: ItemFunnel) {
  return { itemId, impressions, clicks, carts, purchases, ctr: rate(clicks, impressions) };
}

export async function topRecommended(reads: AnalyticsReads, tenantId: string, window: Window, limit: number) {
  const found = await reads.itemFunnels(tenantId, window, limit, undefined);
  return {
    data: found.map((row) => {
      const figures = funnelRow(row);
      return { ...figures, conversion: rate(figures.purchases, figures.clicks) };
    }),
  };
}

export async function scenarioTopItems(
  reads: AnalyticsReads,
  tenantId: string,
  window: Window,
  limit: number,
  scenario: string,
) {
  return { data: (await reads.itemFunnels(tenantId, window, limit, scenario)).map(funnelRow) };
}

export async function scenarioFunnelVolume(
  reads: AnalyticsReads,
  tenantId: string,
  window: Window,
  scenario: string,
) {
  const found = await reads.scenarioDays(tenantId, window, scenario);
  return {
    data: series(window, found, (row: ScenarioDay | undefined) => ({
      impressions: row?.impressions ?? 0,
      clicks: row?.clicks ?? 0,
      carts: row?.carts ?? 0,
      purchases: row?.purchases ?? 0,
      revenue: money(row?.revenue ?? 0),
    })),
  };
}

export async function scenarioSummary(
  reads: AnalyticsReads,
  tenantId: string,
  window: Window,
  scenario: string,
) {
  const found = await reads.scenarioDays(tenantId, window, scenario);
  let [impressions, clicks, carts, purchases, revenue] = [0, 0, 0, 0, 0];
  for (const day of found) {
    impressions += day.impressions;
    clicks += day.clicks;
    carts += day.carts;
    purchases += day.purchases;
    revenue += day.revenue;
  }
  return {
    impressions,
    clicks,
    carts,
    purchases,
    ctr: rate(clicks, impressions),
    conversion: rate(purchases, clicks),
    revenue: money(revenue),
  };
}

/**
 * Per algorithm (beyond the contract, docs/guide.md, "Analytics and experiments"): the answers it gave in the window, and the item
 * impressions and clicks in the window whose recommId names it (see recomm-id.ts).
 */
export async function algorithms(reads: AnalyticsReads, tenantId: string, window: Window) {
  const found = await reads.algorithmFigures(tenantId, window);
  const shown = new Map(found.impressions.map(({ code, count }) => [code, count]));
  const clicked = new Map(found.clicks.map(({ code, count }) => [code, count]));
  const data = found.answers.map(({ algorithm, answers }) => {
    const code = algorithmCode(algorithm);
    const impressions = shown.get(code) ?? 0;
    const clicks = clicked.get(code) ?? 0;
    return { algorithm, answers, impressions, clicks, ctr: rate(clicks, impressions) };
  });
  data.sort((a, b) => b.answers - a.answers || (a.algorithm < b.algorithm ? -1 : 1));
  return { data };
}
