import { Command, Flags } from '@oclif/core';
import { SingleBar } from 'cli-progress';
import { buildTenant } from '../../../jobs/build.js';
import type { ModelName } from '../../artifacts/layout.js';
import type { LakeExportResult } from '../../contract/lake.js';
import { lakeTenants } from '../../lake/layout.js';
import type { Runners } from '../../store/api/runners.js';
import { exportNow } from '../../store/lake-export.js';
import { openStore } from '../../store/open-store.js';
import { operatorCall } from '../daemon-client.js';
import { storeFlags, storePlace, type StorePlace } from '../flags.js';

export const buildFlags = {
  tenant: Flags.string({ description: 'build this tenant only (default: every tenant)' }),
  ...storeFlags,
  quiet: Flags.boolean({ description: 'print nothing but failures (for cron)' }),
};

/** Has a running daemon (or the store, when none runs) export the lake, so a build reads every commit. */
export async function exportLake(place: StorePlace, tenantId?: string): Promise<string[]> {
  const result = await operatorCall<LakeExportResult>(place, {
    method: 'POST',
    path: '/lake/export',
    body: tenantId ? { tenantId } : {},
    direct: async (runtime) => ({
      exported: await exportNow(runtime.store, runtime.lake, tenantId),
    }),
  });
  return result.exported.map((entry) => entry.tenantId);
}

/**
 * `nextrec build …` (docs/batch-models.md): exports the lake, builds the models of each tenant and
 * publishes them; a daemon on the same data dir swaps them in. Exit code 0 when every tenant's models
 * were built, else 1 with a line per failed tenant.
 */
export async function runBuilds(
  command: Command,
  flags: { tenant?: string; 'data-dir': string; store?: string; quiet: boolean },
  models: readonly ModelName[],
  parameters: Partial<Record<ModelName, object>> = {},
): Promise<void> {
  const dataDir = flags['data-dir'];
  const exported = await exportLake(storePlace(flags), flags.tenant).catch((error: Error) =>
    command.error(`lake export failed: ${error.message}`, { exit: 1 }),
  );
  const tenants = flags.tenant ? [flags.tenant] : [...new Set([...exported, ...lakeTenants(dataDir)])].sort();
  const bar =
    process.stderr.isTTY && !flags.quiet
      ? new SingleBar({ format: 'building {bar} {value}/{total} models | {task}', hideCursor: true })
      : undefined;
  const claims = await buildClaims(flags).catch((error: Error) =>
    command.error(`cannot claim the builds: ${error.message}`, { exit: 1 }),
  );
  bar?.start(tenants.length * models.length, 0, { task: '' });
  const failures: string[] = [];
  const left: string[] = [];
  try {
    for (const tenantId of tenants) {
      if (claims && !(await claims.runners.claim('models', tenantId))) {
        left.push(tenantId);
        bar?.increment(models.length);
        continue;
      }
      await buildOne(tenantId);
    }
  } finally {
    bar?.stop();
    await claims?.close();
  }
  if (!flags.quiet)
    for (const tenantId of left)
      command.log(
        `${tenantId}: left to the process that holds its builds (a daemon or another build on the same store)`,
      );
  if (failures.length > 0) {
    for (const failure of failures) command.logToStderr(`build failed for ${failure}`);
    command.exit(1);
  }

  async function buildOne(tenantId: string): Promise<void> {
    try {
      const results = await buildTenant(dataDir, tenantId, models, { parameters }, (model, stage) => {
        if (stage === 'start') bar?.update({ task: `${tenantId} ${model}` });
        else bar?.increment();
      });
      if (!bar && !flags.quiet) {
        for (const { model, manifest } of results)
          command.log(
            `${tenantId} ${model} v${manifest.version}: ${manifest.source.interactions} interactions, ${manifest.source.items} items, ${(manifest.buildMs / 1000).toFixed(1)} s`,
          );
      }
    } catch (error) {
      failures.push(`${tenantId}: ${(error as Error).message.split('\n')[0]}`);
    }
  }
}

/**
 * On a store several daemons share (`--store`), one process runs a tenant's builds at a time
 * (docs/batch-models.md, "Cluster mode"): the builds are claimed as a daemon claims them, and a tenant
 * whose builds another process holds is left to it. The claims end when the store closes. None on the
 * DuckDB store, which one process owns: a daemon there is asked to export, and builds beside it as before.
 */
async function buildClaims(flags: {
  'data-dir': string;
  store?: string;
}): Promise<{ runners: Runners; close(): Promise<void> } | undefined> {
  if (flags.store === undefined) return undefined;
  const store = await openStore(flags['data-dir'], { url: flags.store });
  return { runners: store.runners, close: () => store.close() };
}
