import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { identityHash, identityOf } from '../../../src/store/identity-hash.js';
import { LineEncoder, type LogBatch } from '../../../src/store/log-encoder.js';
import type { StoredInteraction } from '../../../src/store/rows.js';
import { storedInteraction } from '../../support/temp-store.js';

interface Row {
  tenantId: string;
  event: StoredInteraction;
  itemKey: number;
}

/** Rows as a batch whose sequence numbers start at `firstSeq`. */
function batchOf(rows: Row[], firstSeq = 1): LogBatch {
  return {
    rows: rows.map(({ tenantId, event }) => [tenantId, event] as const),
    firstSeq,
    itemKeys: Int32Array.from(rows, (row) => row.itemKey),
    freshKeys: [],
  };
}

/** The line as plain string building makes it: what the encoder's byte-by-byte writing must equal. */
function reference({ tenantId, event: e, itemKey }: Row, seq: number): string {
  const text = (value: string | null | undefined) =>
    value === null || value === undefined
      ? ''
      : /^$|[",\n\r]/.test(value)
        ? `"${value.replaceAll('"', '""')}"`
        : value;
  const number = (value: number | null | undefined) =>
    value === null || value === undefined ? '' : String(value);
  return (
    [
      text(tenantId),
      text(e.eventId),
      text(e.userId),
      text(e.sessionId),
      text(e.itemId),
      text(e.type),
      String(e.weight),
      text(e.scenarioSlug),
      text(e.country),
      String(e.ts),
      String(e.receivedAt),
      String(seq),
      String(e.merged === true),
      text(e.recommId),
      String(itemKey),
      String(identityHash(identityOf(e))),
      number(e.amount),
      number(e.price),
      number(e.profit),
    ].join(',') + '\n'
  );
}

/** The lines of `rows` from sequence number `firstSeq` on, as `reference` makes them. */
function referenceLines(rows: Row[], firstSeq = 1): string {
  return rows.map((row, i) => reference(row, firstSeq + i)).join('');
}

const row: Row = { tenantId: 't', event: storedInteraction('x'), itemKey: 0 };

describe('LineEncoder', () => {
  it('writes a row as one CSV line', () => {
    const hash = String(identityHash('u'));
    expect(new LineEncoder().encode(batchOf([row])).toString()).toBe(
      `t,x,u,,i,view,1,,,1,1,1,false,,0,${hash},,,\n`,
    );
  });

  it('writes every row as plain string building would, texts of any kind and numbers of any size', () => {
    const text = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', 'Z', '9', '-', '"', ',', '\n', '\r', ' ', 'é', '✓', '😀') }),
      fc.string({ unit: 'binary' }),
    );
    const optional = fc.option(text, { nil: null });
    const rows = fc.array(
      fc.record({
        tenantId: text,
        event: fc.record({
          eventId: optional,
          userId: optional,
          sessionId: optional,
          itemId: text,
          type: fc.constantFrom(
            'view' as const,
            'cart' as const,
            'purchase' as const,
            'rating' as const,
            'bookmark' as const,
          ),
          weight: fc.oneof(
            fc.integer({ min: -1e6, max: 1e6 }),
            fc.double({ noNaN: true, noDefaultInfinity: true }),
          ),
          scenarioSlug: optional,
          country: optional,
          ts: fc.maxSafeInteger(),
          receivedAt: fc.nat(),
          merged: fc.boolean(),
          recommId: optional,
          amount: fc.option(fc.double({ min: 0.001, max: 1e9, noNaN: true }), { nil: null }),
          price: fc.option(
            fc.oneof(
              fc.integer({ min: 0, max: 1e9 }),
              fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }),
            ),
            {
              nil: null,
            },
          ),
          profit: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null }),
        }),
        itemKey: fc.nat({ max: 2 ** 31 - 1 }),
      }),
      { maxLength: 20 },
    );
    const encoder = new LineEncoder();
    fc.assert(
      fc.property(rows, fc.maxSafeInteger(), (batch, firstSeq) => {
        expect(encoder.encode(batchOf(batch, firstSeq)).toString()).toBe(referenceLines(batch, firstSeq));
      }),
      { numRuns: 500 },
    );
  });

  it('grows past its buffer for a large batch, and starts over for the next', () => {
    const encoder = new LineEncoder();
    const long = 'x'.repeat(100_000);
    const batch = Array.from({ length: 40 }, (_, n) => ({
      ...row,
      event: { ...row.event, userId: `${long}${n}` },
    }));
    expect(encoder.encode(batchOf(batch)).toString()).toBe(referenceLines(batch));
    expect(encoder.encode(batchOf([row])).toString()).toBe(referenceLines([row]));
  });

  it('refuses a row the store would refuse, naming the column', () => {
    const encoder = new LineEncoder();
    const encode = (changed: Row) => encoder.encode(batchOf([changed]));
    expect(() => encode({ ...row, tenantId: null as unknown as string })).toThrow(/tenant_id/);
    expect(() => encode({ ...row, event: { ...row.event, weight: Number.NaN } })).toThrow(/weight/);
    expect(() => encode({ ...row, event: { ...row.event, ts: 1.5 } })).toThrow(/\.ts/);
    expect(() => encode({ ...row, event: { ...row.event, price: Number.POSITIVE_INFINITY } })).toThrow(
      /price/,
    );
    expect(() => encode({ ...row, event: { ...row.event, itemId: null as unknown as string } })).toThrow(
      /item_id/,
    );
  });

  it('writes the received time and identity that rows share with the row before as of rows that do not', () => {
    const encoder = new LineEncoder();
    const at = (receivedAt: number, userId: string | null, sessionId: string | null = null) => ({
      ...row,
      event: { ...row.event, receivedAt, userId, sessionId },
    });
    const batch = [
      at(1_700_000_000_123, 'a'),
      at(1_700_000_000_123, 'a'),
      at(1_700_000_000_123, 'b'),
      at(99, null, 'b'),
      at(99, 'c'),
      at(99, null, null),
      at(99, null, null),
      at(99, 'd'),
    ];
    expect(encoder.encode(batchOf(batch)).toString()).toBe(referenceLines(batch));
    // The next batch writes over the buffer, past where the last received time and identity hash were,
    // before it writes its own: what was kept of them is a copy.
    const next = [at(99, 'd', 'e'.repeat(200)), at(7, 'f')];
    expect(encoder.encode(batchOf(next, 9)).toString()).toBe(referenceLines(next, 9));
  });
});
