import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ERROR_STATUS, reasonPhrase, type ErrorCode } from '../../contract/errors.js';
import { VERSION } from '../../version.js';
import { SCOPE, type CallerKind, type RouteAccess } from '../plugins/auth.js';
import { TAGS, type OperationDoc, type Operations } from './operation.js';
import { openapi as metrics } from '../plugins/metrics.openapi.js';
import { openapi as analytics } from '../routes/analytics.openapi.js';
import { openapi as auth } from '../routes/auth.openapi.js';
import { openapi as batch } from '../routes/batch.openapi.js';
import { openapi as catalog } from '../routes/catalog.openapi.js';
import { openapi as experiments } from '../routes/experiments.openapi.js';
import { openapi as feeds } from '../routes/feeds.openapi.js';
import { openapi as health } from '../routes/health.openapi.js';
import { openapi as identity } from '../routes/identity.openapi.js';
import { openapi as ingestion } from '../routes/ingestion.openapi.js';
import { openapi as lake } from '../routes/lake.openapi.js';
import { openapi as memory } from '../routes/memory.openapi.js';
import { openapi as nextPage } from '../routes/next-page.openapi.js';
import { openapi as recommendations } from '../routes/recommendations.openapi.js';
import { openapi as rules } from '../routes/rules.openapi.js';
import { openapi as scenarios } from '../routes/scenarios.openapi.js';
import { openapi as segmentations } from '../routes/segmentations.openapi.js';
import { openapi as tenants } from '../routes/tenants.openapi.js';
import { openapi as vectors } from '../routes/vectors.openapi.js';

/**
 * The OpenAPI document the daemon serves at `/openapi.json` and `/docs` (docs/guide.md, "The HTTP API"): each
 * route's schemas, what its entry in OPERATIONS says of it, the credentials it takes (from its access and
 * kinds, as the auth plugin applies them) and every error status it may answer, with the contract's
 * error body.
 */

/**
 * Every documented operation, by `METHOD /path`: the entries each module of routes keeps beside it (its
 * `openapi` export, in `<module>.openapi.ts`), gathered here. An operation documented twice is a mistake.
 */
export const OPERATIONS: Operations = gather([
  health,
  metrics,
  memory,
  lake,
  tenants,
  ingestion,
  catalog,
  feeds,
  recommendations,
  nextPage,
  batch,
  vectors,
  scenarios,
  rules,
  segmentations,
  experiments,
  identity,
  analytics,
  auth,
]);

function gather(modules: Operations[]): Operations {
  const all: Operations = {};
  for (const operations of modules) {
    for (const [key, doc] of Object.entries(operations)) {
      if (key in all) throw new Error(`the OpenAPI document has two entries for ${key}`);
      all[key] = doc;
    }
  }
  return all;
}

/** The security schemes, one per way of sending a credential (docs/guide.md, "Credentials"). */
const SECURITY_SCHEMES = {
  operatorKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description:
      'The operator key: printed on first start, in `<data-dir>/admin.key`, or `NEXTREC_ADMIN_KEY`.',
  },
  tenantId: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Tenant-Id',
    description:
      'The tenant a tenant credential speaks for: every tenant route takes it beside the credential, the API key, a signed request or a bearer token alike (without it, 400 TENANT_REQUIRED). A bearer token must name the same tenant in its claim `tid` (else 403 FORBIDDEN_TENANT).',
  },
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: "The tenant's API key, from `nextrec tenant create`.",
  },
  privateToken: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Hmac-Sign',
    description:
      'A request signed with the private token: the lowercase hex HMAC-SHA256 of the request, with its signing time in unix seconds. A GET carries both in its query string, `hmac_timestamp` and `hmac_sign` (headers are refused there); other methods send them as the headers X-Hmac-Timestamp and X-Hmac-Sign, or as the same two query parameters. See docs/guide.md, "Signed requests".',
  },
  publicToken: {
    type: 'apiKey',
    in: 'query',
    name: 'publicToken',
    description:
      'The public token in the query of a request signed with it, for browsers, recommendation routes only. A GET carries `hmac_timestamp` and `hmac_sign` in the query beside it; a POST sends them there or as the headers X-Hmac-Timestamp and X-Hmac-Sign.',
  },
  bearerToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A JWT from POST /auth/token or `nextrec token issue`; its claim `tid` names the tenant, which X-Tenant-Id names too.',
  },
} as const;

const REQUIREMENT: Record<CallerKind, Record<string, string[]>> = {
  api: { apiKey: [], tenantId: [] },
  private: { privateToken: [], tenantId: [] },
  public: { publicToken: [], tenantId: [] },
  // X-Tenant-Id is checked before any credential, a bearer token's too (auth plugin).
  jwt: { bearerToken: [], tenantId: [] },
};

/** Who may call a route, as OpenAPI security requirements. */
function securityOf(access: RouteAccess, kinds: readonly CallerKind[]): Record<string, string[]>[] {
  if (access === 'public') return [];
  if (access === 'operator') return [{ operatorKey: [] }];
  return kinds.map((kind) => REQUIREMENT[kind]);
}

