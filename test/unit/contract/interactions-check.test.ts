import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_BATCH } from '../../../src/contract/common.js';
import { INTERACTIONS_BODY } from '../../../src/contract/ingestion.js';
import { checkInteractionsBody } from '../../../src/contract/interactions-check.js';
import { fromValidation } from '../../../src/server/plugins/errors.js';
import { SchemaValidationError, zodValidatorCompiler } from '../../../src/server/validation.js';

const copy = <T>(value: T): T => structuredClone(value);

/** What the daemon's validator makes of a body: the value, or the error body a client gets. */
function validateAsDaemon(body: unknown): { value: unknown } | { errorBody: unknown } {
  const validate = zodValidatorCompiler({
    schema: INTERACTIONS_BODY,
    method: 'POST',
    url: '/',
    httpPart: 'body',
  });
  const outcome = validate(body) as { value: unknown } | { error: SchemaValidationError };
  if ('value' in outcome) return { value: outcome.value };
  outcome.error.validationContext = 'body';
  return { errorBody: fromValidation(outcome.error).toBody() };
}

/** The same through zod alone, as the daemon validated before the hand-written check. */
function validateWithZod(body: unknown): { value: unknown } | { errorBody: unknown } {
  // The daemon takes a null body (a POST without one) as none.
  const result = INTERACTIONS_BODY.safeParse(body ?? undefined);
  if (result.success) return { value: result.data };
  const error = new SchemaValidationError(result.error.issues);
  error.validationContext = 'body';
  return { errorBody: fromValidation(error).toBody() };
}

/** The check accepts only what the schema accepts, returns what it returns, and the daemon answers as before. */
function expectAgreement(body: unknown): void {
  const zod = INTERACTIONS_BODY.safeParse(copy(body));
  const given = copy(body);
  const checked = checkInteractionsBody(given);
  if (checked !== undefined) {
    expect(zod.success).toBe(true);
    expect(checked).toStrictEqual(zod.data);
  } else {
    // A body the check gives up on reaches the schema unchanged.
    expect(given).toStrictEqual(body);
  }
  expect(validateAsDaemon(copy(body))).toStrictEqual(validateWithZod(copy(body)));
}

const event = (fields: Record<string, unknown>) => ({ userId: 'u1', itemId: 'i1', type: 'view', ...fields });

