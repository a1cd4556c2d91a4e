import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The parts of a V8 `.cpuprofile` (as written by `node --cpu-prof`) this summary reads. */
interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export interface TimeShare {
  name: string;
  ms: number;
  /** Of the sampled window, idle time included. */
  share: number;
}

export interface ProfileSummary {
  windowMs: number;
  idleMs: number;
  functions: TimeShare[];
  areas: TimeShare[];
}

const IDLE = '(idle)';
const GC = '(garbage collector)';
const OTHER = 'other';
const TOP_FUNCTIONS = 15;

/**
 * Parts of the ingest path, told apart by script. Time counts for the library that was asked to do the
 * work, so these win over the frames below them: a nextrec refine callback under zod's parse is validation.
 */
const LIBRARY_AREAS: Area[] = [
  ['DuckDB', (url) => url.includes('/@duckdb/')],
  ['JSON parsing', (url) => url.includes('/secure-json-parse/')],
  ['zod validation', (url) => url.includes('/zod/')],
];
/** For time outside those libraries: the area of the nearest frame with a script. */
const CALLER_AREAS: Area[] = [
  ['nextrec', (url) => url.includes('/dist/src/')],
  [
    'Fastify and Node HTTP',
    (url) => url.includes('/fastify/') || url.includes('/find-my-way/') || url.startsWith('node:'),
  ],
];

type Area = [name: string, matches: (url: string) => boolean];

/**
 * Self time per function and per area, from the samples taken between `fromUs` and `toUs` (the
 * monotonic clock of the profile), so that startup and shutdown don't count.
 */
export function summarizeProfile(file: string, root: string, fromUs: number, toUs: number): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

  const stackOf = function* (id: number) {
    for (let at: number | undefined = id; at !== undefined; at = parents.get(at)) {
      yield nodes.get(at)!.callFrame;
    }
  };
  const areaOf = (id: number): string => {
    if (nodes.get(id)!.callFrame.functionName === GC) return 'garbage collection';
    for (const { url } of stackOf(id)) {
      const library = LIBRARY_AREAS.find(([, matches]) => matches(url));
      if (library) return library[0];
    }
    // Native and generated code have no script: they belong to the area of the code that called them.
    for (const { url } of stackOf(id)) {
      if (url) return CALLER_AREAS.find(([, matches]) => matches(url))?.[0] ?? OTHER;
    }
    return OTHER;
  };
  const labelOf = (id: number): string => {
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    if (functionName.startsWith('(')) return functionName;
    const name = functionName || '(anonymous)';
    if (url) return `${name}  ${scriptName(url, root)}:${lineNumber + 1}`;
    return `${name}  (native or generated code, in ${areaOf(id)})`;
  };

  const byFunction = new Map<string, number>();
  const byArea = new Map<string, number>();
  let windowUs = 0;
  let idleUs = 0;
  let sampledAt = profile.startTime;
  profile.samples.forEach((id, i) => {
    sampledAt += profile.timeDeltas[i];
    // A sample stands for the time until the next one.
    const us = profile.timeDeltas[i + 1] ?? 0;
    if (sampledAt < fromUs || sampledAt >= toUs) return;
    windowUs += us;
    if (nodes.get(id)!.callFrame.functionName === IDLE) {
      idleUs += us;
      return;
    }
    const label = labelOf(id);
    byFunction.set(label, (byFunction.get(label) ?? 0) + us);
    const area = areaOf(id);
    byArea.set(area, (byArea.get(area) ?? 0) + us);
  });

  const shares = (times: Map<string, number>) =>
    [...times]
      .map(([name, us]) => ({ name, ms: us / 1000, share: windowUs ? us / windowUs : 0 }))
      .sort((a, b) => b.ms - a.ms);
  return {
    windowMs: windowUs / 1000,
    idleMs: idleUs / 1000,
    functions: shares(byFunction).slice(0, TOP_FUNCTIONS),
    areas: shares(byArea),
  };
}

/** A script's path inside its package, or inside the project for nextrec's own code. */
function scriptName(url: string, root: string): string {
  if (!url.startsWith('file://')) return url;
  const file = new URL(url).pathname;
  const packagePath = file.lastIndexOf('/node_modules/');
  return packagePath >= 0 ? file.slice(packagePath + '/node_modules/'.length) : path.relative(root, file);
}

export function formatProfileSummary(
  summary: ProfileSummary,
  file: string,
  thread = 'Daemon main thread',
): string {
  const percent = (share: number) => `${(100 * share).toFixed(1)}%`.padStart(6);
  const idleShare = summary.windowMs ? summary.idleMs / summary.windowMs : 0;
  return [
    `${thread} during the timed run: ${summary.windowMs.toFixed(0)} ms sampled, ` +
      `${percent(idleShare).trim()} idle (profile: ${file})`,
    `Top ${summary.functions.length} functions by self time:`,
    '     self ms   share  function',
    ...summary.functions.map((f) => `  ${f.ms.toFixed(1).padStart(10)}  ${percent(f.share)}  ${f.name}`),
    'Self time by area:',
    ...summary.areas.map((a) => `  ${a.name.padEnd(24)} ${percent(a.share)}`),
    `  ${'idle'.padEnd(24)} ${percent(idleShare)}`,
    'Only the main JS thread is sampled: DuckDB work on its own threads (COMMIT, WAL writes) shows as idle',
    'here, and as "cores busy" above 1 in the daemon line.',
  ].join('\n');
}
