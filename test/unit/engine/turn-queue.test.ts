import { describe, expect, it } from 'vitest';
import { TurnQueue } from '../../../src/engine/turn-queue.js';

const endOfTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnQueue', () => {
  it('runs the jobs of a turn after its callbacks, back to back and in order', async () => {
    const queue = new TurnQueue();
    const events: string[] = [];
    queue.defer(() => events.push('first job'));
    events.push('rest of the turn');
    queue.defer(() => events.push('second job'));
    // Queued before the jobs ran, so it runs after them.
    setImmediate(() => events.push('after the jobs'));
    expect(events).toEqual(['rest of the turn']);
    await endOfTurn();
    expect(events).toEqual(['rest of the turn', 'first job', 'second job', 'after the jobs']);
  });

  it('runs a job deferred by a job in the same run, and starts afresh in the next turn', async () => {
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
