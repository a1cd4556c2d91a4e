import { SCENARIO } from '../contract/scenarios.js';
import { recommendList } from '../engine/pipeline.js';
import type { RecommendationRequest } from '../engine/request.js';
import { TenantState } from '../state/tenant-state.js';
import type { ModelName } from '../artifacts/layout.js';
import { currentVersion, modelDir } from '../artifacts/layout.js';
import { loadModel } from '../models/model-loader.js';

/** An interaction of an evaluation's train part. */
export interface HarnessEvent {
  user: string;
  item: string;
  ts: number;
}

/**
 * A tenant's serving state fed with an evaluation's train part, ranked by the pipeline that serves
 * requests: `nextrec evaluate` measures exactly what the daemon would answer (docs/batch-models.md, "Evaluation").
 */
export class PipelineHarness {
  readonly tenant = new TenantState('evaluation');
  private readonly scenarios = new Set<string>();

  constructor(private readonly now: number) {}

  addItems(items: Iterable<string>, categories?: ReadonlyMap<string, string>): void {
    for (const externalId of items) {
      this.tenant.upsertItem({
        externalId,
        category: categories?.get(externalId) ?? null,
        attributes: {},
        expiresAt: null,
        available: true,
        feedManaged: false,
        createdAt: 0,
        updatedAt: 0,
      });
    }
  }

  /** Train events as `view`s of weight 1, as the protocol sends them. */
  addEvents(events: Iterable<HarnessEvent>): void {
    for (const event of events) {
      this.tenant.recordInteraction(
        {
          eventId: null,
          userId: event.user,
          sessionId: null,
          itemId: event.item,
          type: 'view',
          weight: 1,
          scenarioSlug: null,
          country: null,
          ts: event.ts,
          receivedAt: this.now,
        },
        this.now,
      );
    }
  }

  /** The catalog (every item of the dataset) and the train part. */
  prepare(items: readonly string[], train: readonly HarnessEvent[]): void {
    this.addItems(items);
    this.addEvents(train);
  }

  /** Loads a model's current version with the daemon's own loader. */
  load(dataDir: string, model: ModelName): void {
    const version = currentVersion(modelDir(dataDir, this.tenant.tenantId, model));
    if (version === undefined) throw new Error(`no ${model} model was built`);
    loadModel(dataDir, this.tenant, model, version);
  }

  /** The user-to-item list of `algorithm` for a user, as external ids, best first. */
  recommend(algorithm: string, user: string, count: number): string[] {
    const slug = `evaluate-${algorithm}`;
    if (!this.scenarios.has(slug)) {
      const scenario = SCENARIO.parse({ slug, logicType: 'user-to-item', algorithm });
      this.tenant.putConfigDocument('scenarios', slug, scenario);
      this.scenarios.add(slug);
    }
    const request: RecommendationRequest = {
      scenario: slug,
      userId: user,
      count,
      noCache: true,
      overrides: {},
      projection: {},
    };
    const list = recommendList(this.tenant, request, this.now);
    return list.ids.map((id) => this.tenant.catalog.externalIds[id]);
  }
}
