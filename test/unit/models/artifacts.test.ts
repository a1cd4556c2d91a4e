import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HALF_VALUES } from '../../../src/state/half-float.js';
import {
  arrowToColumns,
  columnsToArrow,
  sharedMemoryOf,
  type Placement,
} from '../../../src/artifacts/columns.js';
import { BUILD_NICENESS } from '../../../src/models/build-launcher.js';
import { ArtifactError } from '../../../src/artifacts/errors.js';
import { MODEL_FORMATS, type Factors, type NeighbourLists } from '../../../src/artifacts/formats.js';
import {
  currentVersion,
  modelDir,
  versionName,
  versions,
  type ModelName,
} from '../../../src/artifacts/layout.js';
import { openCurrent, openVersion } from '../../../src/artifacts/open.js';
import { KEPT_VERSIONS, publishModel } from '../../../src/artifacts/publish.js';
import {
  IN_THIS_THREAD,
  ModelLoader,
  ThreadPreparer,
  inThisThread,
  type ModelPreparer,
} from '../../../src/models/model-loader.js';
import type { ModelVersionRecord } from '../../../src/store/api/runners.js';

const LOAD_WORKER = new URL('../../../dist/src/models/model-load-worker.js', import.meta.url);
import { prepareModel } from '../../../src/models/prepared-model.js';
import { ServingState } from '../../../src/state/tenant-state.js';

let dataDir: string;
beforeEach(() => (dataDir = mkdtempSync(path.join(tmpdir(), 'nextrec-artifacts-'))));
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const lists = (weight = 0.5): NeighbourLists => ({
  items: ['a', 'b', 'c'],
  offsets: Int32Array.from([0, 2, 3, 3]),
  neighbours: Int32Array.from([1, 2, 0]),
  weights: Float32Array.from([weight, 0.25, 0.75]),
});

const factors = (value = 0.5): Factors => ({
  factors: 2,
  items: ['a', 'b'],
  itemFactors: Float32Array.from([value, 1, 2, 3]),
  users: ['u1'],
  userFactors: Float32Array.from([4, 5]),
});

/** A sample model of each kind, and a way to spoil one value of it (NaN) while its files stay consistent. */
const SAMPLES: { model: ModelName; sample: (value?: number) => NeighbourLists | Factors }[] = [
  { model: 'cooccurrence', sample: lists },
  { model: 'ease', sample: lists },
  { model: 'factors', sample: factors },
];

function publish(model: ModelName, built: NeighbourLists | Factors, tenantId = 'shop'): number {
  const format = MODEL_FORMATS[model] as (typeof MODEL_FORMATS)['factors'] | (typeof MODEL_FORMATS)['ease'];
  const encoded = (
    format.encode as (m: unknown) => { files: Record<string, Uint8Array>; shape: Record<string, number> }
  )(built);
  return publishModel(
    dataDir,
    tenantId,
    model,
    {
      ...encoded,
      parameters: { sample: true },
      source: { interactions: 10, users: 1, items: 3 },
    },
    1,
  ).version;
}

