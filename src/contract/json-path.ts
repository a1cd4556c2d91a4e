import { JSONPath } from 'jsonpath-plus';

/**
 * A JSONPath compiled once per feed (CONTRACT.md, "Feeds"). `sku` means `$.sku`. A definite path (member
 * names and indexes only) names at most one value and is read by walking the object; any other path
 * (wildcards, recursive descent, unions, slices) is evaluated by jsonpath-plus and yields every match.
 * Script and filter expressions are refused: paths come from tenants, and code of theirs never runs here.
 */
export interface CompiledPath {
  readonly source: string;
  /** True when the path names at most one value. */
  readonly definite: boolean;
  /** A definite path's value (undefined when absent); an indefinite path's matches, as an array. */
  read(json: unknown): unknown;
}

/**
 * Segments jsonpath-plus gives a special meaning: anything but a plain member name or an index. A colon
 * makes a slice (`1:3`) only in a slice's form: `g:price` is a member name, as in a Merchant feed's items.
 */
const SPECIAL_SEGMENT = /^(?:\*|\.\.|\^|~|\$|@.*|\?\(.*|\(.*|-?\d*:-?\d*:?\d*)$|,/;

export class JsonPathError extends Error {}

function absolute(path: string): string {
  if (path.startsWith('$')) return path;
  return path.startsWith('[') ? `$${path}` : `$.${path}`;
}

/** Reads `segments` (member names and array indexes) from `json`, or undefined where one is missing. */
function walk(json: unknown, segments: readonly string[]): unknown {
  let value = json;
  for (const segment of segments) {
    if (value === null || typeof value !== 'object') return undefined;
    if (Array.isArray(value)) {
      if (!/^\d+$/.test(segment)) return undefined;
      value = value[Number(segment)];
    } else {
      if (!Object.hasOwn(value, segment)) return undefined;
      value = (value as Record<string, unknown>)[segment];
    }
  }
  return value;
}

export function compilePath(source: string): CompiledPath {
  const path = absolute(source.trim());
  let segments: string[];
  try {
    segments = [...JSONPath.toPathArray(path)];
  } catch (error) {
    throw new JsonPathError(`'${source}' is not a JSONPath: ${(error as Error).message}`);
  }
  if (segments[0] !== '$' || segments.slice(1).some((segment) => segment === '')) {
    throw new JsonPathError(`'${source}' is not a JSONPath`);
  }
  if (segments.some((segment) => segment.startsWith('?(') || segment.startsWith('('))) {
    throw new JsonPathError(`'${source}': filter and script expressions are not supported`);
  }
  const members = segments.slice(1);
  if (!members.some((segment) => SPECIAL_SEGMENT.test(segment))) {
    return { source, definite: true, read: (json) => walk(json, members) };
  }
  const evaluate = (json: unknown): unknown[] =>
    JSONPath({ path, json: json as object, wrap: true, eval: false }) as unknown[];
  try {
    evaluate({});
  } catch (error) {
    throw new JsonPathError(`'${source}' is not a JSONPath: ${(error as Error).message}`);
  }
  return {
    source,
    definite: false,
    read: (json) => (json === null || typeof json !== 'object' ? [] : (evaluate(json) ?? [])),
  };
}

/** The message of a path that does not compile, or undefined for a good one (for validation). */
export function pathProblem(source: string): string | undefined {
  try {
    compilePath(source);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}
