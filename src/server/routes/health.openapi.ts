import { VERSION } from '../../version.js';
import type { Operations } from '../openapi/operation.js';
import * as R from '../openapi/responses.js';

/**
 * What the OpenAPI document says of the routes of health.ts beyond their schemas (docs/guide.md,
 * "The HTTP API"); src/server/openapi/document.ts gathers the entries of every module into the document.
 */
export const openapi: Operations = {
  'GET /health': {
    id: 'health',
    tag: 'Operations',
    summary: 'Liveness',
    description: 'Answers 200 while the process serves: version, uptime and the embedder vector search uses.',
    body: R.HEALTH,
    answer: {
      status: 'ok',
      version: VERSION,
      uptimeS: 3600,
      embedder: { kind: 'hashing', model: 'hashing-v1' },
    },
  },
  'GET /health/ready': {
    id: 'ready',
    tag: 'Operations',
    summary: 'Readiness',
    description:
      'Answers 200 once the state and the built models are loaded, and 503 NOT_READY saying what is not, before that and while the daemon stops. `checks.disk` is `full` while writes are refused for a full disk (507 INSUFFICIENT_STORAGE); the daemon stays ready for reads meanwhile.',
    body: R.READY,
    errors: [503],
    answer: { status: 'ready', checks: { state: 'done', models: 'done', disk: 'ok' } },
  },
};
