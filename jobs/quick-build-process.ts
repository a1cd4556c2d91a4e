/**
 * The process the daemon keeps for small tenants' builds (docs/batch-models.md). A build process of its
 * own costs a second of CPU before it builds anything (Node.js and DuckDB start, the jobs compile), where a
 * small tenant's co-occurrence takes a tenth of that: here they run one after another in one process that
 * stays, each on a lake opened for it as `nextrec build` opens one. Argument: the data dir. Requests come
 * over the IPC channel (QuickBuildRequest); the process ends when the channel closes.
 */
import type { QuickBuildReply, QuickBuildRequest } from '../src/artifacts/quick-build-messages.js';
import { buildTenant, type BuildOptions } from './build.js';
import { LakeInstance } from './lake/lake-db.js';

const [dataDir] = process.argv.slice(2);

// A small tenant's build reads little: one thread and a small memory limit leave the machine to serving,
// and one DuckDB for them all saves each build starting and closing one (a third of a small build's CPU).
const SMALL_BUILD: BuildOptions = {
  threads: 1,
  instance: await LakeInstance.create({ memoryLimit: '256MB', threads: 1 }),
};

let queue: Promise<void> = Promise.resolve();

function reply(message: QuickBuildReply): void {
  process.send?.(message);
}

process.on('message', (request: QuickBuildRequest) => {
  queue = queue.then(async () => {
    try {
      const results = await buildTenant(dataDir, request.tenantId, request.models, SMALL_BUILD);
      reply({ id: request.id, versions: results.map(({ manifest }) => manifest.version) });
    } catch (error) {
      reply({ id: request.id, failure: (error as Error).message });
    }
  });
});

// The daemon ended, or let this process go (it was idle): end with the channel, whatever waits.
process.on('disconnect', () => process.exit(0));
