import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { isDeepStrictEqual, promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { currentVersion, modelDir } from '../../src/artifacts/layout.js';
import {
  BIN,
  OPERATOR_KEY,
  call,
  createTenant,
  daemonsOfFile,
  tenantHeaders,
} from '../support/daemon-process.js';
import { eventually } from '../support/eventually.js';
import { modelCaughtUp, modelProgress } from '../support/models.js';
import { schedulingOf, withBuilds, type Scheduling } from '../support/scheduling.js';
import { queryLake } from '../support/store-file.js';

const run = promisify(execFile);
const daemons = daemonsOfFile();
afterAll(daemons.stopAll);
const started = daemons.start;

/** The event ids the lake's interaction segments hold, read by DuckDB from the Parquet files. */
async function lakeEventIds(dataDir: string, tenantId: string): Promise<string[]> {
  const rows = await queryLake(
    dataDir,
    tenantId,
    'interactions',
    (source) => `SELECT event_id FROM ${source} ORDER BY seq`,
  );
  return rows.map(([eventId]) => String(eventId));
}

function views(prefix: string, count: number) {
  return Array.from({ length: count }, (_, i) => ({
    eventId: `${prefix}-${i}`,
    userId: `u${i % 7}`,
    itemId: `i${i % 11}`,
    type: 'view',
  }));
}

describe('batch models through the daemon', () => {
  it('exports every acknowledged interaction to the lake, also after a SIGKILL and a restart', async () => {
    let daemon = await started();
    const headers = tenantHeaders(await createTenant(daemon.url, 'lakeshop'));
    const first = views('a', 300);
    expect(
      (await call(daemon.url, 'POST', '/ingestion/interactions', { headers, body: { interactions: first } }))
        .status,
    ).toBe(200);
    // A build exports the tenant's new interactions to the lake, then builds from the lake alone.
    await modelCaughtUp(daemon.url, 'lakeshop');
    expect(await lakeEventIds(daemon.dataDir, 'lakeshop')).toHaveLength(300);
    // Acknowledged, then killed before the export that follows commits could run.
    const second = views('b', 200);
    expect(
      (await call(daemon.url, 'POST', '/ingestion/interactions', { headers, body: { interactions: second } }))
        .status,
    ).toBe(200);
    await daemon.kill();
    daemon = await started(daemon.dataDir);
    // The restarted daemon's first model build exports what the lake lacks.
    await modelCaughtUp(daemon.url, 'lakeshop');
    expect(await lakeEventIds(daemon.dataDir, 'lakeshop')).toEqual(
      [...first, ...second].map((e) => e.eventId),
    );
    await daemon.stop();
  });

  it('nextrec build beside a running daemon publishes a version the daemon swaps in while it answers', async () => {
    const daemon = await started();
    const headers = tenantHeaders(await createTenant(daemon.url, 'cronshop'));
    await call(daemon.url, 'POST', '/ingestion/interactions', {
      headers,
      body: { interactions: views('c', 200) },
    });
    const dir = modelDir(daemon.dataDir, 'cronshop', 'cooccurrence');
    const before = await modelCaughtUp(daemon.url, 'cronshop');
    expect(currentVersion(dir)).toBe(before);
    // Requests keep coming while the build runs and the swap happens: none may fail.
    let stop = false;
    const statuses: number[] = [];
    const load = (async () => {
      while (!stop) {
        const response = await call(daemon.url, 'POST', '/recommendations', {
          headers,
          body: { logicType: 'user-to-item', userId: 'u1', count: 5, noCache: true },
        });
        statuses.push(response.status);
      }
    })();
    const { stdout } = await run(process.execPath, [BIN, 'build', 'all', '--data-dir', daemon.dataDir], {
      env: { ...process.env, NEXTREC_ADMIN_KEY: OPERATOR_KEY },
    });
    expect(stdout).toMatch(/cronshop cooccurrence v\d+: 200 interactions/);
    const after = currentVersion(dir)!;
    expect(after).toBeGreaterThan(before);
    // The daemon reads CURRENT every second, and swaps the version in however long its load takes.
    await eventually(async () => expect((await modelProgress(daemon.url, 'cronshop')).version).toBe(after));
    expect(daemon.output()).toMatch(
      new RegExp(
        `"tenantId":"cronshop","model":"cooccurrence","version":${after},.*"msg":"model swapped in"`,
      ),
    );
    stop = true;
    await load;
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set([200]));
    await daemon.stop();
  });

  it('loads models on a thread of its own that runs with the builds, on the spared CPUs under SCHED_IDLE', async () => {
    const daemon = await started();
    const pid = String(daemon.process.pid);
    const main = schedulingOf(`/proc/${pid}`);
    // Every placement other than the daemon's own that one of its threads had, watched for from before
    // the first build: the loading thread lives about 2 s past each load.
    const moved = new Map<string, Scheduling>();
    const watch = setInterval(() => {
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        try {
          const scheduling = schedulingOf(`/proc/${pid}/task/${task}`);
          if (!isDeepStrictEqual(scheduling, main)) moved.set(task, scheduling);
        } catch {
          // The thread ended between the listing and the read.
        }
      }
    }, 5);
    try {
      const headers = tenantHeaders(await createTenant(daemon.url, 'loadshop'));
      // Thirty users who each view 300 of 3,000 items, each user's overlapping the next one's: an EASE
      // model larger than the versions loaded at the daemon's priority (docs/batch-models.md, "Hot swap").
      const interactions = Array.from({ length: 9_000 }, (_, i) => ({
        userId: `u${i % 30}`,
        itemId: `i${((i % 30) * 100 + Math.floor(i / 30)) % 3_000}`,
        type: 'view',
      }));
      await call(daemon.url, 'POST', '/ingestion/interactions', { headers, body: { interactions } });
      await modelCaughtUp(daemon.url, 'loadshop', 'ease');
      // With one CPU, nothing is spared and every thread stays where it was.
      if (main.cpus.length > 1) await eventually(async () => expect(moved.size).toBeGreaterThan(0));
    } finally {
      clearInterval(watch);
    }
    expect(moved.has(pid)).toBe(false);
    for (const scheduling of moved.values()) expect(scheduling).toEqual(withBuilds(main.cpus));
    expect(schedulingOf(`/proc/${pid}`)).toEqual(main);
    await daemon.stop();
  });

  it('exits non-zero with a line per failed tenant', async () => {
    const daemon = await started();
    const result = await run(
      process.execPath,
      [BIN, 'build', 'all', '--tenant', 'ghost', '--data-dir', daemon.dataDir],
      {
        env: { ...process.env, NEXTREC_ADMIN_KEY: OPERATOR_KEY },
      },
    ).catch((error: { code: number; stderr: string }) => error);
    expect(result).toMatchObject({ code: 1 });
    expect((result as { stderr: string }).stderr).toContain("no tenant 'ghost'");
    await daemon.stop();
  });
});
