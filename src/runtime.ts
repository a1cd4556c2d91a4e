import { mkdirSync } from 'node:fs';
import { AnswerLog } from './analytics/answer-log.js';
import { modelsInUse } from './engine/algorithms/registry.js';
import { FeedService } from './feeds/service.js';
import { feedNetwork, type FeedNetwork } from './feeds/network.js';
import { MODEL_NAMES } from './artifacts/layout.js';
import { ModelLoader, type ModelPreparers } from './models/model-loader.js';
import { ModelScheduler, processBuildRunner } from './models/model-scheduler.js';
import { quickBuildRunner } from './models/quick-builds.js';
import { LakeExporter } from './store/lake-export.js';
import { BuildLauncher } from './models/build-launcher.js';
import { openStore } from './store/open-store.js';
import type { ChangePosition } from './store/api/changes.js';
import type { Store } from './store/store.js';
import type { DuckDbSettings } from './store/duckdb-settings.js';
import { loadState, type StoredDocumentKind } from './state/load-state.js';
import type { StateChangeLog } from './state/state-changes.js';
import { ServingState } from './state/tenant-state.js';
import { CredentialRegistry } from './tenants/credentials.js';
import { jwtSecret, serverSecret } from './tenants/secrets.js';
import type { Embedder } from './vector/embedder.js';
import { HashingEmbedder } from './vector/hashing-embedder.js';
import { VectorIndexer } from './models/vector-indexer.js';
import { CONFIG_RESOURCES } from './config/resources.js';
import { vectorDefaultsDocuments } from './config/vector-defaults.js';
import { feedDocuments } from './feeds/feeds.js';
import { loadCredentials } from './tenants/load-credentials.js';
import { rateLimitDocuments } from './tenants/rate-limit-service.js';
import { tenantSettingsDocuments } from './tenants/settings-service.js';

/** Every kind of configuration document, from their owners: the state and the store know none of them. */
export const DOCUMENT_KINDS: readonly StoredDocumentKind[] = [
  tenantSettingsDocuments,
  vectorDefaultsDocuments,
  rateLimitDocuments,
  ...CONFIG_RESOURCES,
  feedDocuments,
];

/** What the daemon and the store-opening CLI commands share: the store, the serving state, credentials. */
export interface Runtime {
  readonly dataDir: string;
  readonly store: Store;
  readonly state: ServingState;
  readonly credentials: CredentialRegistry;
  readonly serverSecret: string;
  /** The key of bearer tokens (JWT). */
  readonly jwtSecret: string;
  /** Exports committed rows to the lake; idle until the daemon has it follow the store. */
  readonly lake: LakeExporter;
  /** Swaps newly published model versions in; idle until the daemon starts it. */
  readonly loader: ModelLoader;
  /** Keeps models current by running the batch jobs; idle until the daemon starts it. */
  readonly models: ModelScheduler;
  /** Embeds upserted items for vector search, in the background. */
  readonly vectors: VectorIndexer;
  /** The record of answers given, for analytics; idle until the daemon starts it. */
  readonly answers: AnswerLog;
  /** Catalog feeds and their syncs; their schedules run once the daemon starts them. */
  readonly feeds: FeedService;
  /**
   * Where a store other daemons share was in its log of changes when the state was loaded: following
   * their writes starts there (src/following/). None for a store one process owns.
   */
  readonly loadedAt?: ChangePosition;
}

/** How a runtime embeds and where its feeds fetch from (defaults: the hashing embedder, public addresses). */
export interface RuntimeOptions {
  embedder?: Embedder;
  /** A local transformers model directory, for the vectors builds. */
  modelDir?: string;
  feedNetwork?: FeedNetwork;
  /** `postgres://...`: PostgreSQL is the store of record (docs/scaling.md); none: the DuckDB file. */
  storeUrl?: string;
  /** The store's DuckDB limits (default: from the environment, docs/memory.md). */
  duckdb?: DuckDbSettings;
  /** Model builds and loads keep off one CPU (docs/batch-models.md; default: when there are several). */
  spareCpu?: boolean;
}

/**
 * The store, the serving state loaded from it, and what keeps the models current. `changes` records the
 * state's changes for a ranking thread's replica; `preparers` are where model versions are opened and
 * checked (the daemon: loading threads of their own).
 */
