import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LakeDb } from '../../../jobs/lake/lake-db.js';
import { nearestLists, vectorsJob, type VectorsParameters } from '../../../jobs/vectors/vectors-job.js';
import { arrowToColumns } from '../../../src/artifacts/columns.js';
import { decodeItemVectors } from '../../../src/artifacts/formats.js';
import { modelDir, versionName } from '../../../src/artifacts/layout.js';
import { openVersion } from '../../../src/artifacts/open.js';
import { publishModel } from '../../../src/artifacts/publish.js';
import { recommendList } from '../../../src/engine/pipeline.js';
import { loadModel } from '../../../src/models/model-loader.js';
import { applyStateChange } from '../../../src/state/apply-state-change.js';
import { StateChangeLog, type StateChange } from '../../../src/state/state-changes.js';
import { ServingState, type TenantState } from '../../../src/state/tenant-state.js';
import { VECTOR_DIMENSIONS } from '../../../src/vector/embedder.js';
import { HashingEmbedder } from '../../../src/vector/hashing-embedder.js';
import { VectorIndexer } from '../../../src/models/vector-indexer.js';
import { renderTemplate, sortedTemplates, templateFor } from '../../../src/vector/templates.js';
import { TenantVectors, type VectorBase } from '../../../src/vector/tenant-vectors.js';
import { buildTenant, item } from '../../support/tenant-fixture.js';

const D = VECTOR_DIMENSIONS;

/** A unit vector along axis `a`, leaning towards axis `b` by `lean`. */
function unit(a: number, b = a, lean = 0): Float32Array {
  const v = new Float32Array(D);
  v[a] = 1;
  v[b] += lean;
  let norm = 0;
  for (const x of v) norm += x * x;
  return v.map((x) => x / Math.sqrt(norm));
}

function rows(...vectors: Float32Array[]): Float32Array {
  const matrix = new Float32Array(vectors.length * D);
  vectors.forEach((v, i) => matrix.set(v, i * D));
  return matrix;
}

const everything = { ef: 64, threshold: 0, quantization: 'f32' as const, accept: () => true };

describe('a tenant vector index', () => {
  it('finds the nearest items exactly, best first, within the threshold and what accept takes', () => {
    const vectors = new TenantVectors();
    vectors.set([0, 1, 2, 3], rows(unit(0), unit(0, 1, 0.5), unit(0, 1, 2), unit(5)), [1, 2, 3, 4]);
    expect(vectors.size).toBe(4);
    const found = vectors.search(unit(0), 3, everything);
    expect(found.ids).toEqual([0, 1, 2]);
    expect(found.scores[0]).toBeCloseTo(1, 5);
    // Item 3 is orthogonal: not similar at all, so never a match.
    expect(vectors.search(unit(0), 4, everything).ids).toEqual([0, 1, 2]);
    expect(vectors.search(unit(0), 3, { ...everything, threshold: 0.85 }).ids).toEqual([0, 1]);
    expect(vectors.search(unit(0), 2, { ...everything, accept: (id) => id !== 0 }).ids).toEqual([1, 2]);
  });

  it('replaces an item vector, forgets removed items, and keeps hashes', () => {
    const vectors = new TenantVectors();
    vectors.set([0, 1], rows(unit(0), unit(1)), [10, 11]);
    const version = vectors.version;
    vectors.set([0], rows(unit(1, 0, 0.1)), [12]);
    expect(vectors.version).toBeGreaterThan(version);
    expect(vectors.hashOf(0)).toBe(12);
    expect(vectors.search(unit(1), 2, everything).ids).toEqual([1, 0]);
    expect(vectors.search(unit(0), 1, everything).ids).toEqual([0]);
    vectors.remove([1]);
    expect(vectors.hashOf(1)).toBeUndefined();
    expect(vectors.search(unit(1), 2, everything).ids).toEqual([0]);
    expect(vectors.size).toBe(1);
  });

  it('keeps delta rows over a new base only where the base has another text', () => {
    const vectors = new TenantVectors();
    vectors.set([0, 1], rows(unit(0), unit(1)), [10, 11]);
    const ids = new Map([
      ['a', 0],
      ['b', 1],
    ]);
    vectors.replaceBase(
      {
        version: 1,
        builtAt: 1,
        model: 'm',
        externalIds: ['a', 'b'],
        hashes: Uint32Array.from([10, 99]),
        matrix: rows(unit(0), unit(7)),
        indexFiles: {},
      },
      (id) => ids.get(id)!,
    );
    // a's text is the base's: the base serves it; b's differs: its newer delta row stays.
    expect(vectors.deltaSize).toBe(1);
    expect(vectors.hashOf(1)).toBe(11);
    expect(vectors.search(unit(1), 1, everything).ids).toEqual([1]);
    expect(vectors.search(unit(7), 2, everything).ids).toEqual([]);
  });
});

