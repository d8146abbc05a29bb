/**
 * Request validation with TypeBox's compiler instead of Fastify's default Ajv set-up, whose
 * defaults (`removeAdditional: true`, `coerceTypes: 'array'`) would silently strip unknown body
 * fields and turn `"true"` into `true`. Here a body is checked exactly as sent: no field is removed,
 * no type is coerced, no default is filled in. Query strings and path parameters arrive as text,
 * so only there are numbers and booleans read from their strict decimal / `true`/`false` spelling
 * (`"1.5"`, `"1e3"`, `" 2"` stay text and fail as not whole numbers) and defaults applied.
 */
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';

const DECIMAL_INTEGER = /^-?(0|[1-9]\d{0,14})$/;
const DECIMAL_NUMBER = /^-?(0|[1-9]\d{0,14})(\.\d{1,15})?$/;

/** The JSON Schema `type` of a property schema, where it has exactly one. */
function typeOf(schema: unknown): string | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  const type = (schema as { type?: unknown }).type;
  return typeof type === 'string' ? type : undefined;
}

/** Reads numbers and booleans of a flat object of strings (a query string or path parameters). */
function convertText(schema: TSchema, value: unknown): unknown {
  const properties = (schema as { properties?: Record<string, unknown> }).properties;
  if (!properties || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const [name, propertySchema] of Object.entries(properties)) {
    const text = out[name];
    if (typeof text !== 'string') continue;
    const type = typeOf(propertySchema);
    if (type === 'integer' && DECIMAL_INTEGER.test(text)) out[name] = Number(text);
    else if (type === 'number' && DECIMAL_NUMBER.test(text)) out[name] = Number(text);
    else if (type === 'boolean' && (text === 'true' || text === 'false')) out[name] = text === 'true';
  }
  return out;
}

/** The validator compiler of the app: strict for bodies, text-reading for the other parts. */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const validator = Compile(schema);
  const readsText = httpPart === 'querystring' || httpPart === 'params' || httpPart === 'headers';
  return (input: unknown): { value?: unknown; error?: FastifySchemaValidationError[] } => {
    const candidate = readsText ? Value.Default(schema, convertText(schema, input)) : input;
    if (validator.Check(candidate)) return { value: candidate };
    // TypeBox reports errors in Ajv's shape (keyword, instancePath, params, message).
    return { error: [...validator.Errors(candidate)] as unknown as FastifySchemaValidationError[] };
  };
};

/** Deepest nesting of arrays and objects a JSON body may have (a template's content included). */
export const MAX_JSON_DEPTH = 64;

/**
 * Why `body` is nested too deep, or null. Walks with an explicit stack (no recursion), and stops at
 * the first value past the limit. `{}` and `[]` are depth 1.
 */
export function jsonDepthProblem(body: unknown, limit: number = MAX_JSON_DEPTH): string | null {
  const stack: { value: unknown; depth: number }[] = [{ value: body, depth: 0 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, depth } = item;
    if (value === null || typeof value !== 'object') continue;
    if (depth + 1 > limit) {
      return `The body nests arrays and objects more than ${limit} levels deep; at most ${limit} levels are accepted. Flatten the deepest part (e.g. of content).`;
    }
    for (const inner of Array.isArray(value) ? value : Object.values(value as Record<string, unknown>)) stack.push({ value: inner, depth: depth + 1 });
  }
  return null;
}
