import { SignJWT, jwtVerify } from 'jose';
import { LRUCache } from 'lru-cache';

/** The tenant claim. */
const TENANT_CLAIM = 'tid';

function keyOf(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

export interface IssuedToken {
  token: string;
  /** ISO 8601. */
  expiresAt: string;
}

/** An HS256 token for the tenant, valid `ttlSeconds` from `nowMs`. */
export async function issueToken(
  secret: string,
  tenantId: string,
  ttlSeconds: number,
  nowMs = Date.now(),
): Promise<IssuedToken> {
  const issuedAt = Math.floor(nowMs / 1000);
  const expiresAt = issuedAt + ttlSeconds;
  const token = await new SignJWT({ [TENANT_CLAIM]: tenantId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt(issuedAt)
    .setExpirationTime(expiresAt)
    .sign(keyOf(secret));
  return { token, expiresAt: new Date(expiresAt * 1000).toISOString() };
}

interface Verified {
  tenantId: string;
  /** Unix seconds. */
  exp: number;
}

/**
 * Verifies bearer tokens: HS256 only, `exp` and `tid` required. A token that verified is remembered until
 * it expires, so a client's every request does not pay for the signature check again.
 */
export class TokenVerifier {
  private readonly key: Uint8Array;
  private readonly verified = new LRUCache<string, Verified>({ max: 10_000 });

  constructor(secret: string) {
    this.key = keyOf(secret);
  }

  /** The tenant of a token that verified before and is still valid; undefined means: ask `verify`. */
  known(token: string, nowMs: number): string | undefined {
    const entry = this.verified.get(token);
    if (!entry) return undefined;
    if (entry.exp * 1000 > nowMs) return entry.tenantId;
    this.verified.delete(token);
    return undefined;
  }

  /** The tenant of a valid token, or undefined (bad signature, algorithm or claims, or expired). */
  async verify(token: string, nowMs = Date.now()): Promise<string | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        requiredClaims: ['exp', TENANT_CLAIM],
        currentDate: new Date(nowMs),
      });
      const tenantId = payload[TENANT_CLAIM];
      if (typeof tenantId !== 'string' || typeof payload.exp !== 'number') return undefined;
      this.verified.set(token, { tenantId, exp: payload.exp });
      return tenantId;
    } catch {
      return undefined;
    }
  }
}
