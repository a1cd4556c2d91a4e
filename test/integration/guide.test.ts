import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  removeDataDir,
  startDaemonProcess,
  tempDataDir,
  type DaemonProcess,
} from '../support/daemon-process.js';

/**
 * docs/guide.md and the README's tour run as written. Every ```sh block of the guide (of the README: of
 * its section "A ten-minute tour") runs, in order, in one bash session
 * (`set -euo pipefail`, so exports carry over and the first failing command stops the run), from the
 * repository's directory (where `npm start` runs and `nextrec/client` resolves to this package), against
 * a daemon started as `npm start` starts it: `serve --demo`, with no NEXTREC_ADMIN_KEY, so that it
 * writes admin.key as a first start does; each document has a daemon of its own. Two things differ, and
 * the script substitutes them in the document's text and nowhere else:
 *
 * - the daemon listens on a free port (`--port 0`): `http://127.0.0.1:8080` becomes its URL;
 * - its data dir is a temporary one: `./data` becomes that directory's path.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const GUIDE = path.join(ROOT, 'docs/guide.md');
const README = path.join(ROOT, 'README.md');
const TOUR = '## A ten-minute tour';
const GUIDE_URL = 'http://127.0.0.1:8080';
const MARKER = '@@guide-block';

/** The text of every ```sh block, in order. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
}

/** The ```sh blocks of the README's tour: those of its section, up to the next section. */
function tourBlocks(readme: string): string[] {
  const start = readme.indexOf(`\n${TOUR}\n`);
  expect(start, `README.md has a section "${TOUR.slice(3)}"`).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 1);
  return shellBlocks(readme.slice(start, end < 0 ? undefined : end));
}

/** The JSON values a block printed one after another (curl adds no newline between answers). */
function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') {
      if (depth++ === 0) start = i;
    } else if ((char === '}' || char === ']') && --depth === 0) {
      values.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return values;
}

function runBash(
  script: string,
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs `blocks` in one bash session against `daemon`, from the repository's directory, and answers what
 * each block printed on stdout; throws with the failing block and its output when one fails.
 */
async function runBlocks(blocks: string[], daemon: DaemonProcess, scratch: string): Promise<string[]> {
  const script = [
    'set -euo pipefail',
    ...blocks.map((block, i) => {
      const text = block.replaceAll(GUIDE_URL, daemon.url).replace(/\.\/data\b/g, daemon.dataDir);
      return `printf '\\n${MARKER} %d@@\\n' ${i}\n${text}`;
    }),
  ].join('\n');
  const file = path.join(scratch, 'blocks.sh');
  writeFileSync(file, `${script}\n`);
  const { code, stdout, stderr } = await runBash(file, ROOT);
  const parts = stdout.split(new RegExp(`\\n${MARKER} (\\d+)@@\\n`));
  const last = parts.length > 1 ? Number(parts[parts.length - 2]) : -1;
  if (code !== 0) {
    throw new Error(
      `block ${last} failed (exit code ${code}):\n${blocks[last]}\nstdout:\n${parts.at(-1)}\nstderr:\n${stderr}`,
    );
  }
  expect(last).toBe(blocks.length - 1);
  return blocks.map((_, i) => parts[2 * i + 2] ?? '');
}

/** The JSON answers of the one block of `blocks` that contains `text`. */
function answersIn(blocks: string[], printed: string[], text: string): unknown[] {
  const matching = blocks.flatMap((block, i) => (block.includes(text) ? [i] : []));
  expect(matching, `blocks containing ${text}`).toHaveLength(1);
  return jsonValues(printed[matching[0]]);
}

// Any item of a list may be the whole document, a projection or `{ itemId, score }`.
type Item = { itemId: string; score?: number; category?: string; attributes?: Record<string, unknown> };
type Answer = { items: Item[]; count: number; algorithm: string; scenario?: string; [key: string]: unknown };

/**
 * A demo daemon and a scratch dir for the blocks of one document, started before its tests and removed
 * after them; and a test that every curl of the blocks fails on an error answer.
 */
function documentRun(blocks: string[], least: { blocks: number; curls: number }) {
  const run = { daemon: undefined as unknown as DaemonProcess, scratch: '' };
  beforeAll(async () => {
    run.daemon = await startDaemonProcess({ args: ['--demo'], env: { NEXTREC_ADMIN_KEY: '' } });
    run.scratch = tempDataDir();
  });
  afterAll(async () => {
    await run.daemon?.stop();
    if (run.daemon) removeDataDir(run.daemon.dataDir);
    if (run.scratch) removeDataDir(run.scratch);
  });
  it('says to fail on an error answer in every curl', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(least.blocks);
    const curls = blocks.flatMap((block) => block.split('\n')).filter((line) => /\bcurl\s/.test(line));
    expect(curls.length).toBeGreaterThanOrEqual(least.curls);
    for (const line of curls) expect(line).toContain('curl -s --fail-with-body');
  });
  return run;
}

