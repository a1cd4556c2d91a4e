import Fastify from 'fastify';
import { BARE_LIST } from './bare-answer.js';

/**
 * The serving benchmark's baselines: plain Fastify routes at the daemon's item-to-item path (GET) and at
 * its unified endpoint (POST, the JSON body parsed as Fastify parses every body) answering a fixed list
 * (BARE_LIST), and `/health/ready` for haproxy's health check (bench/cluster). Run as its own process;
 * prints the line bench/serve waits for.
 */
const app = Fastify();
app.get('/recommendations/item-to-item/:itemId', async () => BARE_LIST);
app.post('/recommendations', async () => BARE_LIST);
app.get('/health/ready', async () => ({ status: 'ready' }));

const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`bare route listening on ${url}`);

const shutdown = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
