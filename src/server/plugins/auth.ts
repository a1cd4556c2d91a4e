import type { KeyObject } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  PUBLIC_TOKEN_PARAM,
  SIGN_PARAM,
  TIMESTAMP_PARAM,
  isQuerySigned,
  stringToSign,
} from '../../client/signing.js';
import { ApiError } from '../../contract/errors.js';
import type { TenantState } from '../../state/tenant-state.js';
import { deriveToken, type CredentialKind } from '../../tenants/credentials.js';
import { TokenVerifier } from '../../tenants/jwt.js';
import { secretsEqual } from '../../tenants/secrets.js';
import {
  ReplayGuard,
  VerifiedGets,
  checkSignature,
  checkTimestamp,
  signatureParams,
  signingKey,
  type SignatureParams,
} from '../../tenants/signatures.js';
import { batchOf } from '../batch-requests.js';
import { isWarmUp } from '../warm-up-request.js';
import { RateLimits } from './rate-limits.js';

/**
 * Who may call a route: nobody needs credentials (`public`), only the operator key (`operator`), or a
 * credential of the tenant named by X-Tenant-Id (`tenant`, the default).
 */
export type RouteAccess = 'public' | 'operator' | 'tenant';

/** How a caller proved who it is: a stored credential kind, or a bearer token (JWT). */
export type CallerKind = CredentialKind | 'jwt';

/** Which credential kinds may call a tenant route (docs/guide.md, "Credentials"). */
export const SCOPE = {
  /** Every tenant route by default: all but the public token. */
  tenant: ['api', 'private', 'jwt'],
  /** Recommendation and search routes, which browsers call with the public token. */
  browser: ['api', 'private', 'public', 'jwt'],
  /** Tenant administration (`PUT /catalog/tenant-settings`). */
  admin: ['api', 'jwt'],
  /** User export and delete, token issuance. */
  apiKey: ['api'],
} as const satisfies Record<string, readonly CallerKind[]>;

/** How each credential is named and sent, for errors that say which may call a route. */
const CREDENTIAL_NAMES: Record<CallerKind, string> = {
  api: 'the API key (X-Api-Key)',
  private: 'a private token (signed request)',
  public: 'the public token (signed request)',
  jwt: 'a JWT (Authorization: Bearer)',
};

export interface Caller {
  tenantId: string;
  kind: CallerKind;
}

