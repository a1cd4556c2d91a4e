import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { appendInteractions } from '../../../src/ingestion/events.js';
import { buildCooccurrence } from '../../../src/models/cooccurrence-builder.js';
import { openRuntime, type Runtime } from '../../../src/runtime.js';
import { createTenant } from '../../../src/tenants/tenant-service.js';

let runtime: Runtime | undefined;
let dir: string;

afterEach(async () => {
  await runtime?.store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('buildCooccurrence', () => {
  it('scores pairs by cosine of their identity sets, best first, per tenant only', async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'nextrec-cooc-'));
    runtime = await openRuntime(dir);
    await createTenant(runtime, 'shop');
    await createTenant(runtime, 'other');
    const shop = runtime.state.get('shop')!;
    const view = (who: string, itemId: string) => ({ userId: who, itemId, type: 'view' as const });
    // a is seen with b by three people, with c by one; d is alone.
    await appendInteractions(runtime, shop, [
      view('u1', 'a'),
      view('u1', 'b'),
      view('u2', 'a'),
      view('u2', 'b'),
      view('u3', 'a'),
      view('u3', 'b'),
      view('u3', 'c'),
      view('u4', 'd'),
    ]);
    await appendInteractions(runtime, runtime.state.get('other')!, [view('u1', 'a'), view('u1', 'd')]);

    const model = await buildCooccurrence(
      runtime.store,
      'shop',
      shop.catalog.externalIds,
      shop.interactionTotal,
    );
    const id = (external: string) => shop.catalog.idOf(external);
    const neighbours = (external: string) => {
      const start = model.rangeStart(id(external));
      const end = model.rangeEnd(id(external));
      return Array.from({ length: end - start }, (_, k) => [
        shop.catalog.externalIds[model.neighbours[start + k]],
        Number(model.weights[start + k].toFixed(4)),
      ]);
    };
    expect(neighbours('a')).toEqual([
      ['b', 1],
      ['c', Number((1 / Math.sqrt(3)).toFixed(4))],
    ]);
    expect(neighbours('c')).toEqual([
      ['a', Number((1 / Math.sqrt(3)).toFixed(4))],
      ['b', Number((1 / Math.sqrt(3)).toFixed(4))],
    ]);
    // d co-occurs with a only in the other tenant.
    expect(neighbours('d')).toEqual([]);
    expect(model.interactionCount).toBe(8);
  });
});
