import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { z } from 'zod';
import { ApiError, type ErrorCode } from '../../contract/errors.js';
import { isDiskFull, isStoreInvalidated } from '../../store/disk-full.js';
import { WriteQueueFullError } from '../../store/write-queue.js';
import { SchemaValidationError } from '../validation.js';

const INGESTION_COLLECTIONS = new Set(['items', 'users', 'interactions', 'impressions']);

function joinPath(path: PropertyKey[]): string {
  return path.map(String).join('.');
}

/** Ingestion bodies name the bad record by index; other bodies get zod's issue path. */
function issueDetail(issue: z.core.$ZodIssue): Record<string, unknown> {
  const [collection, index, ...rest] = issue.path;
  if (typeof collection === 'string' && INGESTION_COLLECTIONS.has(collection) && typeof index === 'number') {
    return { index, path: joinPath(rest), message: issue.message };
  }
  return { path: joinPath(issue.path), message: issue.message, code: issue.code };
}

function isBatchTooLarge(issue: z.core.$ZodIssue): boolean {
  return (
    issue.code === 'too_big' &&
    issue.path.length === 1 &&
    typeof issue.path[0] === 'string' &&
    INGESTION_COLLECTIONS.has(issue.path[0])
  );
}

/** The nextQL error a zod issue carries (see contract/expressions.ts), if it is one. */
function nextqlDetail(issue: z.core.$ZodIssue): Record<string, unknown> | undefined {
  const params = (issue as { params?: { nextql?: Record<string, unknown> } }).params;
  return params?.nextql;
}

export function fromValidation(error: SchemaValidationError): ApiError {
  const oversized = error.issues.find(isBatchTooLarge);
  if (oversized) return new ApiError('BATCH_TOO_LARGE', oversized.message);
  const expressionIssues = error.issues.filter((issue) => nextqlDetail(issue));
  if (expressionIssues.length > 0) {
    const details = expressionIssues.map((issue) => ({ ...nextqlDetail(issue), path: joinPath(issue.path) }));
    const first = expressionIssues[0];
    return new ApiError(
      'INVALID_EXPRESSION',
      `invalid expression at ${joinPath(first.path)}: ${first.message}`,
      details,
    );
  }
  const code: ErrorCode = error.validationContext === 'body' ? 'INVALID_BODY' : 'INVALID_QUERY';
  const where = error.validationContext === 'body' ? 'body' : 'query';
  const first = error.issues[0];
  const at = first && first.path.length ? ` at ${joinPath(first.path)}` : '';
  const others = error.issues.length - 1;
  const more = others > 0 ? ` (${others} more problem${others > 1 ? 's' : ''} in details)` : '';
  return new ApiError(
    code,
    `invalid ${where}${at}: ${first?.message ?? 'invalid'}${more}`,
    error.issues.map(issueDetail),
  );
}

/** Maps Fastify's own errors (parsing, limits) onto the contract's codes; never shows internals. */
function fromFastify(error: FastifyError): ApiError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('PAYLOAD_TOO_LARGE', 'request body exceeds 16 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('INVALID_BODY', 'request body must be JSON (Content-Type: application/json)');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('INVALID_BODY', 'request body length does not match Content-Length');
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new ApiError('INVALID_BODY', `malformed JSON body: ${error.message}`);
  }
  return undefined;
}

/** Seconds a client refused for a full write queue waits before it sends the write again. */
export const OVERLOADED_RETRY_AFTER_S = 1;

export function toApiError(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof SchemaValidationError) return fromValidation(error);
  if (error instanceof WriteQueueFullError) {
    return new ApiError(
      'OVERLOADED',
      `too many writes waiting to be committed (${error.queued} records, limit ${error.limit}); nothing of this request was stored: send it again after Retry-After`,
      undefined,
      { 'retry-after': String(OVERLOADED_RETRY_AFTER_S) },
    );
  }
  const fastifyError = error as FastifyError;
  if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode < 500) {
    return (
      fromFastify(fastifyError) ??
      (fastifyError.statusCode === 404
        ? new ApiError('NOT_FOUND', 'not found')
        : new ApiError('INVALID_BODY', fastifyError.message))
    );
  }
  return undefined;
}