describe('templates', () => {
  const templates = sortedTemplates(
    new Map([
      [
        'b-shoes',
        { slug: 'b-shoes', template: 'shoe {brand} {size.eu}', isDefault: false, appliesTo: ['Shoes'] },
      ],
      ['a-default', { slug: 'a-default', template: '{name} ({category})', isDefault: true, appliesTo: [] }],
    ]),
  );

  it('choose the category template (any case), else the default; a tenant without any has a built-in one', () => {
    expect(templateFor(templates, 'shoes')).toBe('shoe {brand} {size.eu}');
    expect(templateFor(templates, 'bags')).toBe('{name} ({category})');
    expect(templateFor(templates, null)).toBe('{name} ({category})');
    expect(templateFor([], 'bags')).toBe('{name} {category} {description}');
    expect(
      templateFor(
        templates.filter((t) => !t.isDefault),
        'bags',
      ),
    ).toBeUndefined();
  });

  it('fill placeholders from the category and attributes, nested and listed ones too', () => {
    const rendered = renderTemplate('{name}  {category} {size.eu} {tags} {missing} {price}', {
      category: 'shoes',
      attributes: { name: 'Runner', size: { eu: 42 }, tags: ['trail', 'light'], price: 59.5 },
    });
    expect(rendered).toBe('Runner shoes 42 trail light 59.5');
  });
});

