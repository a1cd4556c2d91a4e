import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../contract/errors.js';
import type { TenantState } from '../../state/tenant-state.js';
import type { CredentialKind } from '../../tenants/credentials.js';
import { secretsEqual } from '../../tenants/secrets.js';

/**
 * Who may call a route: nobody needs credentials (`public`), only the operator key (`operator`), or a
 * credential of the tenant named by X-Tenant-Id (`tenant`, the default).
 */
export type RouteAccess = 'public' | 'operator' | 'tenant';

export interface Caller {
  tenantId: string;
  kind: CredentialKind;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** Credential kinds allowed beyond the default (the API key may call every tenant route). */
    kinds?: CredentialKind[];
  }
  interface FastifyRequest {
    tenant: TenantState;
    caller: Caller;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/**
 * Authentication in the contract's order: X-Tenant-Id (400) → a credential that verifies (401) →
 * a credential of that tenant (403 FORBIDDEN_TENANT, the same for unknown tenants) → its scope (403).
 */
export const authPlugin = fp(async (app: FastifyInstance, options: { operatorKey: string }) => {
  app.decorateRequest('tenant', null as unknown as TenantState);
  app.decorateRequest('caller', null as unknown as Caller);

  // Callback style: an async hook would cost a promise on every request.
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      authenticate(request);
      done();
    } catch (error) {
      done(error as Error);
    }
  });

  function authenticate(request: FastifyRequest): void {
    if (request.is404) return;
    const access = request.routeOptions.config.access ?? 'tenant';
    if (access === 'public') return;
    const apiKey = header(request, 'x-api-key');

    if (access === 'operator') {
      if (!apiKey) throw new ApiError('UNAUTHORIZED', 'the operator key is required (X-Api-Key)');
      if (secretsEqual(apiKey, options.operatorKey)) return;
      if (app.runtime.credentials.verify(apiKey)) {
        throw new ApiError('FORBIDDEN_SCOPE', 'this route needs the operator key, not a tenant credential');
      }
      throw new ApiError('UNAUTHORIZED', 'invalid credentials');
    }

    const tenantId = header(request, 'x-tenant-id');
    if (!tenantId) throw new ApiError('TENANT_REQUIRED', 'the X-Tenant-Id header is required');
    if (!apiKey) throw new ApiError('UNAUTHORIZED', 'credentials are required (X-Api-Key)');
    const credential = app.runtime.credentials.verify(apiKey);
    if (!credential) throw new ApiError('UNAUTHORIZED', 'invalid credentials');
    const tenant = app.runtime.state.get(tenantId);
    if (credential.tenantId !== tenantId || !tenant) {
      throw new ApiError('FORBIDDEN_TENANT', 'the credential is not valid for this tenant');
    }
    const allowed = request.routeOptions.config.kinds ?? ['api'];
    if (!allowed.includes(credential.kind)) {
      throw new ApiError('FORBIDDEN_SCOPE', 'this credential may not call this route');
    }
    request.tenant = tenant;
    request.caller = { tenantId, kind: credential.kind };
  }
});
