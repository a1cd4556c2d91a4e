import { createHmac, randomBytes } from 'node:crypto';
import { randomSecret, sha256 } from './secrets.js';

export const CREDENTIAL_KINDS = ['api', 'private', 'public'] as const;
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

const PREFIX: Record<CredentialKind, string> = { api: 'nrk_', private: 'nrp_', public: 'nrpub_' };

/** What the store keeps of a credential: never the API key itself. */
export interface CredentialRecord {
  tenantId: string;
  kind: CredentialKind;
  secretHash: string;
  salt: string;
}

/**
 * HMAC tokens must be recomputable by the server to verify signatures, so they are derived from the
 * server secret and a stored salt instead of being stored. API keys are random and kept only as a hash.
 */
export function issueCredential(
  tenantId: string,
  kind: CredentialKind,
  serverSecret: string,
): { secret: string; record: CredentialRecord } {
  const salt = kind === 'api' ? '' : randomBytes(12).toString('hex');
  const secret = kind === 'api' ? randomSecret(PREFIX.api) : deriveToken(tenantId, kind, salt, serverSecret);
  return { secret, record: { tenantId, kind, secretHash: sha256(secret), salt } };
}

export function deriveToken(
  tenantId: string,
  kind: CredentialKind,
  salt: string,
  serverSecret: string,
): string {
  const mac = createHmac('sha256', serverSecret).update(`${tenantId}:${kind}:${salt}`).digest('base64url');
  return `${PREFIX[kind]}${mac}`;
}

const MAX_VERIFIED = 10_000;

/** In-memory lookup from a presented secret to its tenant and kind. */
export class CredentialRegistry {
  private readonly byHash = new Map<string, CredentialRecord>();
  private readonly byTenantKind = new Map<string, CredentialRecord>();
  /** Secrets seen to verify, so a client's every request does not hash its key again. */
  private readonly verified = new Map<string, CredentialRecord>();

  set(record: CredentialRecord): void {
    const key = `${record.tenantId}:${record.kind}`;
    const previous = this.byTenantKind.get(key);
    if (previous) this.byHash.delete(previous.secretHash);
    this.byTenantKind.set(key, record);
    this.byHash.set(record.secretHash, record);
    // A rotated secret must stop working at once.
    this.verified.clear();
  }

  /** The credential a presented secret belongs to, if any. Lookup by hash needs no constant-time compare. */
  verify(secret: string): CredentialRecord | undefined {
    const known = this.verified.get(secret);
    if (known) return known;
    const record = this.byHash.get(sha256(secret));
    // Only valid secrets are remembered, so unknown ones cannot crowd the map; it is bounded all the same.
    if (record) {
      if (this.verified.size >= MAX_VERIFIED) this.verified.clear();
      this.verified.set(secret, record);
    }
    return record;
  }

  get(tenantId: string, kind: CredentialKind): CredentialRecord | undefined {
    return this.byTenantKind.get(`${tenantId}:${kind}`);
  }
}
