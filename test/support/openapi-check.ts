import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * Checks a real answer of a daemon against the OpenAPI document it serves (docs/guide.md, "The HTTP API"): the
 * status must be one the document lists for the operation, and the body must match its schema. Every
 * integration test's `call` goes through it, so the document cannot drift from what the daemon does.
 */

interface Operation {
  method: string;
  template: string;
  pattern: RegExp;
  params: number;
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
}

interface DocumentCheck {
  operations: Operation[];
}

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
const validators = new WeakMap<object, ValidateFunction>();

/** Why a value (an answer, or an example) does not match a schema of the document; undefined if it does. */
export function mismatch(schema: object, value: unknown): string | undefined {
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = ajv.compile(schema)));
  return validate(value) ? undefined : ajv.errorsText(validate.errors);
}

const checks = new Map<string, Promise<DocumentCheck | undefined>>();

async function load(base: string): Promise<DocumentCheck | undefined> {
  const response = await fetch(`${base}/openapi.json`);
  // The embeddings helper serves no document: nothing to check its answers against.
  if (response.status === 404) return undefined;
  if (response.status !== 200) throw new Error(`GET /openapi.json answered ${response.status}`);
  const document = (await response.json()) as {
    paths: Record<string, Record<string, Operation['responses']>>;
  };
  const operations: Operation[] = [];
  for (const [template, methods] of Object.entries(document.paths)) {
    const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
    for (const [method, operation] of Object.entries(methods)) {
      operations.push({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${source}$`),
        params: (template.match(/\{/g) ?? []).length,
        responses: (operation as { responses: Operation['responses'] }).responses,
      });
    }
  }
  // The most specific template first: `/recommendations/search` before `/recommendations/{x}`.
  operations.sort((a, b) => a.params - b.params);
  return { operations };
}

export async function checkAgainstDocument(
  base: string,
  method: string,
  target: string,
  status: number,
  body: unknown,
): Promise<void> {
  let check = checks.get(base);
  if (!check) checks.set(base, (check = load(base)));
  const loaded = await check;
  if (!loaded) return;
  const { operations } = loaded;
  const path = new URL(target, base).pathname;
  const operation = operations.find((op) => op.method === method && op.pattern.test(path));
  if (!operation) return;
  const where = `${method} ${path} (${operation.method} ${operation.template})`;
  const response = operation.responses[String(status)];
  if (!response) {
    throw new Error(
      `${where} answered ${status}, which the OpenAPI document does not list (it lists ${Object.keys(operation.responses).join(', ')}): ${JSON.stringify(body)}`,
    );
  }
  const schema = response.content?.['application/json']?.schema;
  if (!schema) {
    const describesText = Object.keys(response.content ?? {}).some((type) => type.startsWith('text/'));
    if (body !== undefined && !(describesText && typeof body === 'string'))
      throw new Error(`${where} answered ${status} with a body the document does not describe`);
    return;
  }
  const problem = mismatch(schema, body);
  if (problem) {
    throw new Error(
      `${where} answered ${status} with a body the OpenAPI document does not allow: ${problem}\n${JSON.stringify(body).slice(0, 2000)}`,
    );
  }
}