const BAD_BODIES: [string, unknown][] = [
  ['no body', undefined],
  ['null', null],
  ['an array', [event({})]],
  ['a string', 'interactions'],
  ['no interactions', {}],
  ['an unknown top-level key', { interactions: [], extra: 1 }],
  ['interactions not an array', { interactions: { 0: event({}) } }],
  ['an event that is not an object', { interactions: [event({}), 'view'] }],
  ['an event that is an array', { interactions: [[]] }],
  ['an event that is null', { interactions: [null] }],
  ['no identity', { interactions: [{ itemId: 'i1', type: 'view' }] }],
  ['no identity and a bad type', { interactions: [{ itemId: 'i1', type: 'click' }] }],
  ['no item', { interactions: [{ userId: 'u1', type: 'view' }] }],
  ['no type', { interactions: [{ userId: 'u1', itemId: 'i1' }] }],
  ['an unknown type', { interactions: [event({ type: 'click' })] }],
  ['a type of another case', { interactions: [event({ type: 'View' })] }],
  ['an empty user id', { interactions: [event({ userId: '' })] }],
  ['a null user id', { interactions: [event({ userId: null })] }],
  ['a numeric item id', { interactions: [event({ itemId: 42 })] }],
  ['an item id over 512', { interactions: [event({ itemId: 'x'.repeat(513) })] }],
  ['a session id over 512', { interactions: [event({ sessionId: 'x'.repeat(513) })] }],
  ['an empty scenario slug', { interactions: [event({ scenarioSlug: '' })] }],
  ['a scenario slug over 128', { interactions: [event({ scenarioSlug: 's'.repeat(129) })] }],
  ['a country over 16', { interactions: [event({ country: 'c'.repeat(17) })] }],
  ['a numeric country', { interactions: [event({ country: 49 })] }],
  ['an empty event id', { interactions: [event({ eventId: '' })] }],
  ['a null event id', { interactions: [event({ eventId: null })] }],
  ['an event id over 256', { interactions: [event({ eventId: 'e'.repeat(257) })] }],
  ['a recommId over 256', { interactions: [event({ recommId: 'r'.repeat(257) })] }],
  ['a null recommId', { interactions: [event({ recommId: null })] }],
  ['a weight as text', { interactions: [event({ weight: '2' })] }],
  ['a null weight', { interactions: [event({ weight: null })] }],
  ['an infinite weight', { interactions: [event({ weight: Infinity })] }],
  ['a NaN weight', { interactions: [event({ weight: NaN })] }],
  ['a timestamp that is no date', { interactions: [event({ timestamp: 'yesterday' })] }],
  ['a timestamp out of range', { interactions: [event({ timestamp: '2024-13-45T00:00:00Z' })] }],
  ['a numeric timestamp', { interactions: [event({ timestamp: 1_700_000_000_000 })] }],
  ['an unknown event key', { interactions: [event({ item_id: 'i1' })] }],
  // Not a bad body, but not one JSON sends either.
  ['a field set to undefined', { interactions: [event({ sessionId: undefined })] }],
  [
    'a bad event after good ones with timestamps',
    {
      interactions: [
        event({ timestamp: '2024-01-01T00:00:00Z' }),
        event({ timestamp: '2024-01-02' }),
        event({ type: 'click' }),
      ],
    },
  ],
  [
    'several bad events',
    { interactions: [event({ userId: '' }), event({}), event({ weight: 'x', type: 1 })] },
  ],
  ['too many events', { interactions: Array.from({ length: MAX_BATCH + 1 }, () => event({})) }],
  ['a price on a view', { interactions: [event({ price: 10 })] }],
  ['an amount on a bookmark', { interactions: [event({ type: 'bookmark', amount: 1 })] }],
  ['a zero amount', { interactions: [event({ type: 'purchase', amount: 0 })] }],
  ['a negative price', { interactions: [event({ type: 'cart', price: -0.01 })] }],
  ['a price as text', { interactions: [event({ type: 'purchase', price: '9.99' })] }],
  ['a null profit', { interactions: [event({ type: 'purchase', profit: null })] }],
];

const GOOD_BODIES: [string, unknown][] = [
  ['no events', { interactions: [] }],
  ['a minimal event', { interactions: [event({})] }],
  ['a session instead of a user', { interactions: [{ sessionId: 's1', itemId: 'i1', type: 'cart' }] }],
  [
    'every field',
    {
      interactions: [
        {
          userId: 'u',
          sessionId: 's',
          itemId: 'i',
          type: 'rating',
          weight: 4.5,
          scenarioSlug: 'home',
          country: 'de',
          timestamp: '2024-05-01T10:20:30.123Z',
          eventId: 'e1',
          recommId: '',
        },
      ],
    },
  ],
  ['null slug and country', { interactions: [event({ scenarioSlug: null, country: null })] }],
  ['an empty country', { interactions: [event({ country: '' })] }],
  ['a date-only timestamp', { interactions: [event({ timestamp: '2024-02-29' })] }],
  ['a timestamp with an offset', { interactions: [event({ timestamp: '2024-02-29T23:00:00+02:00' })] }],
  ['a timestamp without offset', { interactions: [event({ timestamp: '2024-02-29 23:00' })] }],
  ['ids at their longest', { interactions: [event({ userId: 'u'.repeat(512), eventId: 'e'.repeat(256) })] }],
  ['a negative weight', { interactions: [event({ weight: -1 })] }],
  ['a bookmark', { interactions: [event({ type: 'bookmark' })] }],
  ['a priced purchase', { interactions: [event({ type: 'purchase', amount: 2, price: 19.98, profit: -3 })] }],
  [
    'a free cart with a fractional amount',
    { interactions: [event({ type: 'cart', amount: 0.5, price: 0 })] },
  ],
  ['a lone price', { interactions: [event({ type: 'purchase', price: 5 })] }],
  ['as many events as allowed', { interactions: Array.from({ length: MAX_BATCH }, () => event({})) }],
];

