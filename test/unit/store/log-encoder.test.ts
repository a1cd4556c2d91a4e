import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineEncoder, type LogRow } from '../../../src/store/log-encoder.js';
import { storedInteraction } from '../../support/temp-store.js';

/** The line as plain string building makes it: what the encoder's byte-by-byte writing must equal. */
function reference({ tenantId, event: e, seq, itemKey, identityHash }: LogRow): string {
  const text = (value: string | null | undefined) =>
    value === null || value === undefined
      ? ''
      : /^$|[",\n\r]/.test(value)
        ? `"${value.replaceAll('"', '""')}"`
        : value;
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
      String(identityHash),
    ].join(',') + '\n'
  );
}

const row: LogRow = { tenantId: 't', event: storedInteraction('x'), seq: 1, itemKey: 0, identityHash: 1n };

describe('LineEncoder', () => {
  it('writes a row as one CSV line', () => {
    expect(new LineEncoder().encode([row]).toString()).toBe('t,x,u,,i,view,1,,,1,1,1,false,,0,1\n');
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
          type: fc.constantFrom('view' as const, 'cart' as const, 'purchase' as const, 'rating' as const),
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
        }),
        seq: fc.nat(),
        itemKey: fc.nat(),
        identityHash: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      }),
      { maxLength: 20 },
    );
    const encoder = new LineEncoder();
    fc.assert(
      fc.property(rows, (batch) => {
        expect(encoder.encode(batch).toString()).toBe(batch.map(reference).join(''));
      }),
      { numRuns: 500 },
    );
  });

  it('grows past its buffer for a large batch, and starts over for the next', () => {
    const encoder = new LineEncoder();
    const long = 'x'.repeat(100_000);
    const batch = Array.from({ length: 40 }, (_, n) => ({
      ...row,
      seq: n,
      event: { ...row.event, userId: `${long}${n}` },
    }));
    expect(encoder.encode(batch).toString()).toBe(batch.map(reference).join(''));
    expect(encoder.encode([row]).toString()).toBe(reference(row));
  });

  it('refuses a row the store would refuse, naming the column', () => {
    const encoder = new LineEncoder();
    expect(() => encoder.encode([{ ...row, tenantId: null as unknown as string }])).toThrow(/tenant_id/);
    expect(() => encoder.encode([{ ...row, event: { ...row.event, weight: Number.NaN } }])).toThrow(/weight/);
    expect(() => encoder.encode([{ ...row, event: { ...row.event, ts: 1.5 } }])).toThrow(/\.ts/);
    expect(() =>
      encoder.encode([{ ...row, event: { ...row.event, itemId: null as unknown as string } }]),
    ).toThrow(/item_id/);
  });
});
