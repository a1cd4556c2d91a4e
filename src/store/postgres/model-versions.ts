import type { Pool } from 'pg';
import type { ModelVersionRecord } from '../api/runners.js';

/**
 * The version of each tenant's model to serve, a row per tenant and model (migration 4) that every daemon
 * sharing the database reads (src/store/api/runners.ts). A version only replaces an older one, so that
 * two publishers racing (a build and an erasure's rewrite) leave the newer recorded, whichever commits last.
 */
export function pgModelVersions(pool: Pool): ModelVersionRecord {
  return {
    async published() {
      const { rows } = await pool.query<{ tenant_id: string; model: string; version: string }>(
        'SELECT tenant_id, model, version FROM model_versions',
      );
      return new Map(rows.map((row) => [`${row.tenant_id}/${row.model}`, Number(row.version)]));
    },
    async publish(tenantId, model, version) {
      await pool.query(
        `INSERT INTO model_versions (tenant_id, model, version, published_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (tenant_id, model) DO UPDATE
           SET version = excluded.version, published_at = excluded.published_at
         WHERE model_versions.version < excluded.version`,
        [tenantId, model, version, Date.now()],
      );
    },
  };
}