describe.each(SAMPLES)('the $model model contract', ({ model, sample }) => {
  const decode = (version: number) =>
    MODEL_FORMATS[model].decode(openVersion(dataDir, 'shop', model, version));

  it('reads back exactly what was built, from the version CURRENT names', () => {
    const version = publish(model, sample());
    expect(currentVersion(modelDir(dataDir, 'shop', model))).toBe(version);
    expect(MODEL_FORMATS[model].decode(openCurrent(dataDir, 'shop', model)!)).toEqual(sample());
    expect(openCurrent(dataDir, 'shop', model)!.manifest).toMatchObject({
      model,
      version,
      tenantId: 'shop',
      source: { interactions: 10, users: 1, items: 3 },
    });
  });

  it('refuses a file that does not match its checksum', () => {
    const version = publish(model, sample());
    const file = path.join(modelDir(dataDir, 'shop', model), versionName(version), 'items.arrow');
    const bytes = readFileSync(file);
    bytes[bytes.length - 9] ^= 0xff;
    writeFileSync(file, bytes);
    expect(() => decode(version)).toThrow(/checksum/);
  });

  it('refuses a version missing a file, or its manifest', () => {
    const version = publish(model, sample());
    const dir = path.join(modelDir(dataDir, 'shop', model), versionName(version));
    unlinkSync(path.join(dir, 'items.arrow'));
    expect(() => decode(version)).toThrow(ArtifactError);
    unlinkSync(path.join(dir, 'manifest.json'));
    expect(() => decode(version)).toThrow(/manifest/);
  });

  it('refuses values that are not numbers', () => {
    expect(() => decode(publish(model, sample(Number.NaN)))).toThrow(/not a number/);
  });

  it('keeps a few old versions besides the current one', () => {
    const published = Array.from({ length: KEPT_VERSIONS + 3 }, () => publish(model, sample()));
    expect(versions(modelDir(dataDir, 'shop', model))).toEqual(published.slice(-(KEPT_VERSIONS + 1)));
  });
});

describe('publishing', () => {
  it('removes what a publisher that ended mid-way left, but not what a running one is writing', () => {
    const dir = modelDir(dataDir, 'shop', 'ease');
    mkdirSync(dir, { recursive: true });
    const ended = spawnSync(process.execPath, ['-e', '']).pid!;
    const abandoned = path.join(dir, `${versionName(1)}.${ended}.partial`);
    const inProgress = path.join(dir, `${versionName(2)}.${process.ppid}.partial`);
    for (const folder of [abandoned, inProgress]) mkdirSync(folder);
    publish('ease', lists());
    expect(existsSync(abandoned)).toBe(false);
    expect(existsSync(inProgress)).toBe(true);
    expect(versions(dir)).toHaveLength(1);
  });
});

describe('opening a version', () => {
  it('checks a large file in chunks, reads it again when asked for, and refuses one that changed', () => {
    // Past the size held from the check on (16 MiB), with a pattern that moving a chunk would break.
    const big = new Uint8Array(17 * 1024 * 1024 + 5);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >> 20)) & 0xff;
    const small = Uint8Array.from([1, 2, 3]);
    const { version } = publishModel(
      dataDir,
      'shop',
      'factors',
      {
        files: { 'big.bin': big, 'small.bin': small },
        parameters: {},
        source: { interactions: 1, users: 1, items: 1 },
        shape: {},
      },
      1,
    );
    const opened = openVersion(dataDir, 'shop', 'factors', version);
    expect(Buffer.compare(opened.file('big.bin'), big)).toBe(0);
    expect(Buffer.compare(opened.file('small.bin'), small)).toBe(0);
    expect(opened.path?.('big.bin')).toBe(
      path.join(modelDir(dataDir, 'shop', 'factors'), versionName(version), 'big.bin'),
    );
    expect(() => opened.file('other.bin')).toThrow(/lists no file/);
    // Read into shared memory, whether held from the check or read again.
    for (const [name, bytes] of [
      ['big.bin', big],
      ['small.bin', small],
    ] as const) {
      const shared = opened.sharedFile!(name);
      expect(shared.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(Buffer.compare(shared, bytes)).toBe(0);
    }
    const file = opened.path!('big.bin');
    appendFileSync(file, Uint8Array.from([1]));
    expect(() => opened.sharedFile!('big.bin')).toThrow(/changed since it was checked/);
    truncateSync(file, big.byteLength);
    const bytes = readFileSync(file);
    bytes[9 * 1024 * 1024] ^= 0xff;
    writeFileSync(file, bytes);
    expect(() => openVersion(dataDir, 'shop', 'factors', version)).toThrow(/checksum/);
  });
});

