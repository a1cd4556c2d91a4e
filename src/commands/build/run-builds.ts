import { Command, Flags } from '@oclif/core';
import { SingleBar } from 'cli-progress';
import { buildTenant } from '../../../jobs/build.js';
import type { ModelName } from '../../artifacts/layout.js';
import type { LakeExportResult } from '../../contract/lake.js';
import { lakeTenants } from '../../lake/layout.js';
import { exportNow } from '../../store/lake-export.js';
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
  bar?.start(tenants.length * models.length, 0, { task: '' });
  const failures: string[] = [];
  for (const tenantId of tenants) {
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
  bar?.stop();
  if (failures.length > 0) {
    for (const failure of failures) command.logToStderr(`build failed for ${failure}`);
    command.exit(1);
  }
}
