/**
 * The API's spoof check result schema, built from the engine's JSON Schema
 * (`@spoof-checker/engine/schema/spoof-check-result.schema.json`, kept in step with the engine's
 * types by packages/engine/test/schema.test.ts) rather than written by hand a second time: the serializer keeps
 * exactly the fields the schema names, so a field the engine adds (a new section, a new envelope
 * field) reaches API answers as soon as the engine's schema has it, and cannot be silently dropped.
 * `$ref`s into `$defs` are inlined (the OpenAPI document and the serializer read one plain object);
 * `details` stays the open object the API has always documented (its SPF tree is recursive).
 */
import { createRequire } from 'node:module';

/** A JSON Schema node, as read from the engine's file. */
type SchemaNode = { [key: string]: unknown };

/** The engine's result schema, as shipped with the engine package. */
export const ENGINE_RESULT_SCHEMA = createRequire(import.meta.url)('@spoof-checker/engine/schema/spoof-check-result.schema.json') as SchemaNode & {
  properties: Record<string, SchemaNode>;
  $defs: Record<string, SchemaNode>;
};

/** `node` with every `#/$defs/…` reference replaced by a copy of its definition (siblings such as `description` win). */
export function inlineDefinitions(node: unknown, defs: Record<string, SchemaNode>, path: readonly string[] = []): unknown {
  if (Array.isArray(node)) return node.map((item) => inlineDefinitions(item, defs, path));
  if (node === null || typeof node !== 'object') return node;
  const { $ref, ...rest } = node as SchemaNode;
  let out: SchemaNode = {};
  if (typeof $ref === 'string') {
    const name = /^#\/\$defs\/(.+)$/.exec($ref)?.[1];
    const def = name === undefined ? undefined : defs[name];
    if (name === undefined || def === undefined) throw new Error(`The engine's result schema refers to ${$ref}, which it does not define.`);
    if (path.includes(name)) throw new Error(`The engine's result schema is recursive through ${name}: it cannot be inlined there.`);
    out = inlineDefinitions(def, defs, [...path, name]) as SchemaNode;
  }
  for (const [key, value] of Object.entries(rest)) out[key] = inlineDefinitions(value, defs, path);
  return out;
}

/**
 * The response schema of a spoof check result: every property of the engine's schema, inlined,
 * with `details` replaced by `details` (the API's open object, which keeps every fact).
 */
export function resultSchemaFromEngine<Details>(details: Details): SchemaNode & { properties: Record<string, unknown> & { details: Details } } {
  // The document's own keys ($schema, $defs, title) describe the file, not the value: left out.
  const { properties, $defs, $schema: _schema, title: _title, ...top } = ENGINE_RESULT_SCHEMA;
  const built = inlineDefinitions({ ...top, properties: { ...properties, details: {} } }, $defs) as SchemaNode & { properties: Record<string, unknown> };
  return { ...built, properties: { ...built.properties, details } };
}