/** The contract's error body (CONTRACT.md, "Errors") for one status, its codes listed. */
function errorBody(status: number): z.ZodType {
  const codes = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status);
  return z
    .object({
      statusCode: z.literal(status),
      error: z.string(),
      code: codes.length > 0 ? z.enum(codes as [ErrorCode, ...ErrorCode[]]) : z.string(),
      message: z.string(),
      details: z.unknown().optional(),
    })
    .meta({ description: `${reasonPhrase(status)}${codes.length ? `: ${codes.join(', ')}` : ''}` });
}

interface RouteFacts {
  method: string;
  url: string;
  access: RouteAccess;
  takesInput: boolean;
}

/** The error statuses a route may answer: those of its kind (input, credentials, limits) and its own. */
function errorStatuses(route: RouteFacts, doc: OperationDoc): number[] {
  const statuses = new Set(doc.errors ?? []);
  const writes = route.method === 'POST' || route.method === 'PUT';
  if (route.takesInput || writes || route.access !== 'public') statuses.add(400);
  if (route.access !== 'public') statuses.add(401).add(403);
  if (route.access === 'tenant') statuses.add(429);
  if (route.url.includes(':')) statuses.add(404);
  if (writes) statuses.add(413);
  // NOT_READY while built models load or the daemon stops; OVERLOADED for ingestion over the queue's bound.
  if (route.access !== 'public') statuses.add(503);
  // INSUFFICIENT_STORAGE: a write on a full disk, or a read that must first move the interactions log.
  if (route.access !== 'public') statuses.add(507);
  statuses.add(500);
  return [...statuses].sort((a, b) => a - b);
}

const SUCCESS: Record<number, string> = { 200: 'OK', 201: 'Created', 204: 'No Content' };

type TransformInput = Parameters<typeof jsonSchemaTransform>[0] & {
  route: { method: string | string[]; config?: { access?: RouteAccess; kinds?: readonly CallerKind[] } };
};

/** `@fastify/swagger`'s transform: a route's schemas as JSON Schema, with everything OPERATIONS adds. */
function transform(input: TransformInput): ReturnType<typeof jsonSchemaTransform> {
  const method = [input.route.method].flat()[0];
  const key = `${method} ${input.url}`;
  const doc = OPERATIONS[key];
  const schema = (input.schema ?? {}) as Record<string, unknown> & { response?: Record<string, unknown> };
  if (!doc) {
    if (schema.hide || method === 'HEAD') return jsonSchemaTransform(input);
    throw new Error(
      `the OpenAPI document has no entry for ${key} (an \`openapi\` export beside its route, in <module>.openapi.ts)`,
    );
  }
  const access = input.route.config?.access ?? 'tenant';
  const facts: RouteFacts = {
    method,
    url: input.url,
    access,
    takesInput: Boolean(schema.body ?? schema.querystring ?? schema.params),
  };
  const status = doc.status ?? 200;
  const success =
    (schema.response?.[status] as z.ZodType | undefined) ??
    (doc.body === null ? z.null() : (doc.body ?? z.looseObject({})));
  const response: Record<number, z.ZodType> = {
    [status]: success.meta({ description: SUCCESS[status] ?? reasonPhrase(status) }),
  };
  for (const error of errorStatuses(facts, doc)) response[error] = errorBody(error);
  // A documented route is shown even where it hides itself (health routes).
  const rest = Object.fromEntries(Object.entries(schema).filter(([name]) => name !== 'hide'));
  const converted = jsonSchemaTransform({ ...input, schema: { ...rest, response } });
  // The examples go on the converted schemas, whose `examples` @fastify/swagger moves to the media type:
  // zod's conversion drops examples attached to a body with a transform or a preprocess inside.
  const body = converted.schema.body as Record<string, unknown> | undefined;
  if (body && doc.example !== undefined) converted.schema.body = { ...body, examples: [doc.example] };
  const responses = converted.schema.response as Record<number, unknown>;
  if (doc.mediaType) {
    responses[status] = {
      description: SUCCESS[status],
      content: { [doc.mediaType]: { schema: { type: 'string' }, example: doc.answer } },
    };
  } else if (doc.answer !== undefined) {
    responses[status] = { ...(responses[status] as object), examples: [doc.answer] };
  }
  return {
    ...converted,
    schema: {
      ...converted.schema,
      operationId: doc.id,
      summary: doc.summary,
      description: doc.description,
      tags: [doc.tag],
      security: securityOf(access, input.route.config?.kinds ?? SCOPE.tenant),
    },
  };
}

/** The options of `@fastify/swagger`. */
export const SWAGGER_OPTIONS: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'nextrec',
      version: VERSION,
      description:
        'A multi-tenant recommendation engine: send catalog, users and behaviour events; ask for ranked lists, search, analytics and experiments. Tenant routes take `X-Tenant-Id` with the API key, a signed request (private or public token), or a bearer token; tenant administration takes the operator key.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: 'http://127.0.0.1:8080', description: 'a daemon started with `npm start`' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    components: { securitySchemes: SECURITY_SCHEMES },
  },
  transform: transform as FastifyDynamicSwaggerOptions['transform'],
};
