import type { Constraints, LogicType, Scenario, Segmentation } from '../contract/scenarios.js';
import type { GeoLift } from '../models/geo-lift.js';
import type { CompiledBooster, CompiledFilter, EvaluationContext } from '../nextql/index.js';
import type { TenantState } from '../state/tenant-state.js';
import type { HistoryView } from '../state/user-histories.js';
import type { ModelName } from '../artifacts/layout.js';
import type { CandidatePool } from './candidate-pool.js';
import type { Assignment } from './experiments.js';
import type { RecommendationRequest } from './request.js';

export interface FilterRelaxation {
  droppedClauses: string[];
  effectiveFilter: string | null;
  droppedEntireFilter: boolean;
  originalFilter: string;
}

/** What stage 1 (resolve) decides: the scenario with the request's overrides applied. */
export interface EffectiveConfig {
  scenario?: Scenario;
  logicType: LogicType;
  algorithm: Algorithm;
  /** Requested count after the maxItems cap. */
  count: number;
  minItems: number;
  /** Filter rules (highest priority first), then the scenario filter, split into top-level clauses. */
  filterClauses: string[];
  /** All the clauses as one compiled filter; none without clauses. */
  filter?: CompiledFilter;
  boosters: CompiledBooster[];
  constraints: Constraints;
  autoRelaxFilters: boolean;
  relaxEntireFilterOnEmpty: boolean;
  autoRelaxConstraints: boolean;
  segmentation?: Segmentation;
  itemsPerSegment?: number;
  autoExpandSegments: boolean;
}

export interface PipelineContext {
  readonly tenant: TenantState;
  readonly request: RecommendationRequest;
  readonly config: EffectiveConfig;
  readonly now: number;
  /** The experiment variant that serves the request, when its scenario runs one. */
  readonly assignment?: Assignment;
  /** userId (a session id may stand in for it): its history drives weighted-history and the purchase cap. */
  readonly identity?: string;
  readonly history?: HistoryView;
  /** Dense ids of the known seed items. */
  readonly seeds: number[];
  readonly geo?: GeoLift;
  /** The stages work on at least this many candidates (CONTRACT: max(3 × count, 100)). */
  readonly poolSize: number;
  /** What context_item() and context_user() read in the request's filters and boosters. */
  readonly expressionContext?: EvaluationContext;
  /** Dense ids of the known items the request excludes (stage 3); none without any. */
  readonly excluded?: ReadonlySet<number>;
  /** Rotation's factor per dense id of the request's rotated items; none without any. */
  readonly rotationFactors?: ReadonlyMap<number, number>;
}

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

export interface RankedList {
  ids: number[];
  /** Absent for algorithms without scores (recently-viewed). */
  scores?: number[];
  algorithm: string;
  scenario?: string;
  experiment?: Assignment;
  filterRelaxation?: FilterRelaxation;
}