export async function openRuntime(
  dataDir: string,
  changes?: StateChangeLog,
  preparers?: ModelPreparers,
  options: RuntimeOptions = {},
): Promise<Runtime> {
  const vectors = { embedder: options.embedder ?? new HashingEmbedder(), modelDir: options.modelDir };
  // The data dir holds the secrets, the lake and the models whichever store runs.
  mkdirSync(dataDir, { recursive: true });
  const store = await openStore(dataDir, { url: options.storeUrl, duckdb: options.duckdb });
  const state = new ServingState(changes);
  const credentials = new CredentialRegistry();
  let loadedAt: ChangePosition | undefined;
  try {
    loadedAt = await load(store, state, credentials);
  } catch (error) {
    await store.close();
    throw error;
  }
  // The kinds the lake export writes for the vectors job (default delays).
  const vectorConfig = new Map(
    DOCUMENT_KINDS.flatMap((documents) =>
      documents.vectorConfig ? [[documents.kind, documents.vectorConfig] as const] : [],
    ),
  );
  const lake = new LakeExporter(store, dataDir, undefined, undefined, vectorConfig);
  const loader = new ModelLoader(dataDir, state, MODEL_NAMES, preparers, undefined, store.modelVersions);
  const launcher = new BuildLauncher(options.spareCpu);
  // Large loads disturb serving as builds do: their loading thread runs where builds do
  // (docs/batch-models.md, "Hot swap").
  preparers?.large.onThreadStarted?.((tid) => launcher.keepWithBuilds(tid));
  const builds = processBuildRunner(dataDir, vectors.modelDir, undefined, launcher);
  const quickBuilds = quickBuildRunner(dataDir, vectors.modelDir);
  const models = new ModelScheduler(
    state,
    lake,
    loader,
    builds,
    modelsInUse,
    undefined,
    quickBuilds,
    (tenantId) => store.runners.claim('models', tenantId),
  );
  const indexer = new VectorIndexer(vectors.embedder, state, {
    error: () => undefined,
    embedded: (tenant) => models.vectorsChanged(tenant),
  });
  loader.onInstalled((tenant, model) => {
    if (model === 'vectors') indexer.baseReplaced(tenant);
  });
  return {
    dataDir,
    store,
    state,
    credentials,
    serverSecret: serverSecret(dataDir),
    jwtSecret: jwtSecret(dataDir),
    lake,
    loader,
    models,
    vectors: indexer,
    answers: new AnswerLog(store),
    feeds: new FeedService(store, state, lake, indexer, options.feedNetwork ?? feedNetwork(false)),
    ...(loadedAt && { loadedAt }),
  };
}

/**
 * Loads the credentials and the serving state. From a store other daemons share, every read is of one
 * snapshot, and the position of the log in it says where following their writes starts.
 */
async function load(
  store: Store,
  state: ServingState,
  credentials: CredentialRegistry,
): Promise<ChangePosition | undefined> {
  if (!store.changes) {
    await loadCredentials(store.tenants, credentials);
    await loadState(store, state, DOCUMENT_KINDS);
    return undefined;
  }
  const snapshot = await store.changes.snapshot();
  try {
    await loadCredentials(snapshot.tenants, credentials);
    await loadState(snapshot, state, DOCUMENT_KINDS);
    return snapshot.position;
  } finally {
    await snapshot.release();
  }
}

/** Where a runtime's background work reports (the daemon's logger). */
export interface RuntimeLog {
  debug(details: object, message: string): void;
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/**
 * Before serving: the models already built are loaded, and every item whose text changed since the
 * vectors were built (or was never embedded) is embedded anew, in the background.
 */
export async function loadBuilt(runtime: Runtime, log: RuntimeLog): Promise<void> {
  await runtime.loader.start(log);
  runtime.vectors.logTo(log);
  for (const tenantId of runtime.state.ids()) runtime.vectors.tenantChanged(runtime.state.get(tenantId)!);
}

/** While serving: the lake follows the store, models follow the writes, feeds sync on their schedules, answers are recorded. */
export function followWrites(runtime: Runtime, log: RuntimeLog): void {
  runtime.lake.follow((error, tenantId) =>
    log.error({ tenantId, reason: (error as Error).message }, 'lake export failed'),
  );
  runtime.models.start(log);
  runtime.feeds.start(log);
  runtime.answers.start(
    (error) => log.error({ err: error }, 'recording answers failed'),
    (count) => log.warn({ count }, 'answers left unrecorded: more than a second can hold'),
  );
}

/**
 * Stops the background work in order and closes the store; `beforeBuilds` runs once embedding and
 * answer recording have stopped (the daemon closes its ranking thread there).
 */
export async function closeRuntime(runtime: Runtime, beforeBuilds?: () => Promise<void>): Promise<void> {
  // First: following the other daemons' writes would hand work to what stops next.
  await runtime.store.changes?.stop();
  await runtime.feeds.stop();
  await runtime.vectors.stop();
  await runtime.answers.stop();
  await beforeBuilds?.();
  await runtime.models.stop();
  await runtime.loader.stop();
  await runtime.lake.stop();
  await runtime.store.close();
}
