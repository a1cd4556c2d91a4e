/** Writes of configuration documents (scenarios, rules, feeds, tenant settings, ...), in a flush's ops. */
export type ConfigOp =
  | {
      area: 'config';
      op: 'save';
      tenantId: string;
      kind: string;
      key: string;
      document: unknown;
      /** Epoch milliseconds. */
      updatedAt: number;
    }
  | { area: 'config'; op: 'delete'; tenantId: string; kind: string; key: string };

/** Stores (or replaces) one configuration document of a tenant. */
export function saveConfigDocument(tenantId: string, kind: string, key: string, document: unknown): ConfigOp {
  return { area: 'config', op: 'save', tenantId, kind, key, document, updatedAt: Date.now() };
}

export function deleteConfigDocument(tenantId: string, kind: string, key: string): ConfigOp {
  return { area: 'config', op: 'delete', tenantId, kind, key };
}
