import { z } from 'zod';
import { validateExpression } from '../nextql/index.js';

type ExpressionKind = 'filter' | 'booster' | 'segmentation';

/**
 * A nextQL expression field. Parse and type errors surface as a zod issue with code `custom` and
 * `params.nextql` set, which the error handler turns into 400 INVALID_EXPRESSION with the position.
 */
export function expression(kind: ExpressionKind) {
  return z
    .string()
    .max(10_000)
    .superRefine((text, context) => {
      const result = validateExpression(text, kind);
      if (!result.valid) {
        context.addIssue({ code: 'custom', message: result.error.message, params: { nextql: result.error } });
      }
    });
}
