import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { INTERACTIONS_BODY } from '../contract/ingestion.js';
import { checkInteractionsBody } from '../contract/interactions-check.js';
import { RememberedBody } from './repeated-bodies.js';

/** Carries zod's issues to the error handler, which turns them into the contract's `details`. */
export class SchemaValidationError extends Error {
  validationContext?: string;
  constructor(readonly issues: z.core.$ZodIssue[]) {
    super('schema validation failed');
    this.name = 'SchemaValidationError';
  }
}

/**
 * Hand-written checks of the hottest bodies: each accepts only what its schema accepts and answers what the
 * schema would, else gives up (undefined) and the schema decides, so errors are always the schema's.
 */
const FAST_CHECKS = new Map<z.ZodType, (data: unknown) => unknown>([
  [INTERACTIONS_BODY, checkInteractionsBody],
]);

export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema }) => {
  const fastCheck = FAST_CHECKS.get(schema);
  const validate = (data: unknown) => {
    const checked = fastCheck?.(data);
    if (checked !== undefined) return { value: checked };
    const result = schema.safeParse(data);
    return result.success
      ? { value: result.data }
      : { error: new SchemaValidationError(result.error.issues) };
  };
  // A POST without a body reaches validation as null: a schema with an optional body takes it as none.
  return (data: unknown) =>
    data instanceof RememberedBody ? data.validate(schema, validate) : validate(data ?? undefined);
};
