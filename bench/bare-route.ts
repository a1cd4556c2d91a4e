import Fastify from 'fastify';
import { BODY_LIMIT } from '../src/server/app.js';
import { BARE_LIST } from './support/bare-answer.js';

/**
 * The baseline of bench/ingest and bench/soak: Fastify routes that parse the same JSON bodies as the
 * daemon and do nothing with them, at the ingestion routes (answering the counts the daemon answers) and
 * at the recommendation routes of bench/soak's traffic (answering a fixed list, BARE_LIST). Run as its
 * own process; prints the line the benchmarks wait for.
 */
const app = Fastify({ bodyLimit: BODY_LIMIT });
app.post('/ingestion/interactions', async (request) => ({
  accepted: (request.body as { interactions: unknown[] }).interactions.length,
}));
app.post('/ingestion/items', async (request) => ({
  upserted: (request.body as { items: unknown[] }).items.length,
}));
for (const path of ['/recommendations', '/recommendations/items-to-items'])
  app.post(path, async () => BARE_LIST);
for (const logicType of ['user-to-item', 'item-to-item', 'recently-viewed']) {
  app.get(`/recommendations/${logicType}/:seed`, async () => BARE_LIST);
}

const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`bare route listening on ${url}`);

const shutdown = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
