import { Readable, pipeline } from 'node:stream';
import { CsvError, parse } from 'csv-parse';
import { MalformedDocumentError } from './answer.js';
import { addValue, RECORDS_PER_BATCH, type SourceRecord } from './document-records.js';

/**
 * Reads a CSV (`delimiter` `,`) or TSV (`\t`) document as it streams in, parsed by csv-parse (CONTRACT.md,
 * "Integrator features", **Feed formats.**): its first row names the columns and every later row is a
 * record, an object of its values by column name. Names and values are trimmed; an empty value is no
 * value, a column without a name is left out, a repeated name gives an array of its values. Fields may be
 * quoted with `"` (a quote inside an unquoted field is a character). Malformed CSV (a quote left open, a
 * row with another number of fields than the header), or a document without a header row, throws a
 * MalformedDocumentError.
 */
export async function* csvRecords(
  bytes: AsyncIterable<Buffer>,
  delimiter: ',' | '\t',
): AsyncGenerator<SourceRecord[]> {
  const format = delimiter === ',' ? 'CSV' : 'TSV';
  const parser = parse({ delimiter, bom: true, relax_quotes: true, skip_empty_lines: true });
  const rows = pipeline(Readable.from(bytes), parser, () => undefined) as AsyncIterable<string[]>;
  let columns: (string | undefined)[] | undefined;
  let batch: SourceRecord[] = [];
  try {
    for await (const row of rows) {
      if (columns === undefined) {
        columns = row.map((name) => name.trim() || undefined);
        continue;
      }
      const record: SourceRecord = {};
      for (let i = 0; i < row.length; i++) {
        const name = columns[i];
        const value = row[i].trim();
        if (name !== undefined && value !== '') addValue(record, name, value);
      }
      batch.push(record);
      if (batch.length >= RECORDS_PER_BATCH) {
        yield batch;
        batch = [];
      }
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    throw new MalformedDocumentError(`the answer is not valid ${format}: ${error.message}`);
  }
  if (columns === undefined)
    throw new MalformedDocumentError(`the answer is not ${format}: it has no header row`);
  if (batch.length > 0) yield batch;
}
