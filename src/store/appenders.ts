import type { DuckDBAppender } from '@duckdb/node-api';

/**
 * Closes an appender; `discard`: first drop the rows it holds. An appender whose flush failed, or whose
 * connection is closed, may refuse to close; it holds nothing that must be kept.
 */
export function closeAppender(appender: DuckDBAppender, discard = false): void {
  try {
    if (discard) appender.clear();
    appender.closeSync();
  } catch {
    // Nothing to keep (above).
  }
}
