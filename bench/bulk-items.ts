import { parseArgs } from 'node:util';
import { startBenchDaemon } from './support/bench-daemon.js';
import { measured, mib, waitForDaemonIdle, type Measured } from './support/daemon-memory.js';
import { positiveInteger } from './support/options.js';
import { benchShop, loadInteractions, postItems, postJson, shopItems } from './support/shop-loader.js';

/**
 * Bulk catalog operations (docs/guide.md, "Deleting items") on a daemon holding a generated shop
 * (100,000 items and 200,000 interactions by default): `POST /catalog/items/bulk-update` with the filter
 * `true` and a `set` of availability and two attributes (one removed), then `POST
 * /catalog/items/bulk-delete` with `true`, each timed as one request, with the daemon's resident memory
 * before it and at its peak during it, read from /proc. The baseline, measured in the same run on the
 * same daemon, is the catalog's load through `POST /ingestion/items` in batches of 5,000: the bulk rates
 * are also given as ratios to it.
 */

function figures(run: Measured<unknown>, items: number) {
  const itemsPerS = Math.round(items / run.seconds);
  const growth = run.peak - run.before;
  return {
    seconds: Number(run.seconds.toFixed(3)),
    itemsPerS,
    rssBeforeMiB: mib(run.before),
    peakRssMiB: mib(run.peak),
    rssGrowthMiB: mib(growth),
  };
}

async function main(): Promise<void> {
  // Not strict: bench/run forwards the same arguments to every benchmark.
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: false,
    options: {
      items: { type: 'string', default: '100000' },
      interactions: { type: 'string', default: '200000' },
    },
  });
  const items = positiveInteger('--items', values.items);
  const interactions = positiveInteger('--interactions', values.interactions);
  const size = benchShop(items, interactions);
  console.log(
    `bulk-items: ${items.toLocaleString('en-US')} items, ${interactions.toLocaleString('en-US')} interactions...`,
  );
  const bench = await startBenchDaemon('bulk-items');
  try {
    const { daemon, headers } = bench;
    // Generated before the timed window, so that the baseline times the requests alone.
    const catalog = shopItems(size);
    await waitForDaemonIdle(daemon, 120_000);
    const ingest = await measured(daemon, () => postItems(daemon.url, headers, catalog));
    await loadInteractions(daemon.url, headers, size);
    await waitForDaemonIdle(daemon, 120_000);
    const update = await measured(daemon, () =>
      postJson(
        `${daemon.url}/catalog/items/bulk-update`,
        headers,
        { filter: 'true', set: { available: false, attributes: { onSale: true, stock: null } } },
        200,
      ),
    );
    if ((update.value as { updated: number }).updated !== items)
      throw new Error(`bulk-update answered ${JSON.stringify(update.value)}`);
    await waitForDaemonIdle(daemon, 120_000);
    const remove = await measured(daemon, () =>
      postJson(`${daemon.url}/catalog/items/bulk-delete`, headers, { filter: 'true' }, 200),
    );
    if ((remove.value as { deleted: number }).deleted !== items)
      throw new Error(`bulk-delete answered ${JSON.stringify(remove.value)}`);
    const baseline = figures(ingest, items);
    const updated = figures(update, items);
    const deleted = figures(remove, items);
    const ratio = (value: number) => Number((value / baseline.itemsPerS).toFixed(2));
    console.log(
      JSON.stringify({
        bench: 'bulk-items',
        items,
        interactions,
        ingest: baseline,
        bulkUpdate: updated,
        bulkDelete: deleted,
        bulkUpdateToIngestItemsPerS: ratio(updated.itemsPerS),
        bulkDeleteToIngestItemsPerS: ratio(deleted.itemsPerS),
      }),
    );
    const line = (name: string, result: ReturnType<typeof figures>) =>
      console.log(
        `${name}: ${items.toLocaleString('en-US')} items in ${result.seconds.toFixed(2)} s = ` +
          `${result.itemsPerS.toLocaleString('en-US')} items/s; ` +
          `daemon RSS ${result.rssBeforeMiB.toFixed(0)} → peak ${result.peakRssMiB.toFixed(0)} MiB, ` +
          `+${result.rssGrowthMiB.toFixed(0)} MiB`,
      );
    line('POST /ingestion/items, batches of 5,000 (baseline)', baseline);
    line('bulk-update', updated);
    line('bulk-delete', deleted);
    console.log(
      `ratios to the baseline's items/s: bulk-update ${ratio(updated.itemsPerS)}, bulk-delete ${ratio(deleted.itemsPerS)}`,
    );
  } finally {
    await bench.stop();
  }
}

await main();
