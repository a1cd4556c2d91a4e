/**
 * Every error the HTTP API can answer, with the status it travels under (docs/errors.md). Each is thrown
 * somewhere and documented there (test/unit/contract/error-codes.test.ts).
 */
export const ERROR_STATUS = {
  INVALID_BODY: 400,
  INVALID_QUERY: 400,
  INVALID_EXPRESSION: 400,
  MISSING_SEED: 400,
  TENANT_REQUIRED: 400,
  UNSAFE_PATH: 400,
  TOO_MANY_PATHS: 400,
  URL_TOO_LONG: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  SIGNATURE_INVALID: 401,
  SIGNATURE_EXPIRED: 401,
  SIGNATURE_REPLAYED: 401,
  SIGNATURE_SCOPE: 401,
  FORBIDDEN_TENANT: 403,
  FORBIDDEN_SCOPE: 403,
  SCENARIO_NOT_FOUND: 404,
  ITEM_NOT_FOUND: 404,
  NOT_FOUND: 404,
  RECOMM_NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  BATCH_TOO_LARGE: 413,
  REQUEST_TIMEOUT: 408,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  FEED_FETCH_FAILED: 502,
  OVERLOADED: 503,
  NOT_READY: 503,
  INSUFFICIENT_STORAGE: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

const REASON: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  507: 'Insufficient Storage',
};

export function reasonPhrase(status: number): string {
  return REASON[status] ?? 'Error';
}

export interface ErrorBody {
  statusCode: number;
  error: string;
  code: ErrorCode;
  message: string;
  details?: unknown[];
}

/** An error meant for the client: its code, message and details are safe to show. */
export class ApiError extends Error {
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.statusCode = ERROR_STATUS[code];
  }

  toBody(): ErrorBody {
    const body: ErrorBody = {
      statusCode: this.statusCode,
      error: reasonPhrase(this.statusCode),
      code: this.code,
      message: this.message,
    };
    if (this.details !== undefined) body.details = this.details;
    return body;
  }
}
