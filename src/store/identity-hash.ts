/**
 * A 64-bit hash of the identity that acted (the user id, else the session id), stored with each
 * interaction (`identity_hash`): analytics count distinct identities over these integers, several times
 * faster than over the ids' text (docs/guide.md, "Analytics and experiments"). Two 32-bit lanes over the id's UTF-16 code units,
 * each a multiply-xor step per unit finished by an avalanche of its own, make the high and low words;
 * two ids are counted as one only if both lanes collide.
 */
export function identityHash(identity: string): bigint {
  let high = 0x811c9dc5;
  let low = 0x9747b28c ^ identity.length;
  for (let i = 0; i < identity.length; i++) {
    const unit = identity.charCodeAt(i);
    high = Math.imul(high ^ unit, 0x01000193);
    low = Math.imul(low ^ unit, 0x5bd1e995);
    low ^= low >>> 13;
  }
  high ^= high >>> 16;
  high = Math.imul(high, 0x85ebca6b);
  high ^= high >>> 13;
  high = Math.imul(high, 0xc2b2ae35);
  high ^= high >>> 16;
  low ^= low >>> 15;
  low = Math.imul(low, 0x2c1b3c6d);
  low ^= low >>> 12;
  low = Math.imul(low, 0x297a2d39);
  low ^= low >>> 15;
  return BigInt.asIntN(64, (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0));
}

/** The identity of an interaction, as identityHash takes it. */
export function identityOf(event: { userId: string | null; sessionId: string | null }): string {
  return event.userId ?? event.sessionId ?? '';
}