describe('neighbour lists', () => {
  it('refuses a neighbour that names no item, and offsets that do not span the lists', () => {
    const bad = lists();
    bad.neighbours[0] = 7;
    const version = publish('cooccurrence', bad);
    expect(() =>
      MODEL_FORMATS.cooccurrence.decode(openVersion(dataDir, 'shop', 'cooccurrence', version)),
    ).toThrow(/names no item/);
    const short = lists();
    short.offsets[3] = 2;
    const other = publish('cooccurrence', short);
    expect(() =>
      MODEL_FORMATS.cooccurrence.decode(openVersion(dataDir, 'shop', 'cooccurrence', other)),
    ).toThrow(/span/);
  });
});

describe('reading columns', () => {
  const file = columnsToArrow({
    neighbour: Int32Array.from([1, 2, 0]),
    weight: Float32Array.from([0.5, 1, 2]),
  });
  const read = (placement?: Placement) =>
    arrowToColumns(file, { neighbour: 'int32', weight: 'float32' }, 'neighbours.arrow', placement);

  it('copies number columns out of the file, or leaves them in it as views when asked', () => {
    const copied = read();
    const viewed = read('view');
    for (const columns of [copied, viewed]) {
      expect(Array.from(columns.neighbour)).toEqual([1, 2, 0]);
      expect(Array.from(columns.weight)).toEqual([0.5, 1, 2]);
    }
    expect(copied.neighbour.buffer).not.toBe(file.buffer);
    expect(copied.neighbour.byteLength).toBe(copied.neighbour.buffer.byteLength);
    expect(viewed.neighbour.buffer).toBe(file.buffer);
    expect(viewed.weight.buffer).toBe(file.buffer);
  });

  it('copies into shared memory only what is not there already', () => {
    const whole = new Int32Array(new SharedArrayBuffer(12));
    whole.set([4, 5, 6]);
    expect(sharedMemoryOf(whole)).toBe(whole);
    const part = whole.subarray(1);
    const copy = sharedMemoryOf(part);
    expect(copy).not.toBe(part);
    expect(copy.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(Array.from(copy)).toEqual([5, 6]);
    const local = Int32Array.from([7]);
    expect(sharedMemoryOf(local).buffer).toBeInstanceOf(SharedArrayBuffer);
  });
});

describe.each(['cooccurrence', 'ease'] as const)('a %s version prepared for serving', (model) => {
  it('is mapped straight into shared memory, weights in half precision, so that no thread copies it', () => {
    const ids = new Map([
      ['c', 0],
      ['b', 1],
      ['a', 2],
    ]);
    const prepared = prepareModel(dataDir, 'shop', model, publish(model, lists(0.5)), {
      size: ids.size,
      idOf: (externalId) => ids.get(externalId) ?? -1,
    });
    if (!('neighbours' in prepared)) throw new Error('expected neighbour lists');
    const { offsets, neighbours, weights } = prepared.neighbours;
    for (const array of [offsets, neighbours, weights]) {
      expect(array.buffer).toBeInstanceOf(SharedArrayBuffer);
      // What the loading thread hands on is these arrays themselves.
      expect(sharedMemoryOf(array)).toBe(array);
    }
    // The mapping itself is checked through the loading thread (ThreadPreparer, below).
    expect(weights).toBeInstanceOf(Uint16Array);
  });

  it('is decoded with its number columns left in the file they were read from', () => {
    const decoded = MODEL_FORMATS[model].decode(openVersion(dataDir, 'shop', model, publish(model, lists())));
    for (const column of [decoded.offsets, decoded.neighbours, decoded.weights])
      expect(column.byteLength).toBeLessThan(column.buffer.byteLength);
    expect(decoded.neighbours.buffer).toBe(decoded.weights.buffer);
  });
});

describe('a factors version prepared for serving', () => {
  it('has its item factors mapped straight into shared memory, so that no thread copies them', () => {
    const version = publishModel(
      dataDir,
      'shop',
      'factors',
      {
        ...MODEL_FORMATS.factors.encode(factors(0.5)),
        parameters: { regularization: 0.1, alpha: 1 },
        source: { interactions: 10, users: 1, items: 2 },
      },
      1,
    ).version;
    const ids = new Map([
      ['b', 0],
      ['a', 1],
    ]);
    const prepared = prepareModel(dataDir, 'shop', 'factors', version, {
      size: 3,
      idOf: (externalId) => ids.get(externalId) ?? -1,
    });
    if (!('factors' in prepared)) throw new Error('expected factors');
    const { itemFactors, known } = prepared.factors;
    for (const array of [itemFactors, known]) {
      expect(array.buffer).toBeInstanceOf(SharedArrayBuffer);
      expect(sharedMemoryOf(array)).toBe(array);
    }
    // b's row first, then a's; the third id is not in the model.
    expect(Array.from(itemFactors)).toEqual([2, 3, 0.5, 1, 0, 0]);
    expect(Array.from(known)).toEqual([1, 1, 0]);
  });

  it('is decoded with its factors left in the files they were read from', () => {
    const version = publish('factors', factors());
    const decoded = MODEL_FORMATS.factors.decode(openVersion(dataDir, 'shop', 'factors', version));
    for (const column of [decoded.itemFactors, decoded.userFactors])
      expect(column.byteLength).toBeLessThan(column.buffer.byteLength);
  });
});

const PREPARERS: { where: string; preparer: () => ModelPreparer }[] = [
  { where: 'in this thread', preparer: () => inThisThread },
  // The daemon's: the compiled module (npm test builds first).
  { where: 'in a loading thread', preparer: () => new ThreadPreparer(LOAD_WORKER) },
  {
    where: 'in the loading thread for small versions',
    preparer: () => ThreadPreparer.forSmallVersions(LOAD_WORKER),
  },
];

describe.each(PREPARERS)('ModelLoader (hot swap), versions prepared $where', ({ preparer }) => {
  let loader: ModelLoader;
  afterEach(() => loader.stop());

  async function servingTenant() {
    const state = new ServingState();
    const tenant = state.add('shop');
    for (const externalId of ['a', 'b', 'c'])
      tenant.upsertItem({
        externalId,
        category: null,
        attributes: {},
        expiresAt: null,
        available: true,
        feedManaged: false,
        createdAt: 0,
        updatedAt: 0,
      });
    const errors: string[] = [];
    // Every version goes to the preparer for large ones, however small.
    loader = new ModelLoader(
      dataDir,
      state,
      ['cooccurrence'],
      { small: inThisThread, large: preparer() },
      -1,
    );
    // Nothing published yet: the first poll swaps nothing in.
    expect(
      await loader.start(
        { info: () => undefined, error: (details) => errors.push(JSON.stringify(details)) },
        60_000,
      ),
    ).toBe(0);
    return { tenant, loader, errors };
  }

  it('swaps in a newer version, refuses a corrupt or half-written one and keeps serving the old', async () => {
    const { tenant, loader, errors } = await servingTenant();
    const installed: string[] = [];
    loader.onInstalled((serving, model) => installed.push(`${serving.tenantId}/${model}`));
    expect(tenant.neighbours.neighbours.length).toBe(0);
    const first = publish('cooccurrence', lists(0.5));
    expect(await loader.poll()).toBe(1);
    expect(installed).toEqual(['shop/cooccurrence']);
    expect(loader.servingVersion('shop', 'cooccurrence')).toBe(first);
    expect(Array.from(tenant.neighbours.weights, (_, k) => tenant.neighbours.weightAt(k))).toEqual([
      0.5, 0.25, 0.75,
    ]);

    const corrupt = publish('cooccurrence', lists(0.9));
    const file = path.join(
      modelDir(dataDir, 'shop', 'cooccurrence'),
      versionName(corrupt),
      'neighbours.arrow',
    );
    writeFileSync(file, readFileSync(file).subarray(0, 40)); // cut short, as by a crash mid-write
    expect(await loader.poll()).toBe(0);
    expect(loader.servingVersion('shop', 'cooccurrence')).toBe(first);
    expect(Array.from(tenant.neighbours.weights, (_, k) => tenant.neighbours.weightAt(k))).toEqual([
      0.5, 0.25, 0.75,
    ]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('neighbours.arrow');
    expect(await loader.poll()).toBe(0); // not tried again
    expect(errors).toHaveLength(1);
    expect(installed).toEqual(['shop/cooccurrence']);

    publish('cooccurrence', lists(0.125));
    expect(await loader.poll()).toBe(1);
    expect(Array.from(tenant.neighbours.weights, (_, k) => tenant.neighbours.weightAt(k))).toEqual([
      0.125, 0.25, 0.75,
    ]);
  });

  it('never swaps to an older version, and ignores a version folder still being written', async () => {
    const { tenant, loader } = await servingTenant();
    const newer = publish('cooccurrence', lists(0.5));
    await loader.poll();
    const dir = modelDir(dataDir, 'shop', 'cooccurrence');
    writeFileSync(path.join(dir, 'CURRENT'), `${versionName(newer - 1)}\n`);
    expect(await loader.poll()).toBe(0);
    expect(Array.from(tenant.neighbours.weights, (_, k) => tenant.neighbours.weightAt(k))).toEqual([
      0.5, 0.25, 0.75,
    ]);
    // A build that stopped before its rename leaves a partial folder that no pointer names.
    writeFileSync(path.join(dir, 'CURRENT'), `${versionName(newer)}\n`);
    mkdirSync(path.join(dir, `${versionName(newer + 5)}.123.partial`));
    expect(versions(dir)).toEqual([newer]);
    expect(await loader.poll()).toBe(0);
  });
});

describe('ModelLoader, where it prepares', () => {
  /** A preparer that only counts what it was asked, and refuses it (nothing of it could install). */
  const counting = () => {
    const asked: string[] = [];
    const preparer: ModelPreparer = {
      prepare: async (_dir, tenant, model) => {
        asked.push(`${tenant.tenantId}/${model}`);
        throw new Error('not this one');
      },
      close: async () => undefined,
    };
    return { asked, preparer };
  };

  function servingState(...tenantIds: string[]) {
    const state = new ServingState();
    for (const tenantId of tenantIds) {
      const tenant = state.add(tenantId);
      for (const externalId of ['a', 'b', 'c']) tenant.catalog.ensureId(externalId);
    }
    return state;
  }

  it('prepares a small version with the preparer for small ones, and a larger one with the other', async () => {
    const small = counting();
    const large = counting();
    const preparers = { small: small.preparer, large: large.preparer };
    publish('cooccurrence', lists(0.5));
    expect(await new ModelLoader(dataDir, servingState('shop'), ['cooccurrence'], preparers).poll()).toBe(0);
    expect(small.asked).toEqual(['shop/cooccurrence']);
    expect(large.asked).toEqual([]);

    // Under a limit below its size, the version goes to the other preparer.
    const loader = new ModelLoader(dataDir, servingState('shop'), ['cooccurrence'], preparers, 100);
    expect(await loader.poll()).toBe(0);
    expect(large.asked).toEqual(['shop/cooccurrence']);
    expect(small.asked).toHaveLength(1);
  });

  it('looks at one tenant alone when asked to poll again for it', async () => {
    const state = servingState('shop', 'other');
    const loader = new ModelLoader(dataDir, state, ['cooccurrence']);
    const version = publish('cooccurrence', lists(0.5));
    const other = publish('cooccurrence', lists(0.5), 'other');
    expect(await loader.pollAgain('other')).toBe(1);
    expect(loader.servingVersion('other', 'cooccurrence')).toBe(other);
    expect(loader.servingVersion('shop', 'cooccurrence')).toBeUndefined();
    expect(await loader.pollAgain()).toBe(1);
    expect(loader.servingVersion('shop', 'cooccurrence')).toBe(version);
  });
});

describe('ModelLoader, beside a record of versions (daemons sharing a store)', () => {
  /** A record as the PostgreSQL store keeps it: a version only replaces an older one. */
  function record(initial: Record<string, number> = {}) {
    const rows = new Map(Object.entries(initial));
    const publishes: string[] = [];
    const versions: ModelVersionRecord = {
      published: async () => new Map(rows),
      publish: async (tenantId, model, version) => {
        publishes.push(`${tenantId}/${model}@${version}`);
        const key = `${tenantId}/${model}`;
        if ((rows.get(key) ?? 0) < version) rows.set(key, version);
      },
    };
    return { rows, publishes, versions };
  }

  function loaderOf(versions: ModelVersionRecord) {
    const state = new ServingState();
    const tenant = state.add('shop');
    for (const externalId of ['a', 'b', 'c']) tenant.catalog.ensureId(externalId);
    return new ModelLoader(dataDir, state, ['cooccurrence'], IN_THIS_THREAD, undefined, versions);
  }

  it('records a pointer newer than the record, and loads it', async () => {
    const { rows, publishes, versions } = record();
    const loader = loaderOf(versions);
    const version = publish('cooccurrence', lists(0.5));
    expect(await loader.poll()).toBe(1);
    expect(publishes).toEqual([`shop/cooccurrence@${version}`]);
    expect(rows.get('shop/cooccurrence')).toBe(version);
    expect(loader.servingVersion('shop', 'cooccurrence')).toBe(version);
    expect(loader.publishedVersion('shop', 'cooccurrence')).toBe(version);
    // Recorded once: the next poll finds the pointer no newer.
    expect(await loader.poll()).toBe(0);
    expect(publishes).toHaveLength(1);
  });

  it('loads the recorded version when the pointer it sees is older, and waits for a folder it cannot see yet', async () => {
    const older = publish('cooccurrence', lists(0.5));
    const newer = publish('cooccurrence', lists(0.25));
    // This daemon's view of the shared directory is stale: its pointer still names the older version.
    const dir = modelDir(dataDir, 'shop', 'cooccurrence');
    writeFileSync(path.join(dir, 'CURRENT'), `${versionName(older)}\n`);
    const { publishes, versions } = record({ 'shop/cooccurrence': newer });
    const loader = loaderOf(versions);
    expect(await loader.poll()).toBe(1);
    expect(loader.servingVersion('shop', 'cooccurrence')).toBe(newer);
    expect(publishes).toEqual([]);
    // A version recorded whose folder is not there (yet) is neither loaded nor refused: once it shows,
    // it loads.
    const later = newer + 1_000;
    const { rows: laterRows, versions: laterVersions } = record({ 'shop/cooccurrence': later });
    const waiting = loaderOf(laterVersions);
    expect(await waiting.poll()).toBe(0);
    expect(waiting.servingVersion('shop', 'cooccurrence')).toBeUndefined();
    expect(waiting.refusedVersion('shop', 'cooccurrence')).toBeUndefined();
    expect(waiting.publishedVersion('shop', 'cooccurrence')).toBe(later);
    cpSync(path.join(dir, versionName(newer)), path.join(dir, versionName(later)), { recursive: true });
    const manifestFile = path.join(dir, versionName(later), 'manifest.json');
    writeFileSync(
      manifestFile,
      JSON.stringify({ ...JSON.parse(readFileSync(manifestFile, 'utf8')), version: later }),
    );
    expect(await waiting.poll()).toBe(1);
    expect(waiting.servingVersion('shop', 'cooccurrence')).toBe(later);
    expect(laterRows.get('shop/cooccurrence')).toBe(later);
  });

  it('refuses a recorded version that fails its checks, and keeps serving the one it had', async () => {
    const good = publish('cooccurrence', lists(0.5));
    const { rows, versions } = record();
    const loader = loaderOf(versions);
    expect(await loader.poll()).toBe(1);
    const bad = publish('cooccurrence', lists(0.9));
    const file = path.join(modelDir(dataDir, 'shop', 'cooccurrence'), versionName(bad), 'neighbours.arrow');
    const bytes = readFileSync(file);
    bytes[bytes.length >> 1] ^= 0xff;
    writeFileSync(file, bytes);
    rows.set('shop/cooccurrence', bad);
    expect(await loader.poll()).toBe(0);
    expect(loader.servingVersion('shop', 'cooccurrence')).toBe(good);
    expect(loader.refusedVersion('shop', 'cooccurrence')).toBe(bad);
    expect(loader.publishedVersion('shop', 'cooccurrence')).toBe(bad);
  });
});

describe('ThreadPreparer', () => {
  it('hands over the arrays in shared memory, so that neither thread copies them', async () => {
    const state = new ServingState();
    const tenant = state.add('shop');
    for (const externalId of ['c', 'b', 'a']) tenant.catalog.ensureId(externalId);
    const preparer = new ThreadPreparer(LOAD_WORKER);
    try {
      const prepared = await preparer.prepare(dataDir, tenant, 'ease', publish('ease', lists(0.5)));
      if (!('neighbours' in prepared)) throw new Error('expected neighbour lists');
      expect(prepared.neighbours.weights.buffer).toBeInstanceOf(SharedArrayBuffer);
      // Mapped into this catalog's dense ids (a → 2, b → 1, c → 0): b's list (a) first, then a's (b, c).
      expect(Array.from(prepared.neighbours.offsets)).toEqual([0, 0, 1, 3]);
      expect(Array.from(prepared.neighbours.neighbours)).toEqual([2, 1, 0]);
      expect(Array.from(prepared.neighbours.weights, (bits) => HALF_VALUES[bits])).toEqual([0.75, 0.5, 0.25]);
      await expect(preparer.prepare(dataDir, tenant, 'ease', 12345)).rejects.toThrow();
    } finally {
      await preparer.close();
    }
  });
  /** Each thread of this process by its niceness (Linux: the 19th field of /proc's stat). */
  const niceness = () =>
    readdirSync('/proc/self/task').map((task) => {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      return { task: Number(task), nice: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) };
    });

  it.each([
    {
      what: 'large versions at the lowest priority',
      preparer: () => new ThreadPreparer(LOAD_WORKER),
      nice: BUILD_NICENESS,
    },
    {
      what: "small versions at the daemon's priority",
      preparer: () => ThreadPreparer.forSmallVersions(LOAD_WORKER),
      nice: getPriority(), // this thread's
    },
  ])(
    'loads $what in its own thread, whose id it tells, leaving the threads that serve at theirs',
    async ({ preparer: make, nice: expected }) => {
      const state = new ServingState();
      const tenant = state.add('shop');
      tenant.catalog.ensureId('a');
      const before = niceness();
      const preparer = make();
      const told: number[] = [];
      preparer.onThreadStarted((tid) => told.push(tid));
      try {
        await preparer.prepare(dataDir, tenant, 'ease', publish('ease', lists(0.5)));
        const during = niceness();
        // The loading thread is new, at its priority, and the one it told of (for its CPUs, in the
        // daemon); every thread there before is as it was.
        expect(told).toHaveLength(1);
        const loading = during.find(({ task }) => task === told[0]);
        expect(before.some(({ task }) => task === told[0])).toBe(false);
        expect(loading?.nice).toBe(expected);
        for (const { task, nice } of before) {
          const now = during.find((thread) => thread.task === task);
          if (now) expect(now.nice).toBe(nice);
        }
      } finally {
        await preparer.close();
      }
    },
  );
  it('ends its thread once idle, and starts another for the next version', async () => {
    const state = new ServingState();
    const tenant = state.add('shop');
    for (const externalId of ['c', 'b', 'a']) tenant.catalog.ensureId(externalId);
    const preparer = new ThreadPreparer(LOAD_WORKER, 50);
    try {
      expect(preparer.running).toBe(false);
      const version = publish('ease', lists(0.5));
      await preparer.prepare(dataDir, tenant, 'ease', version);
      expect(preparer.running).toBe(true);
      await vi.waitFor(() => expect(preparer.running).toBe(false), { timeout: 5_000 });
      const again = await preparer.prepare(dataDir, tenant, 'ease', version);
      if (!('neighbours' in again)) throw new Error('expected neighbour lists');
      expect(Array.from(again.neighbours.neighbours)).toEqual([2, 1, 0]);
    } finally {
      await preparer.close();
    }
    expect(preparer.running).toBe(false);
  });
});
