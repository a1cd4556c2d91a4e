import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OPERATOR_KEY,
  call,
  createTenant,
  expectError,
  removeDataDir,
  signedCall,
  startDaemonProcess,
  tenantHeaders,
  type DaemonProcess,
  type TenantCredentials,
} from '../support/daemon-process.js';
import { filesNaming, lakeFiles, storeFiles } from '../support/data-files.js';

let daemon: DaemonProcess;
let shop: TenantCredentials;
let headers: Record<string, string>;

const ITEMS = Array.from({ length: 20 }, (_, i) => ({ externalId: `i${i}`, category: 'c' }));
const PURCHASED = ['i0', 'i1', 'i2', 'i3', 'i4'];

async function ingest(route: string, body: object): Promise<void> {
  const response = await call(daemon.url, 'POST', route, { headers, body });
  expect(response.status).toBe(200);
}

async function recommendations(route: string): Promise<string[]> {
  const response = await call(daemon.url, 'GET', route, { headers });
  expect(response.status).toBe(200);
  return (response.body.items as { itemId: string }[]).map((item) => item.itemId);
}

function merge(userId: string, sessionIds: string[]) {
  return call(daemon.url, 'POST', '/identity/merge', { headers, body: { userId, sessionIds } });
}

beforeAll(async () => {
  daemon = await startDaemonProcess();
  shop = await createTenant(daemon.url, 'shop');
  headers = tenantHeaders(shop);
  await ingest('/ingestion/items', { items: ITEMS });
  const response = await call(daemon.url, 'PUT', '/catalog/tenant-settings', {
    headers,
    body: { userProvisioningModes: ['on_identity_merge'] },
  });
  expect(response.status).toBe(200);
  // The anonymous session buys five items (the shop's most popular ones) and views two others.
  await ingest('/ingestion/interactions', {
    interactions: [
      ...PURCHASED.map((itemId) => ({ sessionId: 'anon-1', itemId, type: 'purchase' })),
      {
        sessionId: 'anon-1',
        itemId: 'i10',
        type: 'view',
        timestamp: new Date(Date.now() - 60_000).toISOString(),
      },
      { sessionId: 'anon-1', itemId: 'i11', type: 'view' },
      ...PURCHASED.map((itemId) => ({ sessionId: 'anon-other', itemId, type: 'purchase' })),
    ],
  });
  await ingest('/ingestion/impressions', {
    impressions: [{ sessionId: 'anon-1', itemIds: ['i5', 'i6'], scenarioSlug: 'home' }],
  });
});

afterAll(async () => {
  expect(await daemon.stop()).toBe(0);
  removeDataDir(daemon.dataDir);
});

describe('identity merge', () => {
  it("makes the session's events the user's: recently-viewed, the purchase cap and a user row", async () => {
    expect(await recommendations('/recommendations/recently-viewed/alice')).toEqual([]);
    const before = await recommendations('/recommendations/user-to-item/alice?count=10');
    // A cold user gets the bestsellers, every purchased item among them.
    expect(PURCHASED.every((item) => before.includes(item))).toBe(true);

    const merged = await merge('alice', ['anon-1']);
    expect(merged.status).toBe(200);
    expect(merged.body).toEqual({ merged: 7, alreadyMerged: false });

    expect(await recommendations('/recommendations/recently-viewed/alice')).toEqual(['i11', 'i10']);
    // Now they are alice's purchases: at most max(1, 10% of 10) of them stay.
    const after = await recommendations('/recommendations/user-to-item/alice?count=10');
    expect(after).toHaveLength(10);
    expect(after.filter((item) => PURCHASED.includes(item)).length).toBeLessThanOrEqual(1);

    const users = await call(daemon.url, 'GET', '/catalog/users', { headers });
    expect(users.body.data.map((user: { externalId: string }) => user.externalId)).toContain('alice');
  });

  it('copies once: a repeat is a no-op, and of identical merges at once exactly one copies', async () => {
    expect((await merge('alice', ['anon-1'])).body).toEqual({ merged: 0, alreadyMerged: true });

    const answers = await Promise.all(Array.from({ length: 12 }, () => merge('bob', ['anon-other'])));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const copied = answers.filter((answer) => !answer.body.alreadyMerged);
    expect(copied.map((answer) => answer.body)).toEqual([{ merged: 5, alreadyMerged: false }]);
    expect(answers.filter((answer) => answer.body.alreadyMerged).every((a) => a.body.merged === 0)).toBe(
      true,
    );

    const exported = await call(daemon.url, 'GET', '/users/bob/export', { headers });
    const copies = exported.body.interactions.filter((event: { userId: string }) => event.userId === 'bob');
    expect(copies).toHaveLength(5);
    // Each event once, however often the merge was asked for: the copies, not the session's originals.
    expect(exported.body.interactions).toEqual(copies);
    expect(exported.body.merges).toEqual([
      { userId: 'bob', sessionId: 'anon-other', eventsCopied: 5, mergedAt: expect.any(String) },
    ]);
  });

  it('merges only the sessions not merged before, and validates its body', async () => {
    await ingest('/ingestion/interactions', {
      interactions: [{ sessionId: 'anon-2', itemId: 'i12', type: 'view' }],
    });
    const answer = await merge('alice', ['anon-1', 'anon-2', 'anon-2']);
    expect(answer.body).toEqual({ merged: 1, alreadyMerged: false });
    expect(await recommendations('/recommendations/recently-viewed/alice')).toEqual(['i12', 'i11', 'i10']);
    expectError(await merge('alice', []), 400, 'INVALID_BODY');
    expectError(
      await call(daemon.url, 'POST', '/identity/merge', { headers, body: { userId: 'alice' } }),
      400,
      'INVALID_BODY',
    );
  });

  it('keeps the ledger and the copies across a restart', async () => {
    expect(await daemon.stop()).toBe(0);
    daemon = await startDaemonProcess({ dataDir: daemon.dataDir });
    expect((await merge('alice', ['anon-1', 'anon-2'])).body).toEqual({ merged: 0, alreadyMerged: true });
    expect(await recommendations('/recommendations/recently-viewed/alice')).toEqual(['i12', 'i11', 'i10']);
  });
});

