import { request } from 'undici';
import { DEFAULT_PAGE_SIZE, type FeedConfig } from '../contract/feeds.js';
import { compilePath, type CompiledPath } from '../contract/json-path.js';
import { refusal, type FeedNetwork } from './network.js';

/**
 * Why a feed's source could not be read. Its message says which page and why, and shows of the address
 * only its origin and path: the query string and the headers may carry the source's credentials.
 */
export class FeedFetchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeedFetchError';
  }
}

export interface FetchedPage {
  /** From 1. */
  number: number;
  /** The page's raw records (itemsPath's array). */
  records: unknown[];
}

export type FeedSource = Pick<
  FeedConfig,
  'sourceType' | 'url' | 'method' | 'headers' | 'body' | 'itemsPath' | 'pagination' | 'timeoutMs' | 'maxBytes'
>;

/** A source whose cursors never end is stopped here rather than read forever. */
export const MAX_PAGES = 1_000_000;

/** Drops an answer's body unread (the error its destruction emits has nowhere to go). */
function discard(body: NodeJS.ReadableStream & { destroy(): void }): void {
  body.on('error', () => undefined);
  body.destroy();
}

function where(page: number, url: URL): string {
  return `page ${page} (${url.origin}${url.pathname})`;
}

function reasonOf(error: unknown, timeout: AbortSignal, timeoutMs: number, stop?: AbortSignal): string {
  if (stop?.aborted) return 'the sync was stopped';
  const code = (error as { code?: string }).code;
  if (
    timeout.aborted ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `no complete answer within ${timeoutMs} ms`;
  }
  return (error as Error).message || String(error);
}

/**
 * One request of the feed's source, read to the end within `timeoutMs` and `maxBytes`, parsed as JSON.
 * Anything else (a connection error, a status other than 2xx, a timeout, too many bytes, malformed JSON)
 * is a FeedFetchError.
 */
export async function fetchJson(
  source: FeedSource,
  url: URL,
  page: number,
  network: FeedNetwork,
  stop?: AbortSignal,
): Promise<unknown> {
  const timeout = AbortSignal.timeout(source.timeoutMs);
  const signal = stop ? AbortSignal.any([stop, timeout]) : timeout;
  const fail = (reason: string) => new FeedFetchError(`${where(page, url)}: ${reason}`);
  const refused = refusal(network, url);
  if (refused) throw fail(refused);
  const sendsBody = source.sourceType === 'api' && source.body !== undefined;
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(url, {
      method: source.sourceType === 'api' ? source.method : 'GET',
      headers: {
        accept: 'application/json',
        ...(sendsBody ? { 'content-type': 'application/json' } : {}),
        ...source.headers,
      },
      body: sendsBody ? JSON.stringify(source.body) : undefined,
      headersTimeout: source.timeoutMs,
      bodyTimeout: source.timeoutMs,
      signal,
      ...(network.dispatcher && { dispatcher: network.dispatcher }),
    });
  } catch (error) {
    throw fail(reasonOf(error, timeout, source.timeoutMs, stop));
  }
  const { statusCode, body } = response;
  if (statusCode < 200 || statusCode > 299) {
    discard(body);
    throw fail(`the source answered HTTP ${statusCode}`);
  }
  const announced = Number(response.headers['content-length']);
  if (Number.isFinite(announced) && announced > source.maxBytes) {
    discard(body);
    throw fail(`the answer has ${announced} bytes, more than maxBytes (${source.maxBytes})`);
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > source.maxBytes) {
        discard(body);
        throw fail(`the answer is longer than maxBytes (${source.maxBytes} bytes)`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof FeedFetchError) throw error;
    throw fail(reasonOf(error, timeout, source.timeoutMs, stop));
  }
  try {
    return JSON.parse(Buffer.concat(chunks, bytes).toString('utf8'));
  } catch {
    throw fail('the answer is not valid JSON');
  }
}

/** The records `itemsPath` names in a response; a definite path must name an array. */
export function recordsOf(response: unknown, itemsPath: CompiledPath): unknown[] | string {
  const value = itemsPath.read(response);
  if (itemsPath.definite) {
    if (Array.isArray(value)) return value;
    return value === undefined
      ? `itemsPath ${itemsPath.source} matched nothing`
      : `itemsPath ${itemsPath.source} is not an array`;
  }
  // Matches that are arrays (`$..items`, `$.pages[*].items`) give their elements.
  return (value as unknown[]).flatMap((match) => (Array.isArray(match) ? match : [match]));
}

/** The next cursor in a response, or undefined when it is missing, null or empty (the last page). */
export function cursorOf(response: unknown, cursorPath: CompiledPath): string | undefined {
  let value = cursorPath.read(response);
  if (!cursorPath.definite) value = (value as unknown[])[0];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`the cursor at ${cursorPath.source} is not a string or a number`);
}

/**
 * The source's pages, in order (CONTRACT.md, "Precise rules", **Feeds.**): `none` is one request;
 * `cursor` sends the cursor read at `cursorPath` in `cursorParam` until it is missing, null or empty;
 * `limit_offset` sends `limitParam` and `offsetParam` until a page is shorter than `pageSize`. Only one
 * page is held at a time. `maxPages` stops early (a preview reads one).
 */
export async function* fetchPages(
  source: FeedSource,
  network: FeedNetwork,
  options: { stop?: AbortSignal; maxPages?: number } = {},
): AsyncGenerator<FetchedPage> {
  const itemsPath = compilePath(source.itemsPath);
  const { pagination } = source;
  const cursorPath =
    pagination.mode === 'cursor' && pagination.cursorPath !== undefined
      ? compilePath(pagination.cursorPath)
      : undefined;
  const pageSize = pagination.pageSize ?? DEFAULT_PAGE_SIZE;
  const maxPages = options.maxPages ?? MAX_PAGES;
  const seenCursors = new Set<string>();
  let cursor: string | undefined;
  let offset = 0;
  for (let number = 1; number <= maxPages; number++) {
    const url = new URL(source.url);
    if (pagination.mode === 'limit_offset') {
      url.searchParams.set(pagination.limitParam, String(pageSize));
      url.searchParams.set(pagination.offsetParam, String(offset));
    } else if (pagination.mode === 'cursor') {
      if (pagination.pageSize !== undefined)
        url.searchParams.set(pagination.limitParam, String(pagination.pageSize));
      if (cursor !== undefined) url.searchParams.set(pagination.cursorParam, cursor);
    }
    const response = await fetchJson(source, url, number, network, options.stop);
    const records = recordsOf(response, itemsPath);
    if (typeof records === 'string') throw new FeedFetchError(`${where(number, url)}: ${records}`);
    yield { number, records };
    if (pagination.mode === 'none') return;
    if (pagination.mode === 'limit_offset') {
      if (records.length < pageSize) return;
      offset += pageSize;
      continue;
    }
    try {
      cursor = cursorOf(response, cursorPath!);
    } catch (error) {
      throw new FeedFetchError(`${where(number, url)}: ${(error as Error).message}`);
    }
    if (cursor === undefined) return;
    if (seenCursors.has(cursor)) {
      throw new FeedFetchError(`${where(number, url)}: the source gave a cursor it gave before`);
    }
    seenCursors.add(cursor);
  }
  if (maxPages === MAX_PAGES) throw new FeedFetchError(`the source has more than ${MAX_PAGES} pages`);
}
