import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkStoreUrl, openStore, StoreUrlError } from '../../../src/store/open-store.js';

const dir = mkdtempSync(path.join(tmpdir(), 'nextrec-open-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A port of 127.0.0.1 nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('the store URL', () => {
  it('takes postgres:// and postgresql:// URLs', () => {
    expect(checkStoreUrl('postgres://u:p@db.example:6432/shop').port).toBe('6432');
    expect(checkStoreUrl('postgresql://u@127.0.0.1/shop').hostname).toBe('127.0.0.1');
  });

  it('refuses anything else without repeating it (it may hold a password)', () => {
    for (const url of ['mysql://u:s3cret@h/db', 'not a url s3cret', 'postgres://u:s3cret@/db']) {
      let error: unknown;
      try {
        checkStoreUrl(url);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(StoreUrlError);
      expect((error as Error).message).toMatch(/postgres:\/\/user:password@host:port\/database/);
      expect((error as Error).message).not.toContain('s3cret');
    }
  });

  it('names the server it cannot reach, never the password', async () => {
    const port = await closedPort();
    const error = await openStore(dir, { url: `postgres://shop:s3cret@127.0.0.1:${port}/nextrec` }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(StoreUrlError);
    expect((error as Error).message).toContain(
      `cannot open the PostgreSQL store at 127.0.0.1:${port}/nextrec`,
    );
    expect((error as Error).message).not.toContain('s3cret');
  });
});
