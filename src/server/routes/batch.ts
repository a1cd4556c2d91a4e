import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BATCH_BODY, type BatchBody, type BatchRequest } from '../../contract/batch.js';
import { ApiError } from '../../contract/errors.js';
import { readAnswerSummary } from '../../engine/answer-summary.js';
import { asBatchRequest, BATCH_HEADER, batchOf, type BatchContext } from '../batch-requests.js';
import { SCOPE } from '../plugins/auth.js';

/**
 * What one request of a batch answered: its status, and its body as JSON text, as the route alone would
 * have sent it (`null` for none, a JSON string for a body of another type).
 */
interface BatchResult {
  status: number;
  json: string;
}

const BATCH_PATH = '/batch';
/**
 * The results of a batch are held until its last request is done: once their bodies' text passes this,
 * the requests left are not run (each gets a 413 result), so that a batch of large lists cannot hold
 * hundreds of megabytes (docs/guide.md, "Batches").
 */
const MAX_RESULTS_CHARACTERS = 64 * 1024 * 1024;

/** The request target of a batch's request: its path, then its query (arrays as comma-separated lists). */
function targetOf({ path, query }: BatchRequest): string {
  if (query === undefined || Object.keys(query).length === 0) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    params.append(name, Array.isArray(value) ? value.join(',') : String(value));
  return `${path}${path.includes('?') ? '&' : '?'}${params.toString()}`;
}

/** Whether a path names this route (the router ignores a trailing slash and a query string). */
function isBatchPath(path: string): boolean {
  const bare = path.split('?')[0].replace(/\/+$/, '');
  let decoded = bare;
  try {
    decoded = decodeURIComponent(bare);
  } catch {
    // A path that does not decode is not this route's: the router answers it.
  }
  return decoded === BATCH_PATH;
}

function errorResult(error: ApiError): BatchResult {
  return { status: error.statusCode, json: JSON.stringify(error.toBody()) };
}

/**
 * A response's body as JSON text: a JSON body as it was sent (the routes send valid JSON: it is not
 * parsed and written again), no body as null, any other text as a JSON string.
 */
function jsonOf(payload: string, contentType: string | undefined): string {
  if (payload === '') return 'null';
  if (contentType?.startsWith('application/json')) return payload;
  return JSON.stringify(payload);
}

/** The items of a recommendation answer, which a `distinctRecomms` batch's later lists skip. */
function recommendedItems(request: BatchRequest, result: BatchResult): string[] {
  if (result.status !== 200 || !request.path.startsWith('/recommendations')) return [];
  // A whole answer: it is read as rendered, before the brace that closes it after its recommId.
  return readAnswerSummary(result.json.slice(0, -1))?.itemIds ?? [];
}

/**
 * `POST /batch` (docs/guide.md, "Batches"): up to 1,000 requests run one after the other, each as if sent
 * alone with the batch's X-Tenant-Id and credential, through the app itself (`inject`): its own scope
 * check, rate limit, validation and answer. Every tenant credential may send a batch.
 */
export async function batchRoutes(app: FastifyInstance): Promise<void> {
  const runOne = (
    outer: FastifyRequest,
    context: BatchContext,
    request: BatchRequest,
  ): Promise<BatchResult> => {
    if (isBatchPath(request.path))
      return Promise.resolve(
        errorResult(new ApiError('INVALID_BODY', 'a batch may not contain a batch (/batch)')),
      );
    return asBatchRequest(context, async (id) => {
      const headers: Record<string, string> = {
        'x-tenant-id': outer.caller.tenantId,
        [BATCH_HEADER]: id,
      };
      const sendsBody = request.body !== undefined && request.method !== 'GET';
      if (sendsBody) headers['content-type'] = 'application/json';
      const response = await app.inject({
        method: request.method,
        url: targetOf(request),
        headers,
        ...(sendsBody ? { payload: JSON.stringify(request.body) } : {}),
      });
      const contentType = response.headers['content-type'];
      return {
        status: response.statusCode,
        json: jsonOf(response.payload, typeof contentType === 'string' ? contentType : undefined),
      };
    });
  };

  app.post(
    BATCH_PATH,
    { config: { kinds: SCOPE.browser }, schema: { body: BATCH_BODY } },
    async (request, reply: FastifyReply) => {
      // A batch sent inside a batch (the check of its path missed it): its own result is the error.
      if (batchOf(request)) throw new ApiError('INVALID_BODY', 'a batch may not contain a batch (/batch)');
      const { requests, distinctRecomms } = request.body as BatchBody;
      const context: BatchContext = {
        caller: request.caller,
        ...(distinctRecomms ? { shown: new Set<string>() } : {}),
      };
      const parts: string[] = [];
      let characters = 0;
      for (const inner of requests) {
        let result: BatchResult;
        if (characters > MAX_RESULTS_CHARACTERS) {
          result = errorResult(
            new ApiError(
              'PAYLOAD_TOO_LARGE',
              `not run: the results of the batch's requests before it passed ${MAX_RESULTS_CHARACTERS / 1024 / 1024} Mi characters`,
            ),
          );
        } else {
          result = await runOne(request, context, inner);
          characters += result.json.length;
          if (context.shown) for (const itemId of recommendedItems(inner, result)) context.shown.add(itemId);
        }
        parts.push(`{"status":${result.status},"body":${result.json}}`);
      }
      // The results as text: the inner answers' JSON is joined, not parsed and written again.
      return reply.type('application/json; charset=utf-8').send(`{"results":[${parts.join(',')}]}`);
    },
  );
}