describe('user export and delete', () => {
  it('exports everything of a user, with the API key only', async () => {
    const exported = await call(daemon.url, 'GET', '/users/alice/export', { headers });
    expect(exported.status).toBe(200);
    expect(Object.keys(exported.body).sort()).toEqual(['impressions', 'interactions', 'merges', 'user']);
    expect(exported.body.user).toMatchObject({ externalId: 'alice', attributes: {} });
    // The sessions' events, each once: as alice's copies of them, with the session they came from.
    expect(exported.body.interactions).toHaveLength(8);
    expect(
      exported.body.interactions.map((event: { userId: string; sessionId: string }) => [
        event.userId,
        event.sessionId,
      ]),
    ).toEqual([...Array.from({ length: 7 }, () => ['alice', 'anon-1']), ['alice', 'anon-2']]);
    // A later event of a merged session, not copied, is listed once, as the session's.
    await ingest('/ingestion/interactions', {
      interactions: [{ sessionId: 'anon-2', itemId: 'i13', type: 'view' }],
    });
    const later = await call(daemon.url, 'GET', '/users/alice/export', { headers });
    expect(later.body.interactions).toHaveLength(9);
    expect(later.body.interactions[8]).toMatchObject({ userId: null, sessionId: 'anon-2', itemId: 'i13' });
    expect(exported.body.impressions).toEqual([
      expect.objectContaining({ userId: 'anon-1', itemIds: ['i5', 'i6'], scenarioSlug: 'home' }),
    ]);
    expectError(await call(daemon.url, 'GET', '/users/nobody/export', { headers }), 404, 'NOT_FOUND');
    expectError(await signedCall(daemon.url, 'GET', '/users/alice/export', shop), 403, 'FORBIDDEN_SCOPE');
    expectError(await signedCall(daemon.url, 'DELETE', '/users/alice', shop), 403, 'FORBIDDEN_SCOPE');
  });

  it('answers a user with events and no user row with user: null', async () => {
    await ingest('/ingestion/interactions', {
      interactions: [{ userId: 'carol', itemId: 'i3', type: 'view' }],
    });
    const exported = await call(daemon.url, 'GET', '/users/carol/export', { headers });
    expect(exported.body).toMatchObject({ user: null, interactions: [{ userId: 'carol', itemId: 'i3' }] });
  });

  it('deletes a user so that nothing of it remains in the store, the lake or the answers', async () => {
    // The lake holds alice before the delete, so that its absence afterwards means something.
    const lake = await call(daemon.url, 'POST', '/lake/export', {
      headers: { 'x-api-key': OPERATOR_KEY },
      body: { tenantId: 'shop' },
    });
    expect(lake.status).toBe(200);
    expect(filesNaming('anon-1', lakeFiles(daemon.dataDir, 'shop')).length).toBeGreaterThan(0);
    expect(await recommendations('/recommendations/recently-viewed/alice')).not.toEqual([]);
    expect(filesNaming('anon-1', await storeFiles(daemon.dataDir)).length).toBeGreaterThan(0);

    const deleted = await call(daemon.url, 'DELETE', '/users/alice', { headers });
    expect(deleted.status).toBe(204);

    expectError(await call(daemon.url, 'GET', '/users/alice/export', { headers }), 404, 'NOT_FOUND');
    expectError(await call(daemon.url, 'GET', '/users/anon-1/export', { headers }), 404, 'NOT_FOUND');
    expect(await recommendations('/recommendations/recently-viewed/alice')).toEqual([]);
    expect(await recommendations('/recommendations/recently-viewed/anon-1')).toEqual([]);
    expect((await storeFiles(daemon.dataDir)).length).toBeGreaterThan(0);
    for (const id of ['alice', 'anon-1', 'anon-2']) {
      expect(filesNaming(id, await storeFiles(daemon.dataDir))).toEqual([]);
      expect(filesNaming(id, lakeFiles(daemon.dataDir, 'shop'))).toEqual([]);
    }
    // Everyone else is still there.
    expect((await call(daemon.url, 'GET', '/users/bob/export', { headers })).body.interactions).toHaveLength(
      5,
    );
    expect(await recommendations('/recommendations/recently-viewed/carol')).toEqual(['i3']);
    const users = await call(daemon.url, 'GET', '/catalog/users', { headers });
    expect(users.body.data.map((user: { externalId: string }) => user.externalId)).toEqual(['bob']);
  });

  it('stays deleted across a restart; a second delete answers 204 too', async () => {
    expect(await daemon.stop()).toBe(0);
    daemon = await startDaemonProcess({ dataDir: daemon.dataDir });
    expectError(await call(daemon.url, 'GET', '/users/alice/export', { headers }), 404, 'NOT_FOUND');
    expect(await recommendations('/recommendations/recently-viewed/alice')).toEqual([]);
    expect((await call(daemon.url, 'DELETE', '/users/alice', { headers })).status).toBe(204);
    expect((await call(daemon.url, 'GET', '/users/bob/export', { headers })).status).toBe(200);
  });
});