/** A signed request whose body the signature also covers: verified once the body has been read. */
interface PendingSignature {
  params: SignatureParams;
  tenantId: string;
  key: KeyObject;
  kind: 'private' | 'public';
  /** The tenant the key belongs to (a public token names its own). */
  keyTenant: string;
  body: string;
  /** A body that did not parse: reported only after the signature (CONTRACT.md, request order). */
  parseError?: Error;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
    /** Credential kinds allowed (default SCOPE.tenant). */
    kinds?: readonly CallerKind[];
  }
  interface FastifyRequest {
    tenant: TenantState;
    caller: Caller;
    /** Set while a signed request waits for its body. */
    pendingSignature: PendingSignature | null;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function bearer(request: FastifyRequest): string | undefined {
  const value = header(request, 'authorization');
  if (!value) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(value);
  if (!match) throw new ApiError('UNAUTHORIZED', 'the Authorization header must be "Bearer <token>"');
  return match[1];
}

type Done = (error?: Error) => void;

const MAX_SIGNING_KEYS = 10_000;

/**
 * Authentication in the contract's order: X-Tenant-Id (400) → a credential that verifies (401) → a
 * credential of that tenant (403 FORBIDDEN_TENANT, the same for unknown tenants) → its scope (403) → the
 * tenant's rate limit for it (429). A signed request with a body finishes the checks once the body is read
 * (preValidation), still before the body is validated.
 */
export const authPlugin = fp(async (app: FastifyInstance, options: { operatorKey: string }) => {
  const runtime = app.runtime;
  const tokens = new TokenVerifier(runtime.jwtSecret);
  const replays = new ReplayGuard();
  const rateLimits = new RateLimits(app);
  /** Private tokens by tenant and salt: derived once, and never stale since rotation changes the salt. */
  const privateTokens = new Map<string, string>();
  /** Tokens as HMAC keys, by token; bounded, since tokens come and go with rotation. */
  const signingKeys = new Map<string, KeyObject>();
  const verifiedGets = new VerifiedGets();

  app.decorateRequest('tenant', null as unknown as TenantState);
  app.decorateRequest('caller', null as unknown as Caller);
  app.decorateRequest('pendingSignature', null);

  // Callback style: an async hook would cost a promise on every request.
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      if (request.is404) return done();
      const access = request.routeOptions.config.access ?? 'tenant';
      if (access === 'public') return done();
      if (access === 'operator') return operator(request, done);
      tenantCredential(request, done);
    } catch (error) {
      done(error as Error);
    }
  });

  app.addHook('preValidation', (request, _reply, done) => {
    const pending = request.pendingSignature;
    if (!pending) return done();
    try {
      request.pendingSignature = null;
      const { params } = pending;
      const target = stringToSign(request.method, request.url, params.timestamp, pending.body);
      checkSignature(pending.key, target, params.sign);
      replays.use(`${pending.keyTenant}\u0000${params.sign}`, params.timestamp, Date.now());
      admit(request, pending.tenantId, pending.keyTenant, pending.kind);
      if (pending.parseError) throw pending.parseError;
      done();
    } catch (error) {
      done(error as Error);
    }
  });

  app.addHook('preHandler', (request, reply, done) => limit(request, reply, done));

  function operator(request: FastifyRequest, done: Done): void {
    // A batch's requests are its tenant's (docs/guide.md, "Batches").
    if (batchOf(request)) throw notOperator();
    const apiKey = header(request, 'x-api-key');
    if (apiKey) {
      if (secretsEqual(apiKey, options.operatorKey)) return done();
      if (runtime.credentials.verify(apiKey)) throw notOperator();
      throw new ApiError('UNAUTHORIZED', 'invalid credentials');
    }
    const token = bearer(request);
    if (!token) {
      // A valid signature of a tenant's token is a tenant credential, refused in `admit` like the others.
      const tenantId = header(request, 'x-tenant-id');
      const params = signatureParams(
        request.method,
        request.query as Record<string, unknown>,
        request.headers,
      );
      if (!tenantId || !params)
        throw new ApiError('UNAUTHORIZED', 'the operator key is required (X-Api-Key)');
      signed(request, tenantId, params);
      return done();
    }
    tokens
      .verify(token)
      .then(
        (tenantId) =>
          done(tenantId ? notOperator() : new ApiError('UNAUTHORIZED', 'invalid or expired token')),
        done,
      );
  }

  function tenantCredential(request: FastifyRequest, done: Done): void {
    const tenantId = header(request, 'x-tenant-id');
    if (!tenantId) throw new ApiError('TENANT_REQUIRED', 'the X-Tenant-Id header is required');
    // A request of a batch is admitted as the batch was, and checked against its scope (docs/guide.md, "Batches").
    const batch = batchOf(request);
    if (batch) {
      admit(request, tenantId, batch.caller.tenantId, batch.caller.kind);
      return done();
    }
    const apiKey = header(request, 'x-api-key');
    if (apiKey) {
      const credential = runtime.credentials.verify(apiKey);
      if (!credential && secretsEqual(apiKey, options.operatorKey)) {
        throw new ApiError(
          'UNAUTHORIZED',
          "the operator key is not a tenant credential: this route takes the tenant's API key, a signed request or a bearer token",
        );
      }
      if (!credential) throw new ApiError('UNAUTHORIZED', 'invalid credentials');
      if (credential.kind !== 'api') {
        throw new ApiError('UNAUTHORIZED', 'tokens are not sent as X-Api-Key: sign the request with them');
      }
      admit(request, tenantId, credential.tenantId, 'api');
      return done();
    }
    const token = bearer(request);
    if (token) {
      const now = Date.now();
      const known = tokens.known(token, now);
      if (known !== undefined) {
        admit(request, tenantId, known, 'jwt');
        return done();
      }
      tokens.verify(token, now).then((verified) => {
        try {
          if (verified === undefined) throw new ApiError('UNAUTHORIZED', 'invalid or expired token');
          admit(request, tenantId, verified, 'jwt');
          done();
        } catch (error) {
          done(error as Error);
        }
      }, done);
      return;
    }
    const params = signatureParams(request.method, request.query as Record<string, unknown>, request.headers);
    if (!params) {
      // The daemon's warm-up, sent by itself (never read from a socket), is its tenant's.
      if (isWarmUp(request)) {
        admit(request, tenantId, tenantId, 'api');
        return done();
      }
      throw new ApiError('UNAUTHORIZED', 'credentials are required (X-Api-Key, a signature or a token)');
    }
    signed(request, tenantId, params);
    done();
  }

  /** Checks a signed request as far as it can before the body; a query-signed one completely. */
  function signed(request: FastifyRequest, tenantId: string, params: SignatureParams): void {
    let token: string;
    let keyTenant: string;
    let kind: 'private' | 'public';
    if (params.publicToken !== undefined) {
      const credential = runtime.credentials.verify(params.publicToken);
      if (!credential || credential.kind !== 'public')
        throw new ApiError('UNAUTHORIZED', 'unknown publicToken');
      token = params.publicToken;
      keyTenant = credential.tenantId;
      kind = 'public';
    } else {
      // The private token of the tenant named; an unknown tenant has none, like a wrong signature.
      const record = runtime.state.get(tenantId) && runtime.credentials.get(tenantId, 'private');
      if (!record) throw new ApiError('SIGNATURE_INVALID', 'the signature does not match the request');
      const cacheKey = `${tenantId}\u0000${record.salt}`;
      let derived = privateTokens.get(cacheKey);
      if (derived === undefined) {
        derived = deriveToken(tenantId, 'private', record.salt, runtime.serverSecret);
        privateTokens.set(cacheKey, derived);
      }
      token = derived;
      keyTenant = tenantId;
      kind = 'private';
    }
    checkTimestamp(params.timestamp, Date.now());
    // The signing parameters are authentication's: route schemas never see them (the signature covers
    // the raw target, not this parsed copy).
    const query = request.query as Record<string, unknown>;
    delete query[SIGN_PARAM];
    delete query[TIMESTAMP_PARAM];
    delete query[PUBLIC_TOKEN_PARAM];
    let key = signingKeys.get(token);
    if (key === undefined) {
      if (signingKeys.size >= MAX_SIGNING_KEYS) signingKeys.clear();
      key = signingKey(token);
      signingKeys.set(token, key);
    }
    if (isQuerySigned(request.method)) {
      if (!verifiedGets.has(params.sign, token, request.url)) {
        checkSignature(key, stringToSign(request.method, request.url, params.timestamp, ''), params.sign);
        verifiedGets.add(params.sign, token, request.url);
      }
      admit(request, tenantId, keyTenant, kind);
      return;
    }
    request.pendingSignature = { params, tenantId, key, kind, keyTenant, body: '' };
  }

  /** The 403s, once the credential is known to be valid: its tenant, then its scope. */
  function admit(
    request: FastifyRequest,
    tenantId: string,
    credentialTenant: string,
    kind: CallerKind,
  ): void {
    if (request.routeOptions.config.access === 'operator') throw notOperator();
    const tenant = runtime.state.get(tenantId);
    if (credentialTenant !== tenantId || !tenant) {
      throw new ApiError('FORBIDDEN_TENANT', 'the credential is not valid for this tenant');
    }
    const allowed = request.routeOptions.config.kinds ?? SCOPE.tenant;
    if (!allowed.includes(kind)) {
      throw new ApiError(
        'FORBIDDEN_SCOPE',
        `${CREDENTIAL_NAMES[kind]} may not call this route; it takes ${allowed.map((k) => CREDENTIAL_NAMES[k]).join(', ')}`,
      );
    }
    request.tenant = tenant;
    request.caller = { tenantId, kind };
  }

  function limit(request: FastifyRequest, reply: FastifyReply, done: Done): void {
    const caller = request.caller;
    if (!caller) return done();
    const perMinute = request.tenant.rateLimits[caller.kind];
    if (perMinute === undefined || perMinute === null || isWarmUp(request)) return done();
    rateLimits.check(request, reply).then(() => done(), done);
  }
});

function notOperator(): ApiError {
  return new ApiError(
    'FORBIDDEN_SCOPE',
    'this route takes only the operator key (X-Api-Key), not a tenant credential',
  );
}

/** Where a signed request's raw body goes as it is read (json-body plugin). */
export function holdSignedBody(request: FastifyRequest, text: string): void {
  if (request.pendingSignature) request.pendingSignature.body = text;
}

/** A signed request's body that does not parse: reported once the signature was checked. */
export function deferParseError(request: FastifyRequest, error: Error): void {
  if (request.pendingSignature) request.pendingSignature.parseError = error;
}
