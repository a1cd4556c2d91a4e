import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { liveSegments, tableDir } from '../../../src/lake/layout.js';
import { LakeExporter } from '../../../src/store/lake-export.js';
import {
  closeTempStore,
  openTempStore,
  storedInteraction,
  type TempStore,
} from '../../support/temp-store.js';

const TENANT = 'shop';
const DELAY_MS = 20;

let temp: TempStore;
let exporter: LakeExporter;
let nextEvent = 0;

beforeEach(async () => {
  temp = await openTempStore('nextrec-lake-hold-');
  exporter = new LakeExporter(temp.store, temp.dir, DELAY_MS);
  exporter.follow((error) => {
    throw error;
  });
});
afterEach(async () => {
  await exporter.stop();
  await closeTempStore(temp);
});

function commitInteraction(): Promise<void> {
  return temp.store.writes.submit((rows) => {
    rows.interactions.push([TENANT, storedInteraction(`event-${nextEvent++}`)]);
    return () => undefined;
  });
}

const exported = () => liveSegments(tableDir(temp.dir, TENANT, 'interactions')).length;

/** Waits until `done` holds, at most 5 s. */
async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(10);
  }
}

describe("holding a tenant's lake exports", () => {
  it('exports after a commit by itself, and only once released while held', async () => {
    await commitInteraction();
    await until(() => exported() === 1);

    const release = exporter.hold(TENANT);
    const again = exporter.hold(TENANT);
    await commitInteraction();
    await sleep(DELAY_MS * 10);
    expect(exported()).toBe(1);
    // Held until the last hold is released; releasing one twice counts once.
    release();
    release();
    await sleep(DELAY_MS * 10);
    expect(exported()).toBe(1);
    again();
    await until(() => exported() === 2);
    // An export asked for (a model build's) is not held.
    const held = exporter.hold(TENANT);
    await commitInteraction();
    await exporter.flush(TENANT);
    expect(exported()).toBe(3);
    held();
  });

  it('exports what came due while held when it stops', async () => {
    exporter.hold(TENANT);
    await commitInteraction();
    await sleep(DELAY_MS * 10);
    expect(exported()).toBe(0);
    await exporter.stop();
    expect(exported()).toBe(1);
  });
});
