import { describe, expect, it } from 'vitest';
import { identityHash, identityOf } from '../../../src/store/identity-hash.js';

describe('identityHash', () => {
  it('is a signed 64-bit integer that depends on every unit of the id', () => {
    const hash = identityHash('user-1');
    expect(hash).toBe(identityHash('user-1'));
    expect(BigInt.asIntN(64, hash)).toBe(hash);
    expect(new Set(['user-1', 'user-2', '1-user', 'user-1 ', 'usér-1', ''].map(identityHash)).size).toBe(6);
  });

  it('tells 200,000 similar ids apart', () => {
    const hashes = new Set<bigint>();
    for (let i = 0; i < 200_000; i++) hashes.add(identityHash(`sess_${i.toString(16)}`));
    expect(hashes.size).toBe(200_000);
  });

  it('hashes the user id, else the session id', () => {
    expect(identityOf({ userId: 'u', sessionId: 's' })).toBe('u');
    expect(identityOf({ userId: null, sessionId: 's' })).toBe('s');
  });
});
