import type { ExpressionKind } from './ast.js';
import { NextqlError, type NextqlErrorDetail } from './errors.js';
import { parse } from './parse.js';

export type ValidationResult =
  { readonly valid: true } | { readonly valid: false; readonly error: NextqlErrorDetail };

/** The body of `POST /segmentations/validate-expression`. */
export function validateExpression(text: string, kind: ExpressionKind): ValidationResult {
  try {
    parse(text, kind);
    return { valid: true };
  } catch (error) {
    if (error instanceof NextqlError) return { valid: false, error: error.toDetail() };
    throw error;
  }
}
