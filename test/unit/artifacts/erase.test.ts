import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eraseFromArtifacts } from '../../../src/artifacts/erase.js';
import {
  FACTORS,
  NEIGHBOUR_LISTS,
  VECTORS,
  decodeItemVectors,
  type NeighbourLists,
} from '../../../src/artifacts/formats.js';
import {
  currentVersion,
  modelDir,
  versionName,
  versions,
  type ModelName,
} from '../../../src/artifacts/layout.js';
import { openCurrent, openVersion } from '../../../src/artifacts/open.js';
import { publishModel } from '../../../src/artifacts/publish.js';
import { filesNaming, filesUnder } from '../../support/data-files.js';

const TENANT = 'shop';
/** Ids no other id contains, so that their bytes in a file mean that the file names them. */
const GONE = 'gone-item-x1';
const GONE_USER = 'gone-user-y2';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'nextrec-erase-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function publish(
  model: ModelName,
  encoded: { files: Record<string, Uint8Array>; shape: Record<string, number> },
) {
  return publishModel(
    dir,
    TENANT,
    model,
    { ...encoded, parameters: { model: 'hash' }, source: { interactions: 1, users: 1, items: 1 } },
    5,
  ).version;
}

/** a → [GONE 0.9, c 0.5], GONE → [a 0.8], c → [GONE 0.7, a 0.6]. */
const LISTS: NeighbourLists = {
  items: ['a', GONE, 'c'],
  offsets: Int32Array.from([0, 2, 3, 5]),
  neighbours: Int32Array.from([1, 2, 0, 1, 0]),
  weights: Float32Array.from([0.9, 0.5, 0.8, 0.7, 0.6]),
};

/** The files of the data dir's artifacts that name `id`. */
const naming = (id: string) => filesNaming(id, filesUnder(path.join(dir, 'artifacts')));

describe('eraseFromArtifacts', () => {
  it('removes the older versions naming a deleted item and publishes the current one again without it', () => {
    const untouched = publish('cooccurrence', NEIGHBOUR_LISTS.encode({ ...LISTS, items: ['a', 'b', 'c'] }));
    const older = publish('cooccurrence', NEIGHBOUR_LISTS.encode(LISTS));
    const current = publish('cooccurrence', NEIGHBOUR_LISTS.encode(LISTS));
    expect(naming(GONE).length).toBeGreaterThan(0);

    const done = eraseFromArtifacts(dir, TENANT, { items: new Set([GONE]) });

    const folder = modelDir(dir, TENANT, 'cooccurrence');
    const now = currentVersion(folder)!;
    expect(now).toBeGreaterThan(current);
    expect(done).toEqual([
      { model: 'cooccurrence', removed: [older, current], rewritten: { from: current, to: now } },
    ]);
    expect(versions(folder)).toEqual([untouched, now]);
    expect(naming(GONE)).toEqual([]);
    const served = NEIGHBOUR_LISTS.decode(openCurrent(dir, TENANT, 'cooccurrence')!);
    expect(served.items).toEqual(['a', 'c']);
    expect(Array.from(served.offsets)).toEqual([0, 1, 2]);
    expect(Array.from(served.neighbours)).toEqual([1, 0]);
    expect(Array.from(served.weights)).toEqual([0.5, 0.6000000238418579]);
    // The manifest says what the build said, with the new shape.
    const manifest = openCurrent(dir, TENANT, 'cooccurrence')!.manifest;
    expect(manifest).toMatchObject({
      parameters: { model: 'hash' },
      buildMs: 5,
      shape: { items: 2, entries: 2 },
    });
    // A second erasure finds nothing left to do.
    expect(eraseFromArtifacts(dir, TENANT, { items: new Set([GONE]) })).toEqual([]);
  });

  it('drops deleted items and users from factor models, and items from vectors with their lists', () => {
    publish(
      'factors',
      FACTORS.encode({
        factors: 2,
        items: ['a', GONE, 'c'],
        itemFactors: Float32Array.from([1, 2, 3, 4, 5, 6]),
        users: ['u1', GONE_USER],
        userFactors: Float32Array.from([7, 8, 9, 10]),
      }),
    );
    publish(
      'vectors',
      VECTORS.encode({
        model: 'hash',
        dimensions: 2,
        items: ['a', GONE, 'c'],
        hashes: Uint32Array.from([11, 12, 13]),
        matrix: Float32Array.from([1, 0, 0, 1, 0.5, 0.5]),
        indexes: {},
        lists: {
          offsets: Int32Array.from([0, 2, 3, 4]),
          rows: Int32Array.from([1, 2, 0, 1]),
          scores: Float32Array.from([0.5, 0.25, 0.5, 0.75]),
        },
      }),
    );
    expect(naming(GONE_USER).length).toBeGreaterThan(0);

    eraseFromArtifacts(dir, TENANT, { users: new Set([GONE_USER]) });
    let factors = FACTORS.decode(openCurrent(dir, TENANT, 'factors')!);
    expect(factors.users).toEqual(['u1']);
    expect(Array.from(factors.userFactors)).toEqual([7, 8]);
    expect(factors.items).toEqual(['a', GONE, 'c']);
    expect(naming(GONE_USER)).toEqual([]);

    eraseFromArtifacts(dir, TENANT, { items: new Set([GONE]) });
    factors = FACTORS.decode(openCurrent(dir, TENANT, 'factors')!);
    expect(factors.items).toEqual(['a', 'c']);
    expect(Array.from(factors.itemFactors)).toEqual([1, 2, 5, 6]);
    const vectors = decodeItemVectors(openCurrent(dir, TENANT, 'vectors')!, 'memory');
    expect(vectors.items).toEqual(['a', 'c']);
    expect(Array.from(vectors.hashes)).toEqual([11, 13]);
    expect(Array.from(vectors.matrix)).toEqual([1, 0, 0.5, 0.5]);
    // a's list keeps c (now row 1); c's list named only the deleted item.
    expect(Array.from(vectors.lists!.offsets)).toEqual([0, 1, 1]);
    expect(Array.from(vectors.lists!.rows)).toEqual([1]);
    expect(Array.from(vectors.lists!.scores)).toEqual([0.25]);
    expect(vectors.model).toBe('hash');
    expect(naming(GONE)).toEqual([]);
  });

  it('removes an older version it cannot read, and leaves a current one it cannot read', () => {
    const broken = publish('ease', NEIGHBOUR_LISTS.encode(LISTS));
    const current = publish('ease', NEIGHBOUR_LISTS.encode(LISTS));
    for (const version of [broken, current]) {
      const file = path.join(modelDir(dir, TENANT, 'ease'), versionName(version), 'items.arrow');
      writeFileSync(file, 'not arrow');
    }
    expect(() => openVersion(dir, TENANT, 'ease', broken)).toThrow();
    eraseFromArtifacts(dir, TENANT, { items: new Set([GONE]) });
    expect(versions(modelDir(dir, TENANT, 'ease'))).toEqual([current]);
  });
});
