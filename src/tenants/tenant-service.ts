import { ApiError } from '../contract/errors.js';
import type { TenantCredentials } from '../contract/tenants.js';
import type { Store } from '../store/store.js';
import type { TenantOp } from '../store/api/tenants.js';
import type { ServingState } from '../state/tenant-state.js';
import {
  CREDENTIAL_KINDS,
  issueCredential,
  type CredentialKind,
  type CredentialRecord,
  type CredentialRegistry,
} from './credentials.js';

/** What creating tenants and rotating their credentials needs of the runtime (src/runtime.ts). */
export interface TenantWrites {
  readonly store: Store;
  readonly state: ServingState;
  readonly credentials: CredentialRegistry;
  readonly serverSecret: string;
}

function saveCredential(record: CredentialRecord, now: number): TenantOp {
  return { area: 'tenants', op: 'saveCredential', ...record, updatedAt: now };
}

const SECRET_FIELD: Record<CredentialKind, 'apiKey' | 'privateToken' | 'publicToken'> = {
  api: 'apiKey',
  private: 'privateToken',
  public: 'publicToken',
};

/** Creates a tenant with its three credentials; the secrets are returned once and only hashes are kept. */
export function createTenant(runtime: TenantWrites, tenantId: string): Promise<TenantCredentials> {
  return runtime.store.writes.submit((rows, scratch) => {
    const claim = `tenant\u0000${tenantId}`;
    if (runtime.state.get(tenantId) || scratch.has(claim)) {
      throw new ApiError('CONFLICT', `tenant '${tenantId}' already exists`);
    }
    scratch.set(claim, true);
    const now = Date.now();
    rows.ops.push({ area: 'tenants', op: 'create', tenantId, createdAt: now });
    const issued = CREDENTIAL_KINDS.map((kind) => issueCredential(tenantId, kind, runtime.serverSecret));
    for (const { record } of issued) rows.ops.push(saveCredential(record, now));
    return () => {
      runtime.state.add(tenantId);
      const credentials = { tenantId } as TenantCredentials;
      for (const { secret, record } of issued) {
        runtime.credentials.set(record);
        credentials[SECRET_FIELD[record.kind]] = secret;
      }
      return credentials;
    };
  });
}

/** Replaces one credential; the old secret stops working when the new one is committed. */
export function rotateCredential(
  runtime: TenantWrites,
  tenantId: string,
  kind: CredentialKind,
): Promise<Partial<TenantCredentials> & { tenantId: string }> {
  return runtime.store.writes.submit((rows) => {
    if (!runtime.state.get(tenantId)) throw new ApiError('NOT_FOUND', `tenant '${tenantId}' does not exist`);
    const { secret, record } = issueCredential(tenantId, kind, runtime.serverSecret);
    rows.ops.push(saveCredential(record, Date.now()));
    return () => {
      runtime.credentials.set(record);
      return { tenantId, [SECRET_FIELD[kind]]: secret };
    };
  });
}
