/**
 * Plain-English descriptions of JSON Schema validation errors (the ajv-shaped errors TypeBox
 * reports), naming the field and the bound: "body.domain must be at most 255 characters long (it
 * has 256)". Used for the HTTP 400 messages and for seed file errors.
 */

/** The fields of a validation error this module reads (TypeBox and ajv both produce them). */
export interface SchemaErrorLike {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** At most this many problems are described; the rest are counted. */
export const MAX_DESCRIBED_PROBLEMS = 5;

/**
 * One sentence per field in error, in the order the validator reported them. `root` is the value
 * that was validated (to quote lengths and values); `label` names it (`body`, `query`, a file path).
 */
export function describeSchemaErrors(errors: readonly SchemaErrorLike[], root: unknown, label: string): string[] {
  const groups = new Map<string, SchemaErrorLike[]>();
  for (const error of errors) {
    const group = groups.get(error.instancePath);
    if (group) group.push(error);
    else groups.set(error.instancePath, [error]);
  }
  const sentences: string[] = [];
  for (const [path, group] of groups) sentences.push(...describeGroup(path, group, root, label));
  return sentences;
}

/** The sentences joined into one message, capped at `MAX_DESCRIBED_PROBLEMS`. */
export function summarizeSchemaErrors(errors: readonly SchemaErrorLike[], root: unknown, label: string): string {
  const sentences = describeSchemaErrors(errors, root, label);
  const shown = sentences.slice(0, MAX_DESCRIBED_PROBLEMS);
  const more = sentences.length - shown.length;
  return shown.join('; ') + (more > 0 ? `; and ${more} more problem(s)` : '') + '.';
}

function describeGroup(path: string, group: SchemaErrorLike[], root: unknown, label: string): string[] {
  const where = fieldName(label, path);
  const value = valueAt(root, path);
  const sentences: string[] = [];
  const additional = group.find((e) => e.keyword === 'additionalProperties');
  if (additional) {
    const names = asStrings(additional.params['additionalProperties']);
    for (const name of names) sentences.push(`${fieldName(label, `${path}/${escapePointer(name)}`)} is not an allowed field`);
  }
  const required = group.find((e) => e.keyword === 'required');
  if (required) {
    const names = asStrings(required.params['requiredProperties'] ?? required.params['missingProperty']);
    for (const name of names) sentences.push(`${fieldName(label, `${path}/${escapePointer(name)}`)} is required`);
  }
  if (group.some((e) => e.keyword === 'anyOf')) {
    const constants = group.filter((e) => e.keyword === 'const').map((e) => e.params['allowedValue']);
    const types = group.filter((e) => e.keyword === 'type').map((e) => String(e.params['type']));
    if (constants.length > 0) sentences.push(`${where} must be one of ${constants.map(quote).join(', ')} (got ${show(value)})`);
    else if (types.length > 0) sentences.push(`${where} must be ${types.map(typeWords).join(' or ')} (got ${show(value)})`);
    else sentences.push(`${where} does not match any of the allowed shapes`);
    return sentences;
  }
  for (const error of group) {
    const sentence = describeOne(error, where, value);
    if (sentence) sentences.push(sentence);
  }
  return sentences;
}

function describeOne(error: SchemaErrorLike, where: string, value: unknown): string | undefined {
  const limit = error.params['limit'];
  switch (error.keyword) {
    case 'additionalProperties':
    case 'required':
      return undefined; // described for the whole group above
    case 'boolean':
      // A `false` schema under `additionalProperties`: the additionalProperties error names it.
      return undefined;
    case 'type':
      return `${where} must be ${typeWords(String(error.params['type']))} (got ${show(value)})`;
    case 'minLength':
      return `${where} must be at least ${String(limit)} character(s) long (it has ${lengthOf(value)})`;
    case 'maxLength':
      return `${where} must be at most ${String(limit)} characters long (it has ${lengthOf(value)})`;
    case 'minimum':
      return `${where} must be at least ${String(limit)} (got ${show(value)})`;
    case 'maximum':
      return `${where} must be at most ${String(limit)} (got ${show(value)})`;
    case 'minItems':
      return `${where} must have at least ${String(limit)} item(s)`;
    case 'maxItems':
      return `${where} must have at most ${String(limit)} items`;
    case 'enum':
      return `${where} must be one of ${asArray(error.params['allowedValues']).map(quote).join(', ')} (got ${show(value)})`;
    case 'const':
      return `${where} must be ${quote(error.params['allowedValue'])} (got ${show(value)})`;
    case 'pattern':
      return `${where} is not in the expected format (got ${show(value)})`;
    case 'format':
      return `${where} must be a valid ${String(error.params['format'])} (got ${show(value)})`;
    default:
      return `${where} ${error.message ?? `fails the "${error.keyword}" rule`}`;
  }
}

/**
 * `body` + `/variables/0/name` → `body.variables[0].name`. With an empty label the JSON Pointer
 * itself is the name (`/organizations/0/id`), as seed file errors show it.
 */
function fieldName(label: string, pointer: string): string {
  if (label === '') return pointer === '' ? 'the document' : pointer;
  if (pointer === '') return label;
  return (
    label +
    pointer
      .split('/')
      .slice(1)
      .map(unescapePointer)
      .map((part) => (/^\d+$/.test(part) ? `[${part}]` : /^[A-Za-z_$][\w$-]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`))
      .join('')
  );
}

function valueAt(root: unknown, pointer: string): unknown {
  let current = root;
  for (const part of pointer.split('/').slice(1).map(unescapePointer)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

const escapePointer = (part: string): string => part.replaceAll('~', '~0').replaceAll('/', '~1');
const unescapePointer = (part: string): string => part.replaceAll('~1', '/').replaceAll('~0', '~');

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};
const typeWords = (type: string): string => TYPE_WORDS[type] ?? type;

/** JSON Schema lengths count Unicode code points, not UTF-16 units. */
const lengthOf = (value: unknown): string => (typeof value === 'string' ? String([...value].length) : '?');

function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return value.length > 40 ? `a string of ${[...value].length} characters` : JSON.stringify(value);
  return String(value);
}

const quote = (value: unknown): string => (typeof value === 'string' ? `'${value}'` : String(value));
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);
const asStrings = (value: unknown): string[] => asArray(value).filter((v): v is string => typeof v === 'string');
