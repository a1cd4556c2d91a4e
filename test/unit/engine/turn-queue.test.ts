import { describe, expect, it } from 'vitest';
import { TurnQueue } from '../../../src/engine/turn-queue.js';

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnQueue', () => {
  it('runs the work deferred in a turn after its callbacks, back to back and in order', async () => {
    const queue = new TurnQueue();
    const events: string[] = [];
    queue.defer(() => events.push('first'));
    events.push('rest of the turn');
    queue.defer(() => events.push('second'));
    // Queued before the deferred work ran, so it runs after it.
    setImmediate(() => events.push('after the deferred work'));
    expect(events).toEqual(['rest of the turn']);
    await endOfTurn();
    expect(events).toEqual(['rest of the turn', 'first', 'second', 'after the deferred work']);
  });

  it('runs work deferred by deferred work in the same run, and starts afresh in the next turn', async () => {
    const queue = new TurnQueue();
    const events: string[] = [];
    queue.defer(() => queue.defer(() => events.push('nested')));
    await endOfTurn();
    expect(events).toEqual(['nested']);
    queue.defer(() => events.push('next turn'));
    await endOfTurn();
    expect(events).toEqual(['nested', 'next turn']);
  });
});
