/** Writes of tenants and their credentials (only a secret's hash and salt are stored), in a flush's ops. */
export type TenantOp =
  | { area: 'tenants'; op: 'create'; tenantId: string; createdAt: number }
  | {
      area: 'tenants';
      op: 'saveCredential';
      tenantId: string;
      /** A credential kind of src/tenants/credentials.ts. */
      kind: string;
      secretHash: string;
      salt: string;
      /** Epoch milliseconds. */
      updatedAt: number;
    };

/** A stored credential: never the secret itself (src/tenants/credentials.ts). */
export interface StoredCredential {
  tenantId: string;
  /** A credential kind of src/tenants/credentials.ts. */
  kind: string;
  secretHash: string;
  salt: string;
}

/** What the daemon reads of tenants and their credentials (at start). */
export interface TenantReads {
  /** Every tenant's id, in id order. */
  ids(): Promise<string[]>;
  /** Every tenant's credentials. */
  credentials(): Promise<StoredCredential[]>;
}
