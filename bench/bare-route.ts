import Fastify from 'fastify';
import { BODY_LIMIT } from '../src/server/app.js';

/**
 * The ingestion benchmark's baseline: a Fastify route that parses the same JSON bodies as the daemon and
 * does nothing with them. Run as its own process; prints the line bench/ingest waits for.
 */
const app = Fastify({ bodyLimit: BODY_LIMIT });
app.post('/ingestion/interactions', async (request) => ({
  accepted: (request.body as { interactions: unknown[] }).interactions.length,
}));

const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`bare route listening on ${url}`);

const shutdown = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
