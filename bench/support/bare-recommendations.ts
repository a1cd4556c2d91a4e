import Fastify from 'fastify';

/**
 * The serving benchmark's baselines: plain Fastify routes at the daemon's item-to-item path (GET) and at
 * its unified endpoint (POST, the JSON body parsed as Fastify parses every body) answering a fixed list
 * shaped like the daemon's (10 items projected to name and price), serialized per request. Run as its own
 * process; prints the line bench/serve waits for.
 */
const RESPONSE = {
  items: Array.from({ length: 10 }, (_, i) => ({
    itemId: `sku-${String(1234 + 97 * i).padStart(6, '0')}`,
    score: 0.87312345 / (i + 1),
    attributes: { name: 'Linea Oxford Shirt', price: 27.99 + i },
  })),
  count: 10,
  algorithm: 'co-occurrence',
  scenario: 'bench-item-to-item',
  recommId: '5f0c6a36-8d0e-4c9b-9a53-0b6f1d2e7c41',
};

const app = Fastify();
app.get('/recommendations/item-to-item/:itemId', async () => RESPONSE);
app.post('/recommendations', async () => RESPONSE);

const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`bare route listening on ${url}`);

const shutdown = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
