import { authHeaders, describeError, parseErrorBody, type Credentials, type ErrorAnswer } from './format.js';

/** An answer other than 2xx, or no answer at all (status 0). Its message is meant for the page. */
export class ApiRequestError extends Error {
  readonly status: number;
  readonly code?: string;
  constructor(answer: ErrorAnswer) {
    super(describeError(answer));
    this.name = 'ApiRequestError';
    this.status = answer.status;
    this.code = answer.code;
  }
}

/**
 * GETs JSON from the dashboard's own origin with the signed-in tenant's credentials. The credentials live
 * in this object only: never in the URL, in storage or in cookies (`credentials: 'omit'`).
 */
export class Api {
  constructor(
    private readonly credentials: Credentials,
    private readonly fetchImpl: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  get tenantId(): string {
    return this.credentials.tenantId;
  }

  async get<T>(path: string, signal?: AbortSignal): Promise<T> {
    let response: Response;
    try {
      response = await this.fetchImpl(path, {
        method: 'GET',
        headers: { Accept: 'application/json', ...authHeaders(this.credentials) },
        credentials: 'omit',
        signal,
      });
    } catch (error) {
      if ((error as Error).name === 'AbortError') throw error;
      throw new ApiRequestError({ status: 0 });
    }
    const text = await response.text();
    if (!response.ok) throw new ApiRequestError(parseErrorBody(response.status, text));
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ApiRequestError({ status: response.status, message: 'the answer is not JSON' });
    }
  }
}