describe('the vectors job and the vector index it publishes', () => {
  let dataDir: string | undefined;
  let lake: LakeDb | undefined;
  afterEach(() => {
    lake?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const NAMES = [
    'espresso machine with frother',
    'compact espresso machine',
    'wool hiking socks',
    'merino wool socks',
    'garden hose reel',
    'expandable garden hose',
  ];

  async function lakeWith(names: readonly string[]): Promise<LakeDb> {
    const scratch = await LakeDb.scratch();
    const values = names
      .map((name, i) => `('i${i}', 'c${Math.floor(i / 2)}', '${JSON.stringify({ name })}')`)
      .join(', ');
    await scratch.db.run(
      `CREATE OR REPLACE VIEW items AS SELECT * FROM (VALUES ${values}) AS t(external_id, category, attributes)`,
    );
    scratch.location = { dataDir: dataDir!, tenantId: 't1' };
    return scratch;
  }

  async function build(names: readonly string[], parameters: Partial<VectorsParameters> = {}) {
    lake?.close();
    lake = await lakeWith(names);
    const built = await vectorsJob.build(
      lake,
      { ...vectorsJob.defaults, modelDir: null, ...parameters },
      {
        now: Date.now(),
        threads: 1,
      },
    );
    return { built, manifest: publishModel(dataDir!, 't1', 'vectors', built, 1) };
  }

  function servingTenant(): TenantState {
    const tenant = new ServingState().add('t1');
    NAMES.forEach((name, i) =>
      tenant.upsertItem(item(`i${i}`, { category: `c${Math.floor(i / 2)}`, attributes: { name } })),
    );
    return tenant;
  }

  it('builds HNSW indexes above the exact limit, which the loader opens and searches', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-vectors-'));
    const { built, manifest } = await build(NAMES, { exactLimit: 2 });
    expect(Object.keys(built.files).sort()).toEqual([
      'index-f32.usearch',
      'items.arrow',
      'list-offsets.arrow',
      'lists.arrow',
      'vectors.f32',
    ]);
    expect(built.source.items).toBe(6);
    const tenant = servingTenant();
    loadModel(dataDir, tenant, 'vectors', manifest.version);
    expect(tenant.vectors.approximate).toBe(true);
    expect(tenant.vectors.baseRows).toBe(6);
    // The lists are read into shared memory once and kept as views there, not copied out and back.
    const decoded = decodeItemVectors(openVersion(dataDir, 't1', 'vectors', manifest.version), 'file').lists!;
    const written = arrowToColumns(built.files['lists.arrow'], { row: 'int32', score: 'float32' }, 'lists');
    expect(decoded.rows.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(decoded.scores.buffer).toBe(decoded.rows.buffer);
    expect(Array.from(decoded.rows)).toEqual(Array.from(written.row));
    expect(Array.from(decoded.scores)).toEqual(Array.from(written.score));
    const list = recommendList(
      tenant,
      {
        logicType: 'similar-products',
        itemId: 'i2',
        noCache: false,
        overrides: {},
        projection: {},
        count: 1,
      },
      Date.now(),
    );
    expect(list.ids.map((id) => tenant.catalog.externalIds[id])).toEqual(['i3']);
    expect(list.algorithm).toBe('vector-similarity');
    // The rows of a base searched through HNSW stay in their file: read one at a time, as they are there.
    expect(tenant.vectors.bytes.base).toBeLessThan(6 * D * 4);
    const file = readFileSync(
      path.join(modelDir(dataDir, 't1', 'vectors'), versionName(manifest.version), 'vectors.f32'),
    );
    const matrix = new Float32Array(file.buffer, file.byteOffset, file.byteLength / 4);
    const row = tenant.vectors.vectorOf(tenant.catalog.idOf('i2'))!;
    expect(Array.from(row)).toEqual(Array.from(matrix.subarray(2 * D, 3 * D)));
  });

  it('refuses a base whose rows file cannot be opened, and keeps the one it has', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-vectors-'));
    const { manifest } = await build(NAMES, { exactLimit: 2 });
    const tenant = servingTenant();
    loadModel(dataDir, tenant, 'vectors', manifest.version);
    const query = tenant.vectors.vectorOf(tenant.catalog.idOf('i2'))!.slice();
    const before = tenant.vectors.search(query, 3, everything);
    const gone: VectorBase = {
      version: manifest.version + 1,
      builtAt: Date.now(),
      model: 'm',
      externalIds: ['i0'],
      hashes: Uint32Array.of(1),
      matrix: new Float32Array(0),
      matrixFile: path.join(dataDir, 'missing.f32'),
      indexFiles: {},
    };
    expect(() => tenant.replaceVectorBase(gone)).toThrow(/ENOENT/);
    expect(tenant.vectors.search(query, 3, everything)).toEqual(before);
  });

  it('reuses the rows of unchanged texts, and embeds only what changed', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-vectors-'));
    const first = await build(NAMES);
    expect(first.built.parameters.embedded).toBe(6);
    expect(first.built.files['index-f32.usearch']).toBeUndefined();
    const same = await build(NAMES);
    expect(same.built.parameters.embedded).toBe(0);
    expect(same.built.files['vectors.f32']).toEqual(first.built.files['vectors.f32']);
    const changed = await build(NAMES.map((name, i) => (i === 0 ? 'stainless steel kettle' : name)));
    expect(changed.built.parameters.embedded).toBe(1);
  });

  it('the daemon embeds only what the loaded base lacks, and a replica searches as the state does', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-vectors-'));
    const { manifest } = await build(NAMES.slice(0, 4));
    const taken: StateChange[] = [];
    const log = new StateChangeLog({ pending: () => undefined, full: () => undefined });
    const state = new ServingState(log);
    const tenant = state.add('t1');
    NAMES.forEach((name, i) =>
      tenant.upsertItem(item(`i${i}`, { category: `c${Math.floor(i / 2)}`, attributes: { name } })),
    );
    loadModel(dataDir, tenant, 'vectors', manifest.version);
    const indexer = new VectorIndexer(new HashingEmbedder(), state);
    indexer.tenantChanged(tenant);
    await indexer.idle();
    // The two garden items were not in the base: they alone were embedded.
    expect(tenant.vectors.baseRows).toBe(4);
    expect(tenant.vectors.deltaSize).toBe(2);
    taken.push(...log.take());
    const replica = new ServingState(undefined, true);
    for (const change of taken) applyStateChange(replica, change);
    const query = tenant.vectors.vectorOf(tenant.catalog.idOf('i4'))!.slice();
    const options = { ...everything, accept: () => true };
    expect(replica.get('t1')!.vectors.search(query, 3, options)).toEqual(
      tenant.vectors.search(query, 3, options),
    );
  });
});

