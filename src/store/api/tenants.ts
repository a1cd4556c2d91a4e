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
