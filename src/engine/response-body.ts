import type { ItemCatalog } from '../state/item-catalog.js';
import type { RankedList } from './context.js';
import { projectItem, type ResolvedProjection } from './projection.js';

/**
 * A score as JSON: the same digits as `${value}`, null for Infinity and NaN. Written by JSON.stringify
 * because V8 remembers the text of every number converted by String() or a template literal in a table
 * of the heap: each score, distinct and seen once, displaced an older one there after living long enough
 * to be moved to the old generation, so that at 1,000 answers a second ten scores each filled it with
 * half a megabyte of dead text a second and a major collection came every 15 to 20 s (docs/memory.md).
 */
function jsonNumber(value: number): string {
  return JSON.stringify(value);
}

/**
 * The JSON response of a ranked list, written as text rather than serialized from objects: each item's
 * projected document is rendered once and remembered by the catalog, so a response costs a few string
 * joins. Ends before the recommId (see `withRecommId`), which is the only part a cached body lacks. The
 * parts are joined once, into one flat string: pieces joined one by one would stay a chain of them, which
 * the answer cache would keep at several times the size it counts, the catalog's rendered documents with
 * it.
 */
export function renderList(
  catalog: ItemCatalog,
  list: RankedList,
  projection: ResolvedProjection,
  /** Where the dense ids of the items rendered go, in order (an item deleted meanwhile is not). */
  rendered?: number[],
): string {
  const render = (document: Readonly<Record<string, unknown>>) =>
    JSON.stringify(projectItem(document, projection.mode));
  const parts = ['{"items":['];
  let count = 0;
  for (let i = 0; i < list.ids.length; i++) {
    const item = catalog.renderedDocument(list.ids[i], projection.key, render);
    if (item === undefined) continue;
    rendered?.push(list.ids[i]);
    if (count++ > 0) parts.push(',');
    // The score goes last, into the rendered object's closing brace.
    if (list.scores) parts.push(item.slice(0, -1), ',"score":', jsonNumber(list.scores[i]), '}');
    else parts.push(item);
  }
  parts.push(`],"count":${count},"algorithm":${JSON.stringify(list.algorithm)}`);
  if (list.scenario !== undefined) parts.push(`,"scenario":${JSON.stringify(list.scenario)}`);
  if (list.experiment) parts.push(`,"experiment":${JSON.stringify(list.experiment)}`);
  if (list.filterRelaxation) parts.push(`,"filterRelaxation":${JSON.stringify(list.filterRelaxation)}`);
  return parts.join('');
}

/**
 * Completes a body of `renderList` with a recommId of its own: every answer has one, cached or not. Text
 * rather than bytes: the socket encodes the answer as it writes it, in one piece with the headers, where
 * a copy into a buffer of its own cost an allocation per answer and went out as a second piece.
 */
export function withRecommId(body: string, recommId: string): string {
  return `${body},"recommId":"${recommId}"}`;
}
