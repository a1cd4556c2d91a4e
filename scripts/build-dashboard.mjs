// Bundles the dashboard (dashboard/) into dist/dashboard/: app.js (the TypeScript sources and the parts of
// Chart.js they import, as one ES module), app.css and index.html. Everything comes from node_modules, so
// the build works offline; the daemon serves the result at /dashboard (src/server/routes/dashboard.ts).
import { build } from 'esbuild';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const source = path.join(root, 'dashboard');
const out = path.join(root, 'dist/dashboard');

await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });

const result = await build({
  absWorkingDir: root,
  entryPoints: [
    { in: path.join(source, 'src/main.ts'), out: 'app' },
    { in: path.join(source, 'styles.css'), out: 'app' },
  ],
  outdir: out,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
});
await copyFile(path.join(source, 'index.html'), path.join(out, 'index.html'));

const sizes = Object.entries(result.metafile.outputs)
  .map(([file, { bytes }]) => `${path.basename(file)} ${(bytes / 1024).toFixed(1)} KiB`)
  .join(', ');
console.log(`dashboard built into dist/dashboard: ${sizes}, index.html`);
