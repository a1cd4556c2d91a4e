import { parseIsoTimestamp } from '../contract/common.js';
import { TOP_LEVEL_FIELDS, walkPath, type TopLevelField } from '../nextql/keys.js';
import type { TenantState } from '../state/tenant-state.js';

const FIELDS: ReadonlySet<string> = new Set(TOP_LEVEL_FIELDS);

function instant(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value !== 'string') return undefined;
  const parsed = parseIsoTimestamp(value);
  return Number.isNaN(parsed) ? undefined : parsed;
}

/**
 * Item dates for the freshness boost: the value at the tenant's freshness keyPath (a raw document path
 * such as `attributes.publishedAt`), else createdAt when fallbackToCreatedAt. Read from the catalog's
 * columns for the candidates only.
 */
export function freshnessDates(tenant: TenantState): (id: number) => number | undefined {
  const { keyPath, fallbackToCreatedAt } = tenant.settings.freshness;
  const { catalog } = tenant;
  let column: ArrayLike<unknown> | undefined;
  let rest: string[] = [];
  if (keyPath) {
    const [head, ...tail] = keyPath.split('.');
    if (head === 'attributes' && tail.length > 0) {
      column = catalog.attribute(tail[0]);
      rest = tail.slice(1);
    } else if (FIELDS.has(head)) {
      column = catalog.field(head as TopLevelField);
      rest = tail;
    }
  }
  return (id) => {
    const date = column ? instant(walkPath(column[id], rest)) : undefined;
    if (date !== undefined) return date;
    return fallbackToCreatedAt && catalog.inCatalog[id] ? catalog.createdAt[id] : undefined;
  };
}