describe('docs/guide.md', () => {
  const blocks = shellBlocks(readFileSync(GUIDE, 'utf8'));
  const run = documentRun(blocks, { blocks: 21, curls: 31 });
  /** What each block printed on stdout, by block. */
  let printed: string[] = [];

  it('runs every shell block in one session, each curl answered with a 2xx', async () => {
    printed = await runBlocks(blocks, run.daemon, run.scratch);
  });

  const answersOf = (text: string) => answersIn(blocks, printed, text);
  const answerOf = (text: string) => answersOf(text).at(-1) as Answer;

  it('answers what the guide says', () => {
    expect(printed).toHaveLength(blocks.length);
    expect(answerOf('/health')).toMatchObject({ status: 'ok' });
    expect(answerOf('-d \'{"tenantId":"acme"}\'')).toMatchObject({
      tenantId: 'acme',
      apiKey: expect.any(String),
      privateToken: expect.any(String),
      publicToken: expect.any(String),
    });
    expect(answerOf('-H "X-Api-Key: $NEXTREC_OPERATOR_KEY" http://127.0.0.1:8080/tenants')).toEqual({
      tenants: ['acme', 'demo'],
    });
    expect(answerOf('Authorization: Bearer $TOKEN')).toMatchObject({ items: 3000 });

    // Signed requests: the private token (GET and POST) and the public token through nextrec/client.
    expect(answerOf('TARGET="/recommendations/user-to-item/')).toMatchObject({
      algorithm: 'weighted-history',
      count: 3,
    });
    expect(answerOf('/ingestion/interactions "$TS"')).toEqual({ accepted: 1 });
    const widget = answerOf("from 'nextrec/client'");
    expect(widget).toMatchObject({ algorithm: 'co-occurrence', count: 3 });
    expect(widget.items[0]).toEqual({
      itemId: expect.any(String),
      score: expect.any(Number),
      attributes: { name: expect.any(String), price: expect.any(Number) },
    });

    const userToItem = answerOf('"userId": "user-00042", "count": 5, "country": "DE"');
    expect(userToItem).toMatchObject({ algorithm: 'weighted-history', count: 5 });
    for (const item of userToItem.items) expect(item.attributes!.price).toBeLessThan(150);
    expect(answerOf('{"scenario":"pdp","itemId":"sku-000680","count":5')).toMatchObject({
      scenario: 'pdp',
      algorithm: 'co-occurrence',
      count: 5,
    });
    expect(answerOf('{"scenario":"cart","itemIds"')).toMatchObject({
      scenario: 'cart',
      algorithm: 'multi-seed-co-occurrence',
    });
    expect(answerOf('"logicType":"similar-products"')).toMatchObject({ algorithm: 'vector-similarity' });
    const recent = answerOf('"logicType":"recently-viewed"');
    expect(recent).toMatchObject({ algorithm: 'recently-viewed', count: 5 });
    // The signed POST above logged a view of sku-002871 just before: it is the newest.
    expect(recent.items[0]).toEqual({ itemId: 'sku-002871' });
    for (const route of ['user-to-item', 'item-to-item', 'similar-products', 'recently-viewed']) {
      expect(answerOf(`${GUIDE_URL}/recommendations/${route}/`).count).toBe(5);
    }
    expect(answerOf('/recommendations/items-to-items?scenario=cart')).toMatchObject({ scenario: 'cart' });
    expect(answerOf('/recommendations/search?query=leather')).toMatchObject({
      algorithm: 'hybrid-search',
      query: {
        original: 'leather boots under 100',
        semanticText: 'leather boots',
        extractedFilters: `'category' in {"boots"} and 'price' < 100`,
      },
    });

    const [synonym, wellies] = answersOf('search?query=wellies') as Answer[];
    expect(synonym).toEqual({ id: expect.any(String), term: 'wellies', synonym: 'rain boots', oneWay: true });
    expect((wellies.query as { semanticText: string }).semanticText).toBe('wellies rain boots');
    expect(wellies.items[0].category).toBe('boots');

    // Rotation: the second answer shows none of the first's items.
    const [rotated, rotatedAgain] = answersOf('"rotationRate":1') as Answer[];
    expect([rotated.count, rotatedAgain.count]).toEqual([4, 4]);
    const shown = new Set(rotated.items.map((item) => item.itemId));
    for (const item of rotatedAgain.items) expect(shown.has(item.itemId)).toBe(false);

    // Context in nextQL: only items of the seed's category.
    const [seedItem, alike] = answersOf("context_item('category')") as [Item, Answer];
    expect(alike.items.length).toBeGreaterThan(0);
    for (const item of alike.items) expect(item.category).toBe(seedItem.category);

    // Rules, a segmentation and a scenario that uses them.
    expect(answersOf('http://127.0.0.1:8080/rules')).toHaveLength(3);
    expect(answerOf('/segmentations/price-band/segments')).toMatchObject({
      data: [
        { name: 'everyday', itemCount: expect.any(Number) },
        { name: 'premium', itemCount: expect.any(Number) },
      ],
    });
    const balanced = answerOf('"includedProperties":["category","attributes.price","attributes.stock"]');
    expect(balanced).toMatchObject({ scenario: 'home-balanced', count: 6 });
    const perCategory = new Map<string, number>();
    for (const item of balanced.items) {
      expect(item.attributes!.stock).toBeGreaterThan(0);
      perCategory.set(item.category!, (perCategory.get(item.category!) ?? 0) + 1);
    }
    expect(Math.max(...perCategory.values())).toBeLessThanOrEqual(2);

    expect(answerOf('/catalog/tenant-settings')).toMatchObject({
      freshness: { keyPath: 'attributes.publishedAt' },
      userProvisioningModes: ['on_identity_merge', 'on_first_known_interaction'],
      interactionWeights: { view: 1, cart: 2, purchase: 4, rating: 3, bookmark: 3 },
    });
    expect(answerOf('/catalog/vector-defaults')).toEqual({
      hnsw_ef: 128,
      score_threshold: 0.2,
      quantization: 'f32',
    });
    const shirts = answerOf('"scenario":"similar-shirts"');
    expect(shirts.items.length).toBeGreaterThan(0);
    for (const item of shirts.items) expect(item.category).toBe('shirts');
    expect(answerOf('"scenario":"cart-hybrid"')).toMatchObject({ algorithm: 'multi-seed-hybrid' });

    // The widget's round trip: its answer, then the impression and the click it logged.
    expect(answersOf('ANSWER=$(curl').slice(-2)).toEqual([{ accepted: 1 }, { accepted: 1 }]);
    expect(answerOf('/identity/merge')).toEqual({ merged: 2, alreadyMerged: false });
    // Deleting items: three clearance items, two of them updated then deleted by filter, one by id (204).
    expect(answersOf('/catalog/items/bulk-update')).toEqual([
      { upserted: 3 },
      { updated: 2 },
      { deleted: 2 },
    ]);

    // Revenue: the priced purchase, the sums it joins (the demo's purchases carry prices), a view's price refused.
    const [paid, summary, funnel, refused] = answersOf('"price": 119.98') as [
      unknown,
      { revenue: number; profit: number },
      { data: { revenue: number }[] },
      { code: string; message: string },
    ];
    expect(paid).toEqual({ accepted: 1 });
    expect(summary.revenue).toBeGreaterThan(119.98);
    expect(summary.profit).toBeGreaterThan(23.5);
    expect(funnel.data.at(-1)!.revenue).toBeGreaterThanOrEqual(119.98);
    expect(refused).toMatchObject({
      code: 'INVALID_BODY',
      message: expect.stringMatching(/purchase and cart/),
    });
    const [bookmarked, byType] = answersOf('"type":"bookmark"') as [
      unknown,
      { data: { type: string; count: number }[] },
    ];
    expect(bookmarked).toEqual({ accepted: 1 });
    expect(byType.data).toContainEqual({ type: 'bookmark', count: 1 });

    expect(answerOf('/analytics/scenario/pdp/summary')).toMatchObject({ impressions: expect.any(Number) });
    expect(answerOf('"scenario":"pdp","itemId":"sku-000680","userId":"user-00042"')).toMatchObject({
      experiment: { slug: 'pdp-test', variant: expect.stringMatching(/^pdp(-in-stock)?$/) },
    });
    expect(answerOf('"sourceType": "google_merchant"')).toMatchObject({
      id: 'merchant',
      sourceType: 'google_merchant',
      itemIdPath: 'g:id',
      state: 'draft',
      lastSync: null,
    });
    expect(answerOf('/experiments/home-test/results')).toMatchObject({
      variants: [{ scenario: 'home' }, { scenario: 'home-b' }],
    });
  });

  it('pages an answer, and runs a batch whose recommendation results share no item', () => {
    const itemIds = (answer: Answer) => answer.items.map((item) => item.itemId);
    const [first, next] = answersOf('/recommendations/next') as Answer[];
    expect(first).toMatchObject({ scenario: 'pdp', count: 4 });
    expect(next).toMatchObject({ scenario: 'pdp', algorithm: first.algorithm, count: 4 });
    expect(next.recommId).not.toBe(first.recommId);
    expect(itemIds(next).filter((id) => itemIds(first).includes(id))).toEqual([]);

    const { results } = answerOf('http://127.0.0.1:8080/batch') as unknown as {
      results: { status: number; body: Answer & { code?: string } }[];
    };
    expect(results.map((result) => result.status)).toEqual([200, 200, 200, 404]);
    const [home, pdp] = [itemIds(results[0].body), itemIds(results[1].body)];
    expect([home.length, pdp.length]).toEqual([4, 4]);
    expect(pdp.filter((id) => home.includes(id))).toEqual([]);
    expect(results[2].body).toMatchObject({ externalId: 'sku-000680' });
    expect(results[3].body).toMatchObject({ statusCode: 404, code: 'NOT_FOUND' });
  });
});