describe('vector candidates in the pipeline', () => {
  it('leave out unavailable items and the seed, and keep to filter_categories', () => {
    const tenant = buildTenant({
      items: [
        item('a', { category: 'x' }),
        item('b', { category: 'x', available: false }),
        item('c', { category: 'y' }),
        item('d', { category: 'x' }),
      ],
      scenarios: [
        { slug: 'only-y', logicType: 'similar-products', vectorSettings: { filter_categories: ['y'] } },
      ],
    });
    const id = (externalId: string) => tenant.catalog.idOf(externalId);
    tenant.vectors.set(
      ['a', 'b', 'c', 'd'].map(id),
      rows(unit(0), unit(0, 1, 0.1), unit(0, 1, 0.5), unit(0, 1, 1)),
      [1, 2, 3, 4],
    );
    const request = {
      logicType: 'similar-products' as const,
      itemId: 'a',
      noCache: false,
      overrides: {},
      projection: {},
    };
    const list = recommendList(tenant, { ...request, count: 2 }, Date.now());
    expect(list.ids.map((i) => tenant.catalog.externalIds[i])).toEqual(['c', 'd']);
    const onlyY = recommendList(tenant, { ...request, scenario: 'only-y', count: 1 }, Date.now());
    expect(onlyY.ids.map((i) => tenant.catalog.externalIds[i])).toEqual(['c']);
  });
});

describe('nearest lists', () => {
  /** `rows` random unit vectors around `clusters` centres, from a fixed seed. */
  function clustered(rows: number, clusters: number): Float32Array {
    let state = 42;
    const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
    const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: D }, random));
    const matrix = new Float32Array(rows * D);
    for (let r = 0; r < rows; r++) {
      let norm = 0;
      for (let d = 0; d < D; d++) {
        const value = centres[r % clusters][d] + 0.8 * random();
        matrix[r * D + d] = value;
        norm += value * value;
      }
      for (let d = 0; d < D; d++) matrix[r * D + d] /= Math.sqrt(norm);
    }
    return matrix;
  }

  function exactTop(matrix: Float32Array, rows: number, row: number, k: number): number[] {
    const scores: { other: number; score: number }[] = [];
    for (let other = 0; other < rows; other++) {
      if (other === row) continue;
      let score = 0;
      for (let d = 0; d < D; d++) score += matrix[row * D + d] * matrix[other * D + d];
      scores.push({ other, score });
    }
    return scores
      .sort((a, b) => b.score - a.score)
      .slice(0, k)
      .map((entry) => entry.other);
  }

  it.each([
    ['exactly', 300],
    ['through HNSW, scored again on the full vectors', 2_500],
  ])('lists each row its nearest others, best first, %s', (_, rows) => {
    const matrix = clustered(rows, 20);
    const lists = nearestLists(matrix, rows, D, 10, { connectivity: 16, expansionAdd: 128 }, 2);
    expect(lists.offsets).toHaveLength(rows + 1);
    let hits = 0;
    const sampled = [0, 1, 7, 99, 150, rows - 1];
    for (const row of sampled) {
      const listed = Array.from(lists.rows.subarray(lists.offsets[row], lists.offsets[row + 1]));
      expect(listed).not.toContain(row);
      const scores = lists.scores.subarray(lists.offsets[row], lists.offsets[row + 1]);
      for (let i = 1; i < scores.length; i++) expect(scores[i]).toBeLessThanOrEqual(scores[i - 1]);
      const truth = new Set(exactTop(matrix, rows, row, 10));
      hits += listed.filter((other) => truth.has(other)).length;
    }
    expect(hits / (10 * sampled.length)).toBeGreaterThanOrEqual(0.9);
  });

  it('serve similar items from a loaded base without searching, and skip rows no longer live', () => {
    const vectors = new TenantVectors();
    const matrix = rows(unit(0), unit(0, 1, 0.2), unit(0, 1, 1), unit(3));
    const lists = nearestLists(matrix, 4, D, 3, { connectivity: 16, expansionAdd: 128 }, 1);
    vectors.replaceBase(
      {
        version: 1,
        builtAt: 1,
        model: 'm',
        externalIds: ['0', '1', '2', '3'],
        hashes: new Uint32Array(4),
        matrix,
        indexFiles: {},
        lists,
      },
      Number,
    );
    const notSeed = { ...everything, accept: (id: number) => id !== 0 };
    expect(vectors.nearestTo(0, 2, notSeed)?.ids).toEqual([1, 2]);
    // Item 1 changed its text: its new vector (in the delta) is what counts, and it is not similar.
    vectors.set([1], rows(unit(3)), [9]);
    expect(vectors.nearestTo(0, 2, notSeed, 1)?.ids).toEqual([2]);
    // Fewer than enough from the list: searched for, with the same answer.
    expect(vectors.nearestTo(0, 2, notSeed)?.ids).toEqual([2]);
    expect(vectors.nearestTo(5, 3, notSeed)).toBeUndefined();
  });
});