describe('checkInteractionsBody', () => {
  it.each(BAD_BODIES)('leaves %s to the schema, whose answer is unchanged', (_name, body) => {
    expect(checkInteractionsBody(copy(body))).toBeUndefined();
    expectAgreement(body);
  });

  it.each(GOOD_BODIES)('accepts %s as the schema returns it', (_name, body) => {
    expect(checkInteractionsBody(copy(body))).toBeDefined();
    expectAgreement(body);
  });

  it('agrees with the schema on generated bodies', () => {
    const text = (maxLength: number) => fc.string({ maxLength });
    const around = (length: number) => fc.string({ minLength: length - 1, maxLength: length + 1 });
    const id = fc.oneof(text(3), around(512), fc.constant(null), fc.integer());
    const fields = {
      userId: id,
      sessionId: id,
      itemId: id,
      type: fc.oneof(
        fc.constantFrom('view', 'cart', 'purchase', 'rating', 'bookmark', 'click', ''),
        fc.integer(),
      ),
      weight: fc.oneof(fc.double(), fc.string({ maxLength: 2 }), fc.constant(null)),
      amount: fc.oneof(fc.double(), fc.constantFrom(0, 1, -1), fc.constant(null)),
      price: fc.oneof(fc.double(), fc.constantFrom(0, -0.5, 12.5), fc.string({ maxLength: 2 })),
      profit: fc.oneof(fc.double(), fc.constant(null)),
      timestamp: fc.oneof(
        fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
        fc.constantFrom('2024-01-01', '2024-01-01T10:00', '2024-13-45', 'now', '2024-01-01T00:00:00+0200'),
        fc.integer(),
      ),
      scenarioSlug: fc.oneof(fc.constant(null), text(3), around(128)),
      country: fc.oneof(fc.constant(null), text(3), around(16), fc.integer()),
      eventId: fc.oneof(text(3), around(256), fc.constant(null)),
      recommId: fc.oneof(text(3), around(256), fc.constant(null)),
      extra: fc.anything(),
    };
    const anyEvent = fc.record(fields, { requiredKeys: [] });
    const good = fc.record(
      {
        userId: fc.string({ minLength: 1, maxLength: 5 }),
        itemId: fc.string({ minLength: 1, maxLength: 5 }),
        type: fc.constantFrom('view', 'cart', 'purchase', 'rating', 'bookmark'),
        timestamp: fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
      },
      { requiredKeys: ['userId', 'itemId', 'type'] },
    );
    // A valid event with one field set to anything of its generator, so that a bad field is often alone.
    const field = fc.constantFrom(...(Object.keys(fields) as (keyof typeof fields)[]));
    const oneChanged = fc
      .tuple(good, field)
      .chain(([event, key]) =>
        (fields[key] as fc.Arbitrary<unknown>).map((value) => ({ ...event, [key]: value })),
      );
    const eventArbitrary = fc.oneof(
      { arbitrary: good, weight: 4 },
      { arbitrary: oneChanged, weight: 3 },
      { arbitrary: anyEvent, weight: 1 },
    );
    const body = fc.oneof(
      fc.record({ interactions: fc.array(eventArbitrary, { maxLength: 4 }) }),
      fc.record({ interactions: fc.anything(), other: fc.anything() }, { requiredKeys: [] }),
      fc.anything(),
    );
    // As a body arrives: JSON, so no undefined, NaN or Infinity.
    const json = body.map((value) => JSON.parse(JSON.stringify(value ?? null)) as unknown);
    fc.assert(
      fc.property(json, (value) => {
        expectAgreement(value);
        // Every body the schema accepts takes the fast way.
        if (INTERACTIONS_BODY.safeParse(copy(value)).success)
          expect(checkInteractionsBody(copy(value))).toBeDefined();
      }),
      { numRuns: 3000 },
    );
  });
});
