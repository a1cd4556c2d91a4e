import type { ModelName } from '../src/artifacts/layout.js';
import { factorsJob } from './factors/factors-job.js';
import { cooccurrenceJob } from './item-models/cooccurrence.js';
import { easeJob } from './item-models/ease-job.js';
import type { ModelJob } from './model-job.js';
import { vectorsJob } from './vectors/vectors-job.js';

/** The job that builds each model. */
export const JOBS: Partial<Record<ModelName, ModelJob<object>>> = {
  cooccurrence: cooccurrenceJob as unknown as ModelJob<object>,
  ease: easeJob as unknown as ModelJob<object>,
  factors: factorsJob as unknown as ModelJob<object>,
  vectors: vectorsJob as unknown as ModelJob<object>,
};

export function jobFor(model: ModelName): ModelJob<object> {
  const job = JOBS[model];
  if (!job) throw new Error(`no job builds the model '${model}'`);
  return job;
}
