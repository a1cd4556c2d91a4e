import { LRUCache } from 'lru-cache';
import { ApiError } from '../contract/errors.js';
import type { Projection } from './request.js';

const UNSAFE_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype', 'toString', 'valueOf']);
export const MAX_GET_PATHS = 20;
export const MAX_REQUEST_TARGET = 2048;

export type ProjectionMode = { mode: 'full' } | { mode: 'lean' } | { mode: 'selective'; paths: string[][] };

/**
 * The projection of a request (spec "Projection rules"): lean with returnProperties=false, selective
 * with includedProperties, full otherwise. Unsafe path segments are rejected (400 UNSAFE_PATH).
 */
export function projectionMode(projection: Projection): ProjectionMode {
  if (projection.returnProperties === false) return { mode: 'lean' };
  if (projection.includedProperties === undefined) return { mode: 'full' };
  const paths = projection.includedProperties.map((path) => path.split('.'));
  for (const path of paths) {
    const unsafe = path.find((segment) => UNSAFE_SEGMENTS.has(segment));
    if (unsafe !== undefined)
      throw new ApiError('UNSAFE_PATH', `includedProperties: unsafe path segment '${unsafe}'`);
    if (path.some((segment) => segment === '')) {
      throw new ApiError('INVALID_QUERY', `includedProperties: '${path.join('.')}' has an empty segment`);
    }
  }
  return { mode: 'selective', paths };
}

/**
 * A request's projection mode and its key: one text per distinct projection, under which rendered items
 * and cached bodies are remembered.
 */
export interface ResolvedProjection {
  mode: ProjectionMode;
  key: string;
}

/** Projections by their key: the same few arrive with every request, and so the same key objects. */
const resolved = new LRUCache<string, ResolvedProjection>({ max: 1000 });

export function resolveProjection(projection: Projection): ResolvedProjection {
  const { returnProperties, includedProperties } = projection;
  const key = returnProperties === false ? 'lean' : JSON.stringify(includedProperties ?? 'full');
  let entry = resolved.get(key);
  if (!entry) {
    // Errors are not remembered: every request with an unsafe path gets its 400.
    resolved.set(key, (entry = { mode: projectionMode(projection), key }));
  }
  return entry;
}

/**
 * Signed browser GETs carry at most 2048 characters of request target (path and query). Checked before the
 * query is parsed, so a long URL is URL_TOO_LONG whatever its parameters say.
 */
export function checkRequestTarget(requestTarget: string): void {
  if (requestTarget.length > MAX_REQUEST_TARGET) {
    throw new ApiError(
      'URL_TOO_LONG',
      `the request target is ${requestTarget.length} characters; at most ${MAX_REQUEST_TARGET}`,
    );
  }
}

/** Signed browser GETs list at most 20 included paths. */
export function checkGetPaths(projection: Projection): void {
  if ((projection.includedProperties?.length ?? 0) > MAX_GET_PATHS) {
    throw new ApiError('TOO_MANY_PATHS', `includedProperties lists more than ${MAX_GET_PATHS} paths`);
  }
}

/** Copies the value at `path` of `source` into `target`, creating the objects on the way. */
function copyPath(
  source: Readonly<Record<string, unknown>>,
  target: Record<string, unknown>,
  path: string[],
): void {
  let from: unknown = source;
  for (const segment of path) {
    if (from === null || typeof from !== 'object' || Array.isArray(from) || !Object.hasOwn(from, segment))
      return;
    from = (from as Record<string, unknown>)[segment];
  }
  let to = target;
  for (const segment of path.slice(0, -1)) {
    const next = to[segment];
    if (next === null || typeof next !== 'object') to[segment] = {};
    to = to[segment] as Record<string, unknown>;
  }
  to[path[path.length - 1]] = from;
}

/** One response item, without its score, from the item's raw document (as `GET /catalog/items/:id` shows it). */
export function projectItem(
  document: Readonly<Record<string, unknown>>,
  mode: ProjectionMode,
): Record<string, unknown> {
  // Its first key written out: a literal that begins with a spread fills the old generation (docs/memory.md).
  if (mode.mode === 'full') return { itemId: document.externalId, ...document };
  const head: Record<string, unknown> = { itemId: document.externalId };
  if (mode.mode === 'lean') return head;
  for (const path of mode.paths) copyPath(document, head, path);
  return head;
}
