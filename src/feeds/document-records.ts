/** A record of a Merchant, CSV or TSV document: values by element or column name. */
export type SourceRecord = Record<string, unknown>;

/**
 * A document's records are given to the sync in batches of this many: it maps and stages one batch while
 * the next is parsed, and never holds the whole document.
 */
export const RECORDS_PER_BATCH = 1000;

/**
 * Sets `name` on a record, or makes the value there an array of every value of the name (a repeated
 * element, a repeated column). Values read from a document are strings and objects, never arrays, so an
 * array there is always one of these. Names are the document's: `__proto__` is an own property, not the
 * record's prototype.
 */
export function addValue(record: SourceRecord, name: string, value: unknown): void {
  if (!Object.hasOwn(record, name)) {
    if (name === '__proto__') {
      Object.defineProperty(record, name, { value, enumerable: true, writable: true, configurable: true });
    } else record[name] = value;
    return;
  }
  const present = record[name];
  if (Array.isArray(present)) present.push(value);
  else record[name] = [present, value];
}
