import { MODEL_FORMATS } from '../artifacts/formats.js';
import { MODEL_NAMES, currentVersion, modelDir, type ModelName } from '../artifacts/layout.js';
import type { Manifest } from '../artifacts/manifest.js';
import { openVersion } from '../artifacts/open.js';
import type { ServingState, TenantState } from '../state/tenant-state.js';
import { servingFactors } from './factor-model.js';
import { servingNeighbours } from './neighbours-artifact.js';

export interface LoaderLog {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
}

/**
 * Opens a version of a tenant's model, checks it and puts it in the tenant's serving state (and so, through
 * the state's changes, in the ranking thread's replica). Throws, changing nothing, when the artifact is
 * missing, incomplete, corrupt or inconsistent.
 */
export function loadModel(dataDir: string, tenant: TenantState, model: ModelName, version: number): Manifest {
  const artifact = openVersion(dataDir, tenant.tenantId, model, version);
  const { manifest } = artifact;
  const builtAt = Date.parse(manifest.builtAt);
  switch (model) {
    case 'cooccurrence':
    case 'ease': {
      const lists = MODEL_FORMATS[model].decode(artifact);
      tenant.replaceNeighbours(
        servingNeighbours(lists, tenant.catalog, manifest.source.interactions, builtAt),
        model,
      );
      break;
    }
    case 'factors': {
      const factors = MODEL_FORMATS.factors.decode(artifact);
      tenant.replaceFactors(
        servingFactors(factors, tenant.catalog, manifest.parameters, manifest.source.interactions, builtAt),
      );
      break;
    }
  }
  return manifest;
}

/**
 * Hot swap (README, "Batch models"): every `intervalMs` it reads each tenant's CURRENT pointers and loads
 * a version newer than the one serving. A version that fails to load is logged and not tried again; the
 * model serving keeps serving.
 */
export class ModelLoader {
  private readonly serving = new Map<string, number>();
  private readonly refused = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private log: LoaderLog = { info: () => undefined, error: () => undefined };

  constructor(
    private readonly dataDir: string,
    private readonly state: ServingState,
    private readonly models: readonly ModelName[] = MODEL_NAMES,
  ) {}

  /** Loads what is current now, then looks for newer versions every `intervalMs`. */
  start(log: LoaderLog, intervalMs = 1_000): void {
    this.log = log;
    this.poll();
    this.timer = setInterval(() => this.poll(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** The version of a tenant's model that serves, if any. */
  servingVersion(tenantId: string, model: ModelName): number | undefined {
    return this.serving.get(`${tenantId}/${model}`);
  }

  /** Loads every newer CURRENT version now; returns how many were swapped in. */
  poll(): number {
    let swapped = 0;
    for (const tenantId of this.state.ids()) {
      const tenant = this.state.get(tenantId)!;
      for (const model of this.models) {
        const key = `${tenantId}/${model}`;
        const version = currentVersion(modelDir(this.dataDir, tenantId, model));
        if (
          version === undefined ||
          version <= (this.serving.get(key) ?? 0) ||
          this.refused.get(key) === version
        )
          continue;
        try {
          const started = performance.now();
          const manifest = loadModel(this.dataDir, tenant, model, version);
          this.serving.set(key, version);
          swapped++;
          const ms = Math.round(performance.now() - started);
          this.log.info({ tenantId, model, version, source: manifest.source, ms }, 'model swapped in');
        } catch (error) {
          this.refused.set(key, version);
          this.log.error(
            { tenantId, model, version, reason: (error as Error).message },
            'model refused; the previous one keeps serving',
          );
        }
      }
    }
    return swapped;
  }
}
