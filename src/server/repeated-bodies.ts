import { LRUCache } from 'lru-cache';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's JSON bodies repeat: each distinct text whose parsed body this accepts is parsed and
     * validated once (RepeatedBodies).
     */
    rememberBody?: (parsed: unknown) => boolean;
  }
}

/** Longer bodies are parsed each time: a request for a list is short, and a long text costs room. */
const MAX_TEXT_LENGTH = 4096;
/**
 * What an entry may take per character of its text: the text (2 bytes at most), then the parsed and the
 * validated body, which share their strings but not their arrays. Only bodies that passed their schema
 * are kept, and the densest of those is a list of one-character ids (`"a",`: 4 characters for a string
 * of about 20 bytes and a slot of 8 in each array), about 11 bytes per character in all.
 */
const BYTES_PER_CHARACTER = 18;
/** The two bodies' objects and the cache's own bookkeeping. */
const ENTRY_OVERHEAD = 512;

/** Freezes an object parsed from JSON and everything in it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * A body parsed from a text to remember, as the parser hands it to validation. The handler gets what the
 * route's schema made of it, frozen to its leaves, so that the requests sending that text share it; the
 * schemas of such routes must therefore return nothing they share otherwise (no object defaults, no
 * transforms to constants).
 */
export class RememberedBody {
  private passed?: { schema: object; outcome: { value: unknown } };

  /** `keep` is called when the body first passes a schema: a body that fails is not worth the room. */
  constructor(
    readonly parsed: unknown,
    private readonly keep: (body: RememberedBody) => void,
  ) {}

  /** The outcome of the schema's first success: a body no one can change that passed once passes for good. */
  validate<E>(
    schema: object,
    validate: (parsed: unknown) => { value: unknown } | { error: E },
  ): { value: unknown } | { error: E } {
    if (this.passed?.schema === schema) return this.passed.outcome;
    const outcome = validate(this.parsed);
    if ('error' in outcome) return outcome;
    this.passed = { schema, outcome: { value: deepFreeze(outcome.value) } };
    this.keep(this);
    return this.passed.outcome;
  }
}

/**
 * Request bodies remembered by their text, on the routes that ask for it (`rememberBody`). A shop asks for
 * the same list (a user, a scenario, a projection) on page view after page view, and once the answer is
 * cached, parsing and validating its body again takes more time than answering it.
 */
export class RepeatedBodies {
  private readonly bodies: LRUCache<string, RememberedBody>;

  /**
   * At most `maxBytes`, and a body not sent again for `ttlMs` is forgotten at the next `purgeStale`: the
   * answers such a body asks for are cached no longer than that either (docs/memory.md).
   */
  constructor(maxBytes = 32 * 1024 * 1024, ttlMs = 60_000) {
    this.bodies = new LRUCache<string, RememberedBody>({
      maxSize: maxBytes,
      sizeCalculation: (_body, text) => text.length * BYTES_PER_CHARACTER + ENTRY_OVERHEAD,
      ttl: ttlMs,
      updateAgeOnGet: true,
    });
  }

  /** Bodies remembered, stale ones included until `purgeStale`. */
  get size(): number {
    return this.bodies.size;
  }

  /** Forgets the bodies not sent again within the TTL. */
  purgeStale(): void {
    this.bodies.purgeStale();
  }

  /** Forgets every body (a deleted user's id may be in some). */
  clear(): void {
    this.bodies.clear();
  }

  /** The body remembered for this text, if any. */
  get(text: string): RememberedBody | undefined {
    return text.length > MAX_TEXT_LENGTH ? undefined : this.bodies.get(text);
  }

  /**
   * What the parser hands on for a body parsed from `text`: a RememberedBody, kept once it passes its
   * schema, or the parsed body as it is if the text is too long to be worth remembering.
   */
  remember(text: string, parsed: unknown): unknown {
    if (text.length > MAX_TEXT_LENGTH) return parsed;
    return new RememberedBody(parsed, (body) => this.bodies.set(text, body));
  }
}
