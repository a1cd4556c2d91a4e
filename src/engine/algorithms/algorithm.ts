import type { ModelName } from '../../artifacts/layout.js';
import type { LogicType } from '../../contract/scenarios.js';
import type { CandidatePool } from '../candidate-pool.js';
import type { PipelineContext } from '../context.js';

export interface Algorithm {
  readonly name: string;
  readonly description: string;
  readonly logicTypes: readonly LogicType[];
  /** The batch models it ranks from (docs/batch-models.md). */
  readonly models: readonly ModelName[];
  /** Whether stage 4 multiplies the algorithm's own candidates by the geo lift. */
  readonly geoLift: boolean;
  /** Whether popularity fills the pool after the algorithm's own candidates. */
  readonly popularityFill: boolean;
  /** Whether the response carries scores (and so whether score-changing stages apply). */
  readonly scored: boolean;
  /** The algorithm's own candidates, best first, scores > 0; seeds excluded. */
  candidates(context: PipelineContext): CandidatePool;
}
