import { prepareModel } from '/work/main/dist/src/models/prepared-model.js';
import { readCurrentVersion, modelDir } from '/work/main/dist/src/artifacts/layout.js';
import { arrowToColumns } from '/work/main/dist/src/artifacts/columns.js';
import { readFileSync, readdirSync } from 'node:fs';
const dataDir = '/tmp/probe-data';
for (const model of ['cooccurrence', 'ease']) {
  const v = await readCurrentVersion(modelDir(dataDir, 'bench', model));
  const dir = modelDir(dataDir, 'bench', model) + '/' + readdirSync(modelDir(dataDir, 'bench', model)).filter(f => f.startsWith('v')).sort().at(-1);
  const { external_id } = arrowToColumns(readFileSync(dir + '/items.arrow'), { external_id: 'text' }, 'x');
  const ids = new Map(external_id.map((e, i) => [e, i]));
  const catalog = { size: 1000, idOf: (e) => ids.get(e) ?? -1 };
  const times = [];
  for (let r = 0; r < 100; r++) { const t = performance.now(); prepareModel(dataDir, 'bench', model, v, catalog); times.push(performance.now() - t); }
  times.sort((a, b) => a - b);
  console.log(model, 'median', times[50].toFixed(2), 'min', times[0].toFixed(2), 'max', times[99].toFixed(2));
}
