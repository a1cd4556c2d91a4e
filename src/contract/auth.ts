import { z } from 'zod';

/** Lifetimes of tokens issued over HTTP, in seconds. */
export const DEFAULT_TOKEN_TTL_S = 3600;
export const MAX_TOKEN_TTL_S = 86_400;

/** `POST /auth/token`: a bearer token (JWT) for the API key's tenant. */
export const TOKEN_BODY = z
  .strictObject({
    ttlSeconds: z.number().int().min(1).max(MAX_TOKEN_TTL_S).default(DEFAULT_TOKEN_TTL_S),
  })
  .default({ ttlSeconds: DEFAULT_TOKEN_TTL_S });

export const TOKEN_RESULT = z.object({ token: z.string(), expiresAt: z.string() });
