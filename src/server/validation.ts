import type { FastifySchemaCompiler } from 'fastify';
import type { z } from 'zod';
import { RememberedBody } from './repeated-bodies.js';

/** Carries zod's issues to the error handler, which turns them into the contract's `details`. */
export class SchemaValidationError extends Error {
  validationContext?: string;
  constructor(readonly issues: z.core.$ZodIssue[]) {
    super('schema validation failed');
    this.name = 'SchemaValidationError';
  }
}

export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema }) => {
  const validate = (data: unknown) => {
    const result = schema.safeParse(data);
    return result.success
      ? { value: result.data }
      : { error: new SchemaValidationError(result.error.issues) };
  };
  // A POST without a body reaches validation as null: a schema with an optional body takes it as none.
  return (data: unknown) =>
    data instanceof RememberedBody ? data.validate(schema, validate) : validate(data ?? undefined);
};
