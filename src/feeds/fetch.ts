import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { DEFAULT_PAGE_SIZE, DOCUMENT_SOURCE_TYPES } from '../contract/feeds.js';
import {
  FeedFetchError,
  MalformedDocumentError,
  decodeAnswer,
  readAnswer,
  where,
  type AnswerEncoding,
  type FeedSource,
} from './answer.js';
import { csvRecords } from './csv-records.js';
import { compilePath, type CompiledPath } from '../contract/json-path.js';
import { merchantRecords } from './merchant-records.js';
import type { FeedNetwork } from './network.js';

export { FeedFetchError, type FeedSource } from './answer.js';

export interface FetchedPage {
  /** From 1. */
  number: number;
  /** The page's raw records (itemsPath's array), or the next of a document's records (its page is 1). */
  records: unknown[];
}

/** A source whose cursors never end is stopped here rather than read forever. */
export const MAX_PAGES = 1_000_000;

/**
 * One request of the feed's source, read to the end (see readAnswer), parsed as JSON; malformed JSON is a
 * FeedFetchError.
 */
export async function fetchJson(
  source: FeedSource,
  url: URL,
  page: number,
  network: FeedNetwork,
  stop?: AbortSignal,
): Promise<unknown> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of readAnswer(source, url, page, network, stop)) {
    chunks.push(chunk);
    bytes += chunk.length;
  }
  try {
    return JSON.parse(Buffer.concat(chunks, bytes).toString('utf8'));
  } catch {
    throw new FeedFetchError(`${where(page, url)}: the answer is not valid JSON`);
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
  if (DOCUMENT_SOURCE_TYPES.has(source.sourceType)) {
    yield* fetchDocument(source, network, options.stop);
    return;
  }
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

/**
 * A Merchant, CSV or TSV source (CONTRACT.md, "Integrator features", **Feed formats.**): one request,
 * whatever `pagination` says. Its body is written to a temporary file as fast as the source sends it (a
 * source may drop a reader slower than its own timeouts, and mapping and staging are slower than the
 * network), as sent: a gzip-compressed document is decompressed only as its records are parsed from that
 * file, at the parser's pace, rather than as it downloads, which held tens of megabytes of decompressed
 * chunks at once (docs/benchmarks.md, `bench/feeds`). Its records are given in batches, all of page 1, so
 * that a sync holds a batch rather than the document. Malformed XML or CSV is a FeedFetchError. The file goes
 * when the records have been read, or the reader stopped.
 */
async function* fetchDocument(
  source: FeedSource,
  network: FeedNetwork,
  stop?: AbortSignal,
): AsyncGenerator<FetchedPage> {
  const url = new URL(source.url);
  const dir = await mkdtemp(path.join(tmpdir(), 'nextrec-feed-'));
  try {
    const file = path.join(dir, 'document');
    let encoding: AnswerEncoding | undefined;
    const sent = readAnswer(source, url, 1, network, stop, (told) => (encoding = told));
    await pipeline(sent, createWriteStream(file));
    const bytes = decodeAnswer(createReadStream(file), encoding!, source.maxBytes, 1, url);
    const batches =
      source.sourceType === 'google_merchant'
        ? merchantRecords(bytes)
        : csvRecords(bytes, source.sourceType === 'tsv' ? '\t' : ',');
    try {
      for await (const records of batches) {
        if (stop?.aborted) throw new FeedFetchError(`${where(1, url)}: the sync was stopped`);
        yield { number: 1, records };
      }
    } catch (error) {
      if (!(error instanceof MalformedDocumentError)) throw error;
      throw new FeedFetchError(`${where(1, url)}: ${error.message}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
