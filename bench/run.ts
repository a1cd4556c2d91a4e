import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Run in this order, each in its own process, with the arguments given to `npm run bench --`. */
const BENCHMARKS = [
  'ingest',
  'ingest-latency',
  'feeds',
  'bulk-items',
  'nextql',
  'rotation',
  'serve',
  'latency',
  'memory',
  'soak',
  'signed',
  'vectors',
  'analytics',
  'build',
  'freshness',
  'follow',
  'quality',
  'cluster',
] as const;

let running: ChildProcess | undefined;
let interrupted = false;
// Forwarded so that a benchmark can stop its servers and remove its temp dirs before exiting.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interrupted = true;
    running?.kill(signal);
  });
}

function runBenchmark(script: string, args: string[]): Promise<number | null> {
  return new Promise((resolve, reject) => {
    running = spawn(process.execPath, [script, ...args], { stdio: 'inherit' });
    running.once('error', reject);
    running.once('exit', (code) => resolve(code));
  });
}

const failed: string[] = [];
for (const name of BENCHMARKS) {
  if (interrupted) break;
  const script = fileURLToPath(new URL(`./${name}.js`, import.meta.url));
  if (!existsSync(script)) {
    console.log(`bench ${name}: skipped, ${script} does not exist`);
    continue;
  }
  console.log(`bench ${name}:`);
  const code = await runBenchmark(script, process.argv.slice(2));
  if (code !== 0) failed.push(name);
}
if (failed.length > 0) {
  console.error(`benchmarks failed: ${failed.join(', ')}`);
  process.exitCode = 1;
}
if (interrupted) process.exitCode = 130;
