import { OneAtATimePerKey } from '../one-at-a-time.js';
import type { ModelVersionRecord, RunnerClaim, RunnerKind, Runners } from './api/runners.js';

/** The key of a kind of work of a tenant. */
export function runnerKey(kind: RunnerKind, tenantId: string): string {
  return `${kind}/${tenantId}`;
}

/**
 * The runners of a store one process owns (DuckDB): every claim is granted, and `exclusive` tasks of a
 * tenant's kind run one at a time in this process.
 */
export class SingleProcessRunners implements Runners {
  private readonly claimed = new Map<string, RunnerClaim>();
  private readonly tasks = new OneAtATimePerKey();

  claim(kind: RunnerKind, tenantId: string): Promise<boolean> {
    this.claimed.set(runnerKey(kind, tenantId), { kind, tenantId });
    return Promise.resolve(true);
  }

  exclusive<T>(kind: RunnerKind, tenantId: string, task: () => Promise<T>): Promise<T> {
    return this.tasks.run(runnerKey(kind, tenantId), task);
  }

  claims(): RunnerClaim[] {
    return [...this.claimed.values()];
  }
}

/** Where one process owns the store, the artifacts' `CURRENT` pointers are the record of versions. */
export const POINTERS_ONLY: ModelVersionRecord = {
  published: () => Promise.resolve(new Map()),
  publish: () => Promise.resolve(),
};
