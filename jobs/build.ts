import type { ModelName } from '../src/artifacts/layout.js';
import { publishModel } from '../src/artifacts/publish.js';
import type { Manifest } from '../src/artifacts/manifest.js';
import { LakeDb, type LakeDbOptions, type LakeInstance } from './lake/lake-db.js';
import { jobFor } from './registry.js';

export interface BuildOptions {
  now?: number;
  threads?: number;
  lakeDb?: LakeDbOptions;
  /** A DuckDB to open the lake in, kept for builds one after another (else one of the build's own). */
  instance?: LakeInstance;
  /** Job parameters per model, over each job's defaults. */
  parameters?: Partial<Record<ModelName, object>>;
}

export interface BuildResult {
  model: ModelName;
  manifest: Manifest;
}

/**
 * Builds a tenant's models from its lake and publishes each as a new version (docs/batch-models.md).
 * The daemon swaps a published version in by itself. Models are built one after another, so the lake is
 * read once and the machine's cores go to one build at a time.
 */
export async function buildTenant(
  dataDir: string,
  tenantId: string,
  models: readonly ModelName[],
  options: BuildOptions = {},
  progress: (model: ModelName, stage: 'start' | 'done') => void = () => undefined,
): Promise<BuildResult[]> {
  const openLake = () => LakeDb.open(dataDir, tenantId, options.lakeDb, options.instance);
  let lake = await openLake();
  try {
    const results: BuildResult[] = [];
    for (const model of models) {
      progress(model, 'start');
      const job = jobFor(model);
      const started = performance.now();
      const build = () =>
        job.build(
          lake,
          { ...job.defaults, ...options.parameters?.[model] },
          { now: options.now ?? Date.now(), threads: options.threads ?? 2 },
        );
      const built = await build().catch(async (error: unknown) => {
        // Files it read were compacted away meanwhile (their rows are in the files that replaced them):
        // read the lake as it is now, once.
        if (!/No files found|No such file/i.test((error as Error)?.message ?? '') || !lake.filesRemoved())
          throw error;
        const read = lake;
        lake = await openLake();
        read.close();
        return build();
      });
      const manifest = publishModel(dataDir, tenantId, model, built, Math.round(performance.now() - started));
      results.push({ model, manifest });
      progress(model, 'done');
    }
    return results;
  } finally {
    lake.close();
  }
}
