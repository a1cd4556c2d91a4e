import { describe, expect, it } from 'vitest';
import { LocalRanker, rankingOutcome, type Rank, type Ranker } from '../../../src/engine/ranker.js';
import type { AnswerSummary } from '../../../src/engine/answer-summary.js';
import { Recommender, type AnswerRecorder } from '../../../src/engine/recommender.js';
import { answerNow, buildTenant, request } from '../../support/tenant-fixture.js';

const OPTIONS = { maxBytes: 1024 * 1024, ttlMs: 60_000 };

function tenantOf() {
  return buildTenant({
    items: ['a', 'b', 'c'],
    events: [
      { item: 'a', user: 'u1' },
      { item: 'b', user: 'u1' },
      { item: 'a', user: 'u2' },
      { item: 'c', user: 'u2' },
    ],
  });
}

/** Ranks like LocalRanker, but only when the test says so: the time a list takes to come back. */
class HeldRanker implements Ranker {
  private readonly inline = new LocalRanker();
  readonly held: (() => void)[] = [];

  readonly rank: Rank = (...args) => {
    this.held.push(() => this.inline.rank(...args));
  };

  release(): void {
    for (const held of this.held.splice(0)) held();
  }

  async close(): Promise<void> {}
}

/** Ranks at once, like LocalRanker, and hands the outcome back only when the test says so. */
class RankedThenHeld implements Ranker {
  private readonly held: (() => void)[] = [];

  readonly rank: Rank = (tenant, request, projection, now, done) => {
    const outcome = rankingOutcome(tenant, request, projection, now);
    this.held.push(() => done(outcome));
  };

  release(): void {
    for (const held of this.held.splice(0)) held();
  }

  async close(): Promise<void> {}
}

type Parsed = { items: { itemId: string }[]; recommId: string };
const parse = (body: string) => JSON.parse(body) as Parsed;

/** Whatever the recommender answered, parsed (or the error), as each answer arrives. */
function collector() {
  const answers: (Parsed | Error)[] = [];
  const done = (answer: string | Error) => answers.push(answer instanceof Error ? answer : parse(answer));
  return { answers, done };
}

/** A recommender whose ranker holds every list until released, and what it answered so far. */
function heldRecommender() {
  const ranker = new HeldRanker();
  return { tenant: tenantOf(), ranker, recommender: new Recommender(ranker, OPTIONS), ...collector() };
}

describe('Recommender', () => {
  it('ranks a miss, and answers the same request from the cache once the list came back', () => {
    const { tenant, ranker, recommender, answers, done } = heldRecommender();
    const pdp = request({ logicType: 'item-to-item', itemId: 'a' });
    recommender.recommend(tenant, pdp, done);
    // Nothing is cached before the list comes back.
    recommender.recommend(tenant, pdp, done);
    expect(ranker.held).toHaveLength(2);
    expect(answers).toEqual([]);
    ranker.release();
    recommender.recommend(tenant, pdp, done);
    expect(ranker.held).toHaveLength(0);
    const [first, second, cached] = answers as Parsed[];
    expect(first.items.length).toBeGreaterThan(0);
    expect(second.items).toEqual(first.items);
    expect(cached.items).toEqual(first.items);
    expect(new Set([first.recommId, second.recommId, cached.recommId]).size).toBe(3);
  });

  it('never answers a noCache request from the cache', () => {
    const { tenant, ranker, recommender, answers, done } = heldRecommender();
    recommender.recommend(tenant, request({ logicType: 'item-to-item', itemId: 'a' }), done);
    ranker.release();
    recommender.recommend(tenant, request({ logicType: 'item-to-item', itemId: 'a', noCache: true }), done);
    expect(ranker.held).toHaveLength(1);
    expect(answers).toHaveLength(1);
  });

  it('does not keep a list as fresh when the state changed while it was ranked', () => {
    const { tenant, ranker, recommender, answers, done } = heldRecommender();
    const pdp = request({ logicType: 'item-to-item', itemId: 'a' });
    recommender.recommend(tenant, pdp, done);
    // A write acknowledged after the request was sent: the list may or may not have seen it.
    tenant.upsertItem({ ...tenant.catalog.document(tenant.catalog.idOf('b'))!, available: false });
    ranker.release();
    recommender.recommend(tenant, pdp, done);
    expect(ranker.held).toHaveLength(1);
    expect(answers).toHaveLength(1);
  });

  it('hands request errors to the callback, and throws projection errors at once', () => {
    const tenant = tenantOf();
    const recommender = new Recommender(new LocalRanker(), OPTIONS);
    const { answers, done } = collector();
    recommender.recommend(tenant, request({ logicType: 'item-to-item', itemId: 'zz' }), done);
    expect(answers).toEqual([expect.objectContaining({ code: 'ITEM_NOT_FOUND' })]);
    expect(() =>
      answerNow(
        recommender,
        tenant,
        request({ logicType: 'item-to-item', itemId: 'a', includedProperties: ['attributes.__proto__'] }),
      ),
    ).toThrow(expect.objectContaining({ code: 'UNSAFE_PATH' }));
  });

  it('records what ranking said of an answer, and the same again when the cache gives it', () => {
    const recorded: AnswerSummary[] = [];
    const recorder: AnswerRecorder = { record: (_tenantId, _userId, answer) => recorded.push(answer) };
    const tenant = tenantOf();
    const recommender = new Recommender(new LocalRanker(), OPTIONS, recorder);
    const pdp = request({ logicType: 'item-to-item', itemId: 'a' });
    const first = parse(answerNow(recommender, tenant, pdp));
    const again = parse(answerNow(recommender, tenant, pdp));
    expect(again.items).toEqual(first.items);
    const itemIds = first.items.map((entry) => entry.itemId);
    expect(itemIds.length).toBeGreaterThan(0);
    const ids = itemIds.map((itemId) => tenant.catalog.idOf(itemId));
    const summary = { itemIds, ids, algorithm: 'co-occurrence', scenario: '', experiment: '' };
    expect(recorded).toEqual([summary, summary]);
  });

  it('leaves out of the record an item deleted between ranking and answering', () => {
    const recorded: AnswerSummary[] = [];
    const ranker = new RankedThenHeld();
    const recommender = new Recommender(ranker, OPTIONS, {
      record: (_t, _u, answer) => recorded.push(answer),
    });
    const tenant = tenantOf();
    const { answers, done } = collector();
    recommender.recommend(tenant, request({ logicType: 'item-to-item', itemId: 'a' }), done);
    tenant.removeItems(['b']);
    ranker.release();
    // The text was rendered before the deletion; the record names only the items still there.
    const [answer] = answers as Parsed[];
    expect(answer.items.map((entry) => entry.itemId)).toContain('b');
    expect(recorded).toHaveLength(1);
    expect(recorded[0].itemIds).not.toContain('b');
    expect(recorded[0].itemIds).toEqual(answer.items.map((entry) => entry.itemId).filter((id) => id !== 'b'));
  });
});