describe('README.md, "A ten-minute tour"', () => {
  const blocks = tourBlocks(readFileSync(README, 'utf8'));
  const run = documentRun(blocks, { blocks: 5, curls: 8 });
  let printed: string[] = [];

  it('runs every shell block of the tour in one session, each curl answered with a 2xx', async () => {
    printed = await runBlocks(blocks, run.daemon, run.scratch);
  });

  it('answers what the tour says: ingestion, three lists, a scenario, the analytics', () => {
    expect(printed).toHaveLength(blocks.length);
    const answersOf = (text: string) => answersIn(blocks, printed, text);
    expect(answersOf('/health/ready')).toEqual([expect.objectContaining({ status: 'ready' })]);
    expect(answersOf('/ingestion/items')).toEqual([{ upserted: 1 }, { accepted: 3 }]);

    const [userToItem, itemToItem, recent] = answersOf('"logicType":"user-to-item"') as Answer[];
    expect(userToItem).toMatchObject({ algorithm: 'weighted-history', count: 5 });
    for (const item of userToItem.items) {
      expect(item).toEqual({
        itemId: expect.any(String),
        score: expect.any(Number),
        category: expect.any(String),
        attributes: { name: expect.any(String) },
      });
    }
    expect(itemToItem).toMatchObject({ algorithm: 'co-occurrence', count: 5 });
    for (const item of itemToItem.items) {
      expect(item.attributes).toEqual({ name: expect.any(String), price: expect.any(Number) });
    }
    // What the shopper just viewed (both views arrived in one batch, at one time).
    expect(recent).toMatchObject({ algorithm: 'recently-viewed' });
    expect(recent.items.map((item) => item.itemId).sort()).toEqual(['sku-002871', 'sku-tour-01']);

    const [scenario, list] = answersOf('"slug": "tour-home"') as [Record<string, unknown>, Answer];
    expect(scenario).toMatchObject({ slug: 'tour-home', logicType: 'user-to-item' });
    expect(list).toMatchObject({ scenario: 'tour-home', count: 6 });
    const perCategory = new Map<string, number>();
    for (const item of list.items) {
      expect(item.attributes!.stock).toBeGreaterThan(0);
      expect(item.attributes!.price).toBeLessThan(150);
      perCategory.set(item.category!, (perCategory.get(item.category!) ?? 0) + 1);
    }
    expect(Math.max(...perCategory.values())).toBeLessThanOrEqual(2);

    // The demo's 3,000 items and the tour's.
    expect(answersOf('/analytics/summary')).toEqual([expect.objectContaining({ items: 3001 })]);
  });
});
