import type { z } from 'zod';
import { ApiError, type ErrorCode } from '../contract/errors.js';
import { deleteConfigDocument, saveConfigDocument } from '../store/api/config.js';
import type { Store } from '../store/store.js';
import type { VectorConfigField } from '../store/lake-export.js';
import type { RowBuffer } from '../store/rows.js';
import type { ConfigCollection, ConfigDocument } from '../state/tenant-config.js';
import type { TenantState } from '../state/tenant-state.js';

/** What a write of configuration documents needs of the runtime (src/runtime.ts): its store. */
export interface ConfigWrites {
  readonly store: Store;
}

export interface ConfigDocumentsOptions<K extends string, T extends ConfigDocument & Record<K, string>> {
  /** The `config_documents.kind` of the rows, also the resource's name in messages. */
  kind: string;
  /** The field that names a document (its `config_documents.key`). */
  keyField: K;
  schema: z.ZodType<T>;
  /** Where the tenant's documents of this kind live in memory (`TenantConfig`). */
  collection: ConfigCollection;
  /** The 404 code of an unknown key (CONTRACT.md names one for scenarios); NOT_FOUND by default. */
  notFoundCode?: ErrorCode;
  /** Checks beyond the schema, before a document is stored: throws the 400 of a document that fails. */
  check?: (document: T) => void;
  /** The field of the vectors job's configuration the documents fill, when the job reads them. */
  vectorConfig?: VectorConfigField;
}

/**
 * One kind of configuration resource: zod-parsed documents kept in memory and stored as
 * `config_documents` rows. Whether a key exists is decided inside the write, against memory and
 * the changes already staged in the same flush, so concurrent requests on one key act one after another.
 */
export class ConfigDocuments<K extends string, T extends ConfigDocument & Record<K, string>> {
  readonly kind: string;
  readonly keyField: K;
  readonly schema: z.ZodType<T>;
  readonly vectorConfig?: VectorConfigField;
  private readonly collection: ConfigCollection;
  private readonly notFoundCode: ErrorCode;
  private readonly check: (document: T) => void;

  constructor(options: ConfigDocumentsOptions<K, T>) {
    this.kind = options.kind;
    this.keyField = options.keyField;
    this.schema = options.schema;
    this.collection = options.collection;
    this.notFoundCode = options.notFoundCode ?? 'NOT_FOUND';
    this.check = options.check ?? (() => undefined);
    if (options.vectorConfig) this.vectorConfig = options.vectorConfig;
  }

  list(tenant: TenantState): T[] {
    return [...this.documents(tenant).entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, document]) => document);
  }

  get(tenant: TenantState, key: string): T {
    const document = this.documents(tenant).get(key);
    if (!document) throw this.notFound(key);
    return document;
  }

  create(runtime: ConfigWrites, tenant: TenantState, document: T): Promise<T> {
    this.check(document);
    const key = document[this.keyField];
    return runtime.store.writes.submit((rows, scratch) => {
      if (this.staged(tenant, scratch, key)) {
        throw new ApiError('CONFLICT', `${this.kind} '${key}' already exists`);
      }
      return this.stage(rows, scratch, tenant, key, document);
    });
  }

  /** Whole replacement: `document` is a full parsed body, so omitted fields already hold their defaults. */
  replace(runtime: ConfigWrites, tenant: TenantState, document: T): Promise<T> {
    this.check(document);
    const key = document[this.keyField];
    return runtime.store.writes.submit((rows, scratch) => {
      if (!this.staged(tenant, scratch, key)) throw this.notFound(key);
      return this.stage(rows, scratch, tenant, key, document);
    });
  }

  remove(runtime: ConfigWrites, tenant: TenantState, key: string): Promise<void> {
    return runtime.store.writes.submit((rows, scratch) => {
      if (!this.staged(tenant, scratch, key)) throw this.notFound(key);
      scratch.set(this.claim(tenant, key), null);
      rows.ops.push(deleteConfigDocument(tenant.tenantId, this.kind, key));
      return () => this.forget(tenant, key);
    });
  }

  /**
   * A PUT body may omit the key, which the path gives; a key it does send must be the path's. Bodies
   * that are not objects pass through for the schema to reject.
   */
  withPathKey(body: unknown, key: string): unknown {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
    const sent = (body as Record<string, unknown>)[this.keyField];
    if (sent === undefined) return { [this.keyField]: key, ...body };
    if (sent !== key) {
      const message = `${this.keyField} must match the path's '${key}' or be omitted`;
      throw new ApiError('INVALID_BODY', `invalid body at ${this.keyField}: ${message}`, [
        { path: this.keyField, message, code: 'custom' },
      ]);
    }
    return body;
  }

  /** Puts a stored document back in memory at start; one the schema no longer accepts is left out. */
  restore(tenant: TenantState, stored: unknown): void {
    const parsed = this.schema.safeParse(stored);
    if (parsed.success) tenant.putConfigDocument(this.collection, parsed.data[this.keyField], parsed.data);
  }

  /** The document of the key is removed from memory (here, or by another daemon it follows). */
  forget(tenant: TenantState, key: string): void {
    tenant.removeConfigDocument(this.collection, key);
  }

  /** The document as of the writes staged before this one in the flush, else as committed. */
  private staged(tenant: TenantState, scratch: Map<string, unknown>, key: string): T | undefined {
    const claim = this.claim(tenant, key);
    if (scratch.has(claim)) return (scratch.get(claim) as T | null) ?? undefined;
    return this.documents(tenant).get(key);
  }

  private stage(
    rows: RowBuffer,
    scratch: Map<string, unknown>,
    tenant: TenantState,
    key: string,
    document: T,
  ): () => T {
    scratch.set(this.claim(tenant, key), document);
    rows.ops.push(saveConfigDocument(tenant.tenantId, this.kind, key, document));
    return () => {
      tenant.putConfigDocument(this.collection, key, document);
      return document;
    };
  }

  private documents(tenant: TenantState): Map<string, T> {
    return tenant.config[this.collection] as unknown as Map<string, T>;
  }

  private claim(tenant: TenantState, key: string): string {
    return `config\u0000${tenant.tenantId}\u0000${this.kind}\u0000${key}`;
  }

  private notFound(key: string): ApiError {
    return new ApiError(this.notFoundCode, `${this.kind} '${key}' does not exist`);
  }
}
