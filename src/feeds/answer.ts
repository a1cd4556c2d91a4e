import { Readable, pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { request } from 'undici';
import type { FeedConfig } from '../contract/feeds.js';
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

/** A document (Merchant XML, CSV, TSV) that does not parse: the fetch fails with its message. */
export class MalformedDocumentError extends Error {}

export type FeedSource = Pick<
  FeedConfig,
  'sourceType' | 'url' | 'method' | 'headers' | 'body' | 'itemsPath' | 'pagination' | 'timeoutMs' | 'maxBytes'
>;

/** What each source type asks for (the source may answer any of it; the parser decides). */
const ACCEPT: Record<FeedSource['sourceType'], string> = {
  api: 'application/json',
  json_url: 'application/json',
  google_merchant:
    'application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1',
  csv: 'text/csv, text/plain;q=0.9, */*;q=0.1',
  tsv: 'text/tab-separated-values, text/plain;q=0.9, */*;q=0.1',
};

/** Drops an answer's body unread (the error its destruction emits has nowhere to go). */
function discard(body: NodeJS.ReadableStream & { destroy(): void }): void {
  body.on('error', () => undefined);
  body.destroy();
}

export function where(page: number, url: URL): string {
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
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return `the answer is not valid gzip (${(error as Error).message})`;
  }
  return (error as Error).message || String(error);
}

function gunzip(input: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  return pipeline(Readable.from(input), createGunzip(), () => undefined);
}

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * The bytes of a `.gz` file: decompressed when they start as gzip does. (A server may send such a file
 * with `Content-Encoding: gzip` and its bytes as they are: they were decompressed once already then.)
 */
async function* gzFile(input: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const iterator = input[Symbol.asyncIterator]();
  let head = Buffer.alloc(0);
  let ended = false;
  while (head.length < GZIP_MAGIC.length && !ended) {
    const step = await iterator.next();
    if (step.done) ended = true;
    else head = Buffer.concat([head, step.value]);
  }
  async function* whole(): AsyncGenerator<Buffer> {
    if (head.length > 0) yield head;
    if (!ended) yield* { [Symbol.asyncIterator]: () => iterator };
  }
  const gzipped = GZIP_MAGIC.every((byte, i) => head[i] === byte);
  yield* gzipped ? gunzip(whole()) : whole();
}

/** What an answer's bytes go through before they are read. */
export interface AnswerEncoding {
  /** The gzip layers of its Content-Encoding, each undone once. */
  gzipLayers: number;
  /** Whether the URL names a `.gz` file (decompressed after those, when its bytes start as gzip does). */
  gzFile: boolean;
}

/**
 * The most bytes an answer may have as sent for its decoded bytes to stay within `maxBytes`: gzip adds
 * its header and trailer, and 5 bytes per stored block of at most 64 KiB, to bytes it cannot compress.
 */
function sentLimit(maxBytes: number, encoding: AnswerEncoding): number {
  let limit = maxBytes;
  const layers = encoding.gzipLayers + (encoding.gzFile ? 1 : 0);
  for (let i = 0; i < layers; i++) limit += Math.ceil(limit / 65_535) * 5 + 64;
  return limit;
}

/** Counts the bytes read against `limit`, failing beyond it. */
async function* limited(
  bytes: AsyncIterable<Buffer>,
  limit: number,
  tooLong: () => Error,
): AsyncGenerator<Buffer> {
  let read = 0;
  for await (const chunk of bytes) {
    read += chunk.length;
    if (read > limit) throw tooLong();
    yield chunk;
  }
}

function decodedBytes(
  bytes: AsyncIterable<Buffer>,
  encoding: AnswerEncoding,
  maxBytes: number,
  fail: (reason: string) => FeedFetchError,
): AsyncIterable<Buffer> {
  for (let i = 0; i < encoding.gzipLayers; i++) bytes = gunzip(bytes);
  if (encoding.gzFile) bytes = gzFile(bytes);
  return limited(bytes, maxBytes, () => fail(`the answer is longer than maxBytes (${maxBytes} bytes)`));
}

/**
 * The decoded bytes of an answer read as sent (see readAnswer's `sent`), counted against `maxBytes`:
 * broken gzip or too many bytes is the FeedFetchError readAnswer would have thrown for them.
 */
export async function* decodeAnswer(
  bytes: AsyncIterable<Buffer>,
  encoding: AnswerEncoding,
  maxBytes: number,
  page: number,
  url: URL,
): AsyncGenerator<Buffer> {
  const fail = (reason: string) => new FeedFetchError(`${where(page, url)}: ${reason}`);
  try {
    yield* decodedBytes(bytes, encoding, maxBytes, fail);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (typeof code !== 'string' || !code.startsWith('Z_')) throw error;
    throw fail(`the answer is not valid gzip (${(error as Error).message})`);
  }
}

/**
 * One request of the feed's source, its body read as it arrives (CONTRACT.md, "Integrator features",
 * **Feed formats.**): decompressed when the source sent it with `Content-Encoding: gzip` or the URL names a
 * `.gz` file, within `timeoutMs` from the request to the last byte and `maxBytes` (counted decompressed).
 * Anything else (a connection error, a status other than 2xx, a timeout, too many bytes, broken gzip, an
 * encoding other than gzip) is a FeedFetchError. A consumer that stops early ends the request.
 *
 * Given `sent`, the bytes are read as sent instead, and `sent` is told how they are encoded before the
 * first of them: decodeAnswer then decodes them, and counts them against `maxBytes`, when they are read
 * (a document is downloaded compressed, at a tenth of its bytes). Only as many are read as could decode
 * within `maxBytes`.
 */
export async function* readAnswer(
  source: FeedSource,
  url: URL,
  page: number,
  network: FeedNetwork,
  stop?: AbortSignal,
  sent?: (encoding: AnswerEncoding) => void,
): AsyncGenerator<Buffer> {
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
        accept: ACCEPT[source.sourceType],
        'accept-encoding': 'gzip',
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
  try {
    if (statusCode < 200 || statusCode > 299) throw fail(`the source answered HTTP ${statusCode}`);
    const announced = Number(response.headers['content-length']);
    if (Number.isFinite(announced) && announced > source.maxBytes) {
      throw fail(`the answer has ${announced} bytes, more than maxBytes (${source.maxBytes})`);
    }
    const encodings = String(response.headers['content-encoding'] ?? '')
      .split(',')
      .map((encoding) => encoding.trim().toLowerCase())
      .filter((encoding) => encoding !== '' && encoding !== 'identity');
    const unknown = encodings.find((encoding) => encoding !== 'gzip' && encoding !== 'x-gzip');
    if (unknown !== undefined) throw fail(`the answer's Content-Encoding ${unknown} is not supported`);
    const encoding: AnswerEncoding = {
      gzipLayers: encodings.length,
      gzFile: url.pathname.toLowerCase().endsWith('.gz'),
    };
    const bytes = body as AsyncIterable<Buffer>;
    if (sent) {
      sent(encoding);
      yield* limited(bytes, sentLimit(source.maxBytes, encoding), () =>
        fail(`the answer is longer than maxBytes (${source.maxBytes} bytes)`),
      );
    } else yield* decodedBytes(bytes, encoding, source.maxBytes, fail);
  } catch (error) {
    if (error instanceof FeedFetchError) throw error;
    throw fail(reasonOf(error, timeout, source.timeoutMs, stop));
  } finally {
    // Read whole, this does nothing; otherwise (a failure, a consumer that stopped) it ends the request.
    discard(body);
  }
}
