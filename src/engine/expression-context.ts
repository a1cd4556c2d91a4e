import { createHash } from 'node:crypto';
import type { LogicType } from '../contract/scenarios.js';
import { readKey, valueColumn, type EvaluationContext, type KeyPlan } from '../nextql/index.js';
import { configDerived, type ConfigSlot, type TenantConfig } from '../state/tenant-config.js';
import type { TenantState } from '../state/tenant-state.js';
import type { RecommendationRequest } from './request.js';

/**
 * The context of `context_item('k')` and `context_user('k')` (docs/guide.md, "Context in nextQL").
 *
 * The seed item is read where the request is ranked, from the catalog's columns as filters read items.
 * User documents live only in the event-loop thread's state (the ranking thread has no replica of them),
 * so the user's document travels with the request, and only when some filter or booster that may apply
 * calls context_user(): the tenant's scenarios and rules, or the request's own expressions.
 */

const CONTEXT_USER = 'context_user';

/** Whether some scenario or rule of the configuration calls context_user(), by configuration version. */
const usersRead: ConfigSlot<boolean> = new WeakMap();

function readsUser(config: TenantConfig): boolean {
  const texts: string[] = [];
  for (const scenario of config.scenarios.values()) {
    if (scenario.filter) texts.push(scenario.filter);
    texts.push(...scenario.boosters);
  }
  for (const rule of config.rules.values()) if (rule.expression) texts.push(rule.expression);
  return texts.some((text) => text.includes(CONTEXT_USER));
}

/**
 * Gives the request its user's document (`null`: no user row) when an expression that may apply to it
 * calls context_user(). A text that only mentions the name (in a string) costs a needless copy, nothing more.
 */
export function attachUserContext(tenant: TenantState, request: RecommendationRequest): void {
  if (request.userId === undefined) return;
  const { filter, boosters } = request.overrides;
  const reads =
    configDerived(tenant.config, usersRead, readsUser) ||
    (filter?.includes(CONTEXT_USER) ?? false) ||
    (boosters?.some((text) => text.includes(CONTEXT_USER)) ?? false);
  if (!reads) return;
  const user = tenant.users.get(request.userId);
  request.userContext = user
    ? {
        externalId: user.externalId,
        attributes: user.attributes,
        createdAt: new Date(user.createdAt).toISOString(),
      }
    : null;
}

/**
 * What a cache key adds for the user context a request carries: a hash of the document, so that an answer
 * is never served to a request whose user document differs ('' when it carries none).
 */
export function userContextKey(request: RecommendationRequest): string {
  if (request.userContext === undefined) return '';
  return createHash('sha1')
    .update(JSON.stringify(request.userContext ?? null))
    .digest('base64url');
}

/** The seed item whose keys context_item() reads: the first of itemIds for items-to-items. */
function seedItem(tenant: TenantState, logicType: LogicType, request: RecommendationRequest): number {
  const seed =
    logicType === 'item-to-item' || logicType === 'similar-products'
      ? request.itemId
      : logicType === 'items-to-items'
        ? request.itemIds?.[0]
        : undefined;
  if (seed === undefined) return -1;
  const id = tenant.catalog.idOf(seed);
  return id >= 0 && tenant.catalog.inCatalog[id] === 1 ? id : -1;
}

/** The context a request's expressions read; readers answer `undefined` (missing) without one. */
export function expressionContext(
  tenant: TenantState,
  logicType: LogicType,
  request: RecommendationRequest,
): EvaluationContext {
  const seed = seedItem(tenant, logicType, request);
  const { catalog } = tenant;
  const user = request.userContext ?? undefined;
  return {
    item: seed < 0 ? undefined : (key: KeyPlan) => valueColumn(catalog, key)?.[seed],
    user: user === undefined ? undefined : (key: KeyPlan) => readKey(user, key),
  };
}
