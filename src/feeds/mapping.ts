import {
  SEMANTIC_ATTRIBUTES,
  type FeedConfig,
  type MappedItem,
  type MappingDataType,
  type RecordError,
} from '../contract/feeds.js';
import { LONE_SURROGATE } from '../contract/common.js';
import { compilePath, type CompiledPath } from '../contract/json-path.js';

/** What mapping one source record gives: an item, or an error (with the id, when it could be read). */
export type MappingOutcome =
  { ok: true; item: MappedItem } | { ok: false; externalId: string | undefined; error: RecordError };

/** Maps a record of the source (its index counted over the whole source) to an item. */
export type RecordMapper = (record: unknown, index: number) => MappingOutcome;

const MAX_ID_LENGTH = 512;
const MAX_CATEGORY_LENGTH = 512;

const EXPECTED: Record<MappingDataType, string> = {
  string: 'a string',
  enum: 'a string',
  double: 'a number',
  int: 'an integer',
  image: 'an http(s) URL',
};

class MappingError extends Error {}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const number = Number(value.trim());
    return Number.isFinite(number) ? number : undefined;
  }
  return undefined;
}

/** A number followed by a currency code, as Merchant feeds write prices (`12.99 EUR`). */
const PRICE = /^(\S+)\s+[A-Za-z]{3}$/;

/** A `double`: a number, a string of one, or a string of one followed by a currency code (dropped). */
function toDouble(value: unknown): number | undefined {
  const number = toNumber(value);
  if (number !== undefined || typeof value !== 'string') return number;
  const price = PRICE.exec(value.trim());
  return price ? toNumber(price[1]) : undefined;
}

const NOT_UNICODE = 'holds a lone surrogate (a \\ud800-\\udfff escape without its pair): not valid Unicode';

/** One value converted to a rule's data type; throws a MappingError naming what was found. */
function convert(value: unknown, dataType: MappingDataType): unknown {
  if (typeof value === 'string' && LONE_SURROGATE.test(value))
    throw new MappingError(`the value ${NOT_UNICODE}`);
  switch (dataType) {
    case 'string':
    case 'enum':
      if (typeof value === 'string') return dataType === 'enum' ? value.trim() : value;
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      break;
    case 'double': {
      const number = toDouble(value);
      if (number !== undefined) return number;
      break;
    }
    case 'int': {
      const number = toNumber(value);
      if (number !== undefined && Number.isSafeInteger(number)) return number;
      break;
    }
    case 'image':
      if (typeof value === 'string' && isImageUrl(value.trim())) return value.trim();
      break;
  }
  throw new MappingError(`expected ${EXPECTED[dataType]}, found ${describe(value)}`);
}

function isImageUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** A rule's value: one value, or a list for enum (a list of tags) and for indefinite paths. */
function ruleValue(raw: unknown, path: CompiledPath, dataType: MappingDataType): unknown {
  if (!path.definite) {
    const values = (raw as unknown[]).filter((value) => value !== null && value !== undefined);
    return values.length === 0 ? null : values.map((value) => convert(value, dataType));
  }
  if (raw === undefined || raw === null) return null;
  if (Array.isArray(raw) && dataType === 'enum') {
    return raw
      .filter((value) => value !== null && value !== undefined)
      .map((value) => convert(value, dataType));
  }
  return convert(raw, dataType);
}

function readId(record: unknown, path: CompiledPath): string {
  let value = path.read(record);
  if (!path.definite) {
    const values = value as unknown[];
    if (values.length > 1) throw new MappingError(`itemIdPath matched ${values.length} values`);
    value = values[0];
  }
  if (typeof value === 'number' && Number.isFinite(value)) value = String(value);
  if (typeof value !== 'string') {
    throw new MappingError(
      value === undefined ? 'no id at itemIdPath' : `the id at itemIdPath is ${describe(value)}`,
    );
  }
  if (value.length === 0) throw new MappingError('the id at itemIdPath is empty');
  if (LONE_SURROGATE.test(value)) throw new MappingError(`the id at itemIdPath ${NOT_UNICODE}`);
  if (value.length > MAX_ID_LENGTH) throw new MappingError(`the id is longer than ${MAX_ID_LENGTH}`);
  return value;
}

interface CompiledRule {
  property: string;
  path: CompiledPath;
  dataType: MappingDataType;
  /** The attribute set, or undefined for the category. */
  attribute: string | undefined;
}

/**
 * Compiles a feed's itemIdPath and mapping rules (CONTRACT.md, "Precise rules", **Feeds.**): `category`
 * sets the top-level category; `name`, `basePrice` and `coverImage` set the attributes `name`, `price`
 * and `image`; `attributes` and any other target set `attributes.<property>`. A value the record does not
 * have is null (a sync removes that attribute). A value of the wrong type fails the whole record: it is
 * reported as `{ index, message }` and not stored.
 */
export function compileMapping(feed: Pick<FeedConfig, 'itemIdPath' | 'mappingRules'>): RecordMapper {
  const idPath = compilePath(feed.itemIdPath);
  const rules: CompiledRule[] = feed.mappingRules.map((rule) => ({
    property: rule.property,
    path: compilePath(rule.path),
    dataType: rule.dataType,
    attribute: rule.target === 'category' ? undefined : (SEMANTIC_ATTRIBUTES[rule.target] ?? rule.property),
  }));
  return (record, index) => {
    let externalId: string | undefined;
    let rule: CompiledRule | undefined;
    try {
      if (record === null || typeof record !== 'object' || Array.isArray(record)) {
        throw new MappingError(`the record is ${describe(record)}, not an object`);
      }
      externalId = readId(record, idPath);
      const item: MappedItem = { externalId, attributes: {} };
      for (rule of rules) {
        const value = ruleValue(rule.path.read(record), rule.path, rule.dataType);
        if (rule.attribute !== undefined) {
          item.attributes[rule.attribute] = value;
          continue;
        }
        if (Array.isArray(value)) throw new MappingError('a category is one value, found several');
        const category = value === null ? null : String(value);
        if (category !== null && category.length > MAX_CATEGORY_LENGTH) {
          throw new MappingError(`a category is at most ${MAX_CATEGORY_LENGTH} characters`);
        }
        item.category = category;
      }
      return { ok: true, item };
    } catch (error) {
      if (!(error instanceof MappingError)) throw error;
      const where = rule ? `${rule.property} (${rule.path.source}): ` : '';
      return { ok: false, externalId, error: { index, message: `${where}${error.message}` } };
    }
  };
}

/** The item as a preview shows it: what a new item would hold (absent values left out). */
export function previewItem(item: MappedItem): MappedItem {
  const attributes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(item.attributes)) if (value !== null) attributes[key] = value;
  return item.category === undefined
    ? { externalId: item.externalId, attributes }
    : { externalId: item.externalId, category: item.category, attributes };
}