/**
 * A full disk under the data dir (docs/errors.md): 507 INSUFFICIENT_STORAGE. A write that fails on it
 * was rolled back (the store's transaction, the interactions log's append), so nothing of it is stored.
 * `diskFull`: the daemon knows the disk is full, so DuckDB's refusal after a checkpoint that could not
 * write (until the store is opened again, which the store does by itself; `storeDown` meanwhile) is the
 * same condition.
 */
export function diskFullAnswer(error: unknown, diskFull: boolean, storeDown = false): ApiError | undefined {
  if (!isDiskFull(error) && !(diskFull && (storeDown || isStoreInvalidated(error)))) return undefined;
  return new ApiError(
    'INSUFFICIENT_STORAGE',
    "the data dir's disk is full: nothing of this request was stored; send it again once space is freed",
    undefined,
    { 'retry-after': String(DISK_FULL_RETRY_AFTER_S) },
  );
}

/** Seconds a client refused for a full disk waits before it sends the write again. */
export const DISK_FULL_RETRY_AFTER_S = 30;

function send(reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.statusCode).type('application/json').send(error.toBody());
}

/** One error body for every failure (CONTRACT.md, "Errors"), and a 404 of the same shape. */
export const errorsPlugin = fp(async (app: FastifyInstance) => {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { runtime, metrics } = app as Partial<FastifyInstance>;
    const disk = runtime?.store.disk;
    const known =
      toApiError(error) ?? diskFullAnswer(error, disk?.isFull === true, runtime?.store.invalidated);
    if (known?.code === 'INSUFFICIENT_STORAGE') {
      disk?.failed(error);
      metrics?.diskFullRefusal();
      request.log.warn(
        { reason: (error as Error).message },
        "a request was refused: the data dir's disk is full",
      );
    }
    if (known) return send(reply, known);
    request.log.error({ err: error }, 'unhandled error');
    return send(reply, new ApiError('INTERNAL', 'internal error'));
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) =>
    send(reply, new ApiError('NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} not found`)),
  );
});

/**
 * Errors Fastify raises before a request reaches a route (a path that does not decode, a path parameter
 * over its length limit), in the same shape as every other error.
 */
export function frameworkErrorAnswer(
  error: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): void {
  const known =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ApiError('URL_TOO_LONG', 'a path parameter is over 2048 characters')
      : error.code === 'FST_ERR_BAD_URL'
        ? new ApiError('BAD_REQUEST', 'the request path is not valid percent-encoding')
        : new ApiError('BAD_REQUEST', 'the request could not be routed');
  send(reply, known);
}

/** What Node's HTTP parser reports (`clientError`), as the contract's error. */
export function clientErrorOf(error: NodeJS.ErrnoException): ApiError {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError('HEADERS_TOO_LARGE', 'the request line and headers are over the limit (16 KiB)');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('REQUEST_TIMEOUT', 'the request was not received whole in time');
    case 'HPE_INVALID_METHOD':
      return new ApiError('BAD_REQUEST', 'malformed request line: unknown method');
    case 'HPE_INVALID_URL':
      return new ApiError('BAD_REQUEST', 'malformed request line: invalid request target');
    case 'HPE_INVALID_VERSION':
      return new ApiError('BAD_REQUEST', 'malformed request line: invalid HTTP version');
    case 'HPE_INVALID_CHUNK_SIZE':
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
      return new ApiError('BAD_REQUEST', 'malformed body framing (Content-Length or chunked encoding)');
    default:
      return new ApiError('BAD_REQUEST', 'malformed HTTP request');
  }
}

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser rejected (malformed request line or
 * headers, headers too large, bad chunked encoding, a request not received in time) gets the contract's
 * error body, then the connection is closed, since the rest of its bytes cannot be trusted.
 */
export function answerClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || socket.destroyed) return;
  const known = clientErrorOf(error);
  this.log.debug({ code: error.code, reason: error.message }, 'malformed request');
  (this as Partial<FastifyInstance>).metrics?.malformedRequest(known.code);
  // An answer already under way on this connection (a pipelined request's) cannot be followed by ours.
  const answering = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (!socket.writable || answering) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(known.toBody());
  const answer =
    `HTTP/1.1 ${known.statusCode} ${known.toBody().error}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body;
  // Closed once the answer is out, or soon whatever the client does.
  socket.end(answer, () => socket.destroy());
  setTimeout(() => socket.destroy(), CLIENT_ERROR_LINGER_MS).unref();
}

/** How long a connection answered for a malformed request may take to read its answer. */
const CLIENT_ERROR_LINGER_MS = 5_000;
