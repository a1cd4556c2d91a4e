import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { CredentialKind } from '../tenants/credentials.js';

/**
 * The requests of a batch (`POST /batch`, docs/guide.md, "Batches") reach their routes through
 * `app.inject`, each with this header naming its batch by a random id that lives only while the request
 * runs: the auth plugin then admits it as the batch's caller was admitted (a signed batch's requests are
 * covered by the batch's signature), and checks it against that caller's scope. A client sending the
 * header gains nothing: an id not in flight names no batch.
 */
export const BATCH_HEADER = 'x-nextrec-batch';

export interface BatchContext {
  /** Who sent the batch, as the auth plugin admitted it (its `request.caller`). */
  readonly caller: { readonly tenantId: string; readonly kind: CredentialKind | 'jwt' };
  /** With `distinctRecomms`: the items of the batch's recommendation answers so far. */
  readonly shown?: Set<string>;
}

const inFlight = new Map<string, BatchContext>();

/** Runs `send` with an id that names `context` while the promise it returns is pending. */
export async function asBatchRequest<T>(context: BatchContext, send: (id: string) => Promise<T>): Promise<T> {
  const id = randomUUID();
  inFlight.set(id, context);
  try {
    return await send(id);
  } finally {
    inFlight.delete(id);
  }
}

/** The batch a request belongs to; undefined for a request sent on its own. */
export function batchOf(request: FastifyRequest): BatchContext | undefined {
  const id = request.headers[BATCH_HEADER];
  return typeof id === 'string' ? inFlight.get(id) : undefined;
}

/**
 * The items a recommendation request of a `distinctRecomms` batch must not list: those of the batch's
 * recommendation answers before it; undefined when there are none.
 */
export function batchExclusions(request: FastifyRequest): string[] | undefined {
  const shown = batchOf(request)?.shown;
  return shown === undefined || shown.size === 0 ? undefined : [...shown];
}
