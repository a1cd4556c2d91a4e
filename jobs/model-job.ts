import type { ModelName } from '../src/artifacts/layout.js';
import type { BuiltModel } from '../src/artifacts/publish.js';
import type { LakeDb } from './lake/lake-db.js';

/** What every job is given besides its parameters. */
export interface JobContext {
  /** The time the job counts event ages from (epoch ms). */
  now: number;
  /** Worker threads a job may use for its own computing. */
  threads: number;
}

/**
 * One contract for every model (docs/batch-models.md): a job builds from the lake into files and a
 * manifest's fields; `publishModel` writes them as a version, and serving's loader decodes and checks them
 * with the model's format (src/artifacts/formats.ts).
 */
export interface ModelJob<P extends object> {
  readonly model: ModelName;
  readonly defaults: Readonly<P>;
  build(lake: LakeDb, parameters: P, context: JobContext): Promise<BuiltModel>;
}
