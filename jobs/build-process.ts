/**
 * The process the daemon starts to build a tenant's models (docs/batch-models.md): building apart from
 * the daemon keeps requests at their latency and the daemon's memory flat. Arguments: data dir, tenant,
 * comma-separated models. Exit code 0 when every model was published; otherwise the reason on stderr.
 */
import type { ModelName } from '../src/artifacts/layout.js';
import { buildTenant } from './build.js';

const [dataDir, tenantId, models] = process.argv.slice(2);

// A build whose starter ended without ending it (the daemon's launcher killed, say) ends too, rather than
// publish beside the build the daemon starts next for the same tenant.
const starter = process.ppid;
setInterval(() => {
  if (process.ppid !== starter) process.exit(1);
}, 1_000).unref();
try {
  const results = await buildTenant(dataDir, tenantId, models.split(',') as ModelName[]);
  process.stdout.write(
    `${JSON.stringify(results.map(({ model, manifest }) => ({ model, version: manifest.version })))}\n`,
  );
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exitCode = 1;
}
