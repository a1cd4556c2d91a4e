/** An item as per-document evaluation sees it. Dates may be ISO 8601 strings or Date objects. */
export interface NextqlItem {
  readonly externalId: string;
  readonly category?: string | null;
  readonly attributes?: Readonly<Record<string, unknown>> | null;
  readonly available?: boolean | null;
  readonly feedManaged?: boolean | null;
  readonly createdAt?: string | Date | null;
  readonly expiresAt?: string | Date | null;
}

/** The item fields a key names at the top level; any other key reads the attributes. */
export const TOP_LEVEL_FIELDS = [
  'externalId',
  'category',
  'available',
  'feedManaged',
  'createdAt',
  'expiresAt',
] as const;
export type TopLevelField = (typeof TOP_LEVEL_FIELDS)[number];

/** Where a quoted key reads from: a top-level field or an attribute, then `path` through nested objects. */
export type KeyPlan =
  | { readonly source: 'field'; readonly field: TopLevelField; readonly path: readonly string[] }
  | { readonly source: 'attribute'; readonly name: string; readonly path: readonly string[] };

const FIELD_BY_KEY: Readonly<Record<string, TopLevelField>> = {
  itemId: 'externalId',
  externalId: 'externalId',
  category: 'category',
  available: 'available',
  feedManaged: 'feedManaged',
  createdAt: 'createdAt',
  expiresAt: 'expiresAt',
};

/**
 * A top-level field name always means the field, even when the item lacks it (the attribute of the
 * same name stays reachable as `'attributes.<name>'`); any other key reads the attributes.
 */
export function planKey(key: string): KeyPlan {
  const segments = key.split('.');
  const first = segments[0];
  if (Object.hasOwn(FIELD_BY_KEY, first)) {
    return { source: 'field', field: FIELD_BY_KEY[first], path: segments.slice(1) };
  }
  if (first === 'attributes' && segments.length > 1) {
    return { source: 'attribute', name: segments[1], path: segments.slice(2) };
  }
  return { source: 'attribute', name: first, path: segments.slice(1) };
}

/** A stable identity for caching per-key derived data. */
export function keyPlanId(plan: KeyPlan): string {
  return JSON.stringify([plan.source, plan.source === 'field' ? plan.field : plan.name, ...plan.path]);
}

/** The value a key reads from an item; `undefined` when missing. */
export function readKey(item: NextqlItem, plan: KeyPlan): unknown {
  if (plan.source === 'field') return walkPath(fieldValue(item[plan.field]), plan.path);
  return walkPath(ownValue(item.attributes, plan.name), plan.path);
}

/**
 * Top-level fields are never legitimately null, so null means absent; dates read as ISO 8601 strings,
 * which is how item columns hold them.
 */
export function fieldValue(value: unknown): unknown {
  if (value === null) return undefined;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  return value;
}

export function walkPath(value: unknown, path: readonly string[]): unknown {
  let current = value;
  for (const segment of path) current = ownValue(current, segment);
  return current;
}

/** Own properties of plain objects only: arrays are not walked and inherited names (`toString`) are missing. */
function ownValue(container: unknown, name: string): unknown {
  if (typeof container !== 'object' || container === null || Array.isArray(container)) return undefined;
  return Object.hasOwn(container, name) ? (container as Record<string, unknown>)[name] : undefined;
}
