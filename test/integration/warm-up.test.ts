import { afterAll, describe, expect, it } from 'vitest';
import {
  OPERATOR_KEY,
  call,
  createTenant,
  daemonsOfFile,
  tempDataDir,
  removeDataDir,
  tenantHeaders,
} from '../support/daemon-process.js';
import { eventually } from '../support/eventually.js';

const daemons = daemonsOfFile();
const dataDir = tempDataDir();
afterAll(async () => {
  await daemons.stopAll();
  removeDataDir(dataDir);
});

/** The daemon's log line that says what the warm-up did, if it logged one. */
function warmUpLine(output: string): { tenants: number; requests: number; answered: number } | undefined {
  const line = output.split('\n').find((text) => text.includes('"msg":"ranking warmed up"'));
  return line === undefined ? undefined : JSON.parse(line);
}

describe('the warm-up of a restarted daemon', () => {
  it('ranks before the daemon is ready, and leaves no answer, impression, metric or cached answer behind', async () => {
    let daemon = await daemons.start(dataDir);
    const headers = tenantHeaders(await createTenant(daemon.url, 'shop'));
    const post = async (route: string, body: unknown) => {
      const response = await call(daemon.url, 'POST', route, { headers, body });
      expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
      return response.body;
    };
    const get = async (route: string) => {
      const response = await call(daemon.url, 'GET', route, { headers });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body;
    };
    await post('/ingestion/items', {
      items: Array.from({ length: 30 }, (_, i) => ({
        externalId: `i${i}`,
        category: i % 2 ? 'shoes' : 'bags',
        attributes: { price: 10 + i },
      })),
    });
    await post('/ingestion/interactions', {
      interactions: Array.from({ length: 80 }, (_, i) => ({
        userId: `u${i % 8}`,
        itemId: `i${(i * 7) % 30}`,
        type: 'view',
      })),
    });
    await post('/scenarios', { slug: 'pdp', logicType: 'item-to-item', filter: `'price' < 30` });
    // One answer of a client's, recorded before the restart.
    expect(await post('/recommendations', { logicType: 'user-to-item', userId: 'u1' })).toMatchObject({
      algorithm: 'weighted-history',
    });
    await eventually(async () =>
      expect((await get('/analytics/algorithms')).data).toEqual([
        expect.objectContaining({ algorithm: 'weighted-history', answers: 1 }),
      ]),
    );
    const summary = await get('/analytics/summary');
    // The first start had no tenant to warm up.
    expect(warmUpLine(daemon.output())).toMatchObject({ tenants: 0, requests: 0 });
    await daemon.stop();

    daemon = await daemons.start(dataDir);
    const output = daemon.output();
    const warmed = warmUpLine(output);
    expect(warmed).toMatchObject({ tenants: 1, requests: expect.any(Number) });
    expect(warmed!.requests).toBeGreaterThan(0);
    expect(warmed!.answered).toBe(warmed!.requests);
    // Before the daemon said it listens, which it says once it is ready.
    expect(output.indexOf('ranking warmed up')).toBeLessThan(output.indexOf('nextrec listening'));
    expect(await call(daemon.url, 'GET', '/health/ready')).toMatchObject({
      status: 200,
      body: { status: 'ready', checks: { state: 'done', models: 'done', warmup: 'done' } },
    });

    const metrics = await fetch(`${daemon.url}/metrics`, { headers: { 'x-api-key': OPERATOR_KEY } });
    const text = await metrics.text();
    expect(text).not.toContain('route="/recommendations');
    expect(text).toMatch(/^nextrec_result_cache_hits_total 0$/m);
    expect(text).toMatch(/^nextrec_result_cache_misses_total 0$/m);

    // A client's answer after the restart is recorded; once it is, so would the warm-up's have been.
    await post('/recommendations', { logicType: 'user-to-item', userId: 'u2' });
    await eventually(async () =>
      expect((await get('/analytics/algorithms')).data).toEqual([
        expect.objectContaining({ algorithm: 'weighted-history', answers: 2 }),
      ]),
    );
    expect(await get('/analytics/summary')).toEqual(summary);
  });
});
