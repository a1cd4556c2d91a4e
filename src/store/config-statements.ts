import type { Statement } from './rows.js';

/** Stores (or replaces) one configuration document of a tenant. */
export function saveConfigDocument(
  tenantId: string,
  kind: string,
  key: string,
  document: unknown,
): Statement {
  return {
    sql: 'INSERT OR REPLACE INTO config_documents VALUES ($1, $2, $3, $4, $5)',
    params: [tenantId, kind, key, JSON.stringify(document), Date.now()],
  };
}

export function deleteConfigDocument(tenantId: string, kind: string, key: string): Statement {
  return {
    sql: 'DELETE FROM config_documents WHERE tenant_id = $1 AND kind = $2 AND key = $3',
    params: [tenantId, kind, key],
  };
}
