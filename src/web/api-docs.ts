/**
 * The API reference at /docs: the service's own OpenAPI document (the one at /openapi.json, made
 * from the routes' schemas) rendered on the server as one page of the site. No JavaScript, no
 * bundle, the site's stylesheet and CSP, headings and tables a screen reader can walk: it replaced
 * Swagger UI, whose 1.7 MB page failed axe-core (unlabelled inputs, images without text, nested
 * interactive controls), had no viewport and showed nothing without JavaScript. The machine-readable
 * document stays at /openapi.json, linked at the top, for tools that try requests.
 */
import { html, type SafeHtml } from './html.js';
import { page } from './layout.js';
import type { DemoSettings } from './demo.js';

/** The parts of an OpenAPI 3.1 document the page reads. */
export interface OpenApiDocument {
  info?: { title?: string; version?: string; description?: string };
  paths?: Record<string, Record<string, OpenApiOperation | undefined>>;
  components?: { schemas?: Record<string, JsonSchema> };
}
interface OpenApiOperation {
  summary?: string;
  description?: string;
  tags?: string[];
  hide?: boolean;
  security?: unknown[];
  parameters?: { name: string; in: string; required?: boolean; description?: string; schema?: JsonSchema }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { description?: string }>;
}
type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  format?: string;
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
/** Section titles of the tags the routes use; an unknown tag is shown as it is. */
const TAG_TITLES: Record<string, string> = {
  tools: 'Spoof checker',
  monitors: 'Monitors',
  batches: 'Batch checks',
  logs: 'Email and record logs',
  templates: 'Templates',
  domains: 'Domains',
  contacts: 'Contacts',
  health: 'Health',
  operations: 'Health and readiness',
  reports: 'Reports',
};

/** An operation's id in the page: `post-api-tools-v1-spoof-checker`. */
function anchor(method: string, path: string): string {
  return `${method}-${path.replace(/[{}]/g, '').replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}`;
}

/** A schema's type in a few words: `string`, `integer 1–100`, `array of string`, `"a" | "b"`. */
function typeOf(schema: JsonSchema | undefined, doc: OpenApiDocument, depth = 0): string {
  if (schema === undefined || depth > 4) return '';
  const resolved = resolve(schema, doc);
  if (resolved.enum) return resolved.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (resolved.const !== undefined) return JSON.stringify(resolved.const);
  const alternatives = resolved.anyOf ?? resolved.oneOf;
  if (alternatives) return alternatives.map((s) => typeOf(s, doc, depth + 1)).join(' or ');
  const type = Array.isArray(resolved.type) ? resolved.type.join(' or ') : (resolved.type ?? 'any');
  if (type === 'array') return `array of ${typeOf(resolved.items, doc, depth + 1) || 'any'}`;
  const bounds = resolved.minimum !== undefined || resolved.maximum !== undefined ? ` ${resolved.minimum ?? ''}–${resolved.maximum ?? ''}` : '';
  const length = resolved.maxLength !== undefined ? `, at most ${resolved.maxLength} characters` : '';
  return `${type}${resolved.format ? ` (${resolved.format})` : ''}${bounds}${length}`;
}

/** `#/components/schemas/X` and `X#` references, followed within the document. */
function resolve(schema: JsonSchema, doc: OpenApiDocument): JsonSchema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace(/^#\/components\/schemas\//, '').replace(/#$/, '');
  return doc.components?.schemas?.[name] ?? schema;
}

/** A table of an object schema's fields (top level only: nested objects are named by type). */
function fieldsTable(caption: string, schema: JsonSchema | undefined, doc: OpenApiDocument): SafeHtml | null {
  const resolved = schema ? resolve(schema, doc) : undefined;
  const properties = Object.entries(resolved?.properties ?? {});
  if (properties.length === 0) return null;
  const required = new Set(resolved?.required ?? []);
  // A table wider than a phone scrolls on its own; keyboard users reach it (tabindex) and hear its name.
  return html`<div class="table-scroll" tabindex="0" role="region" aria-label="${caption}"><table>
<caption>${caption}</caption>
<thead><tr><th scope="col">field</th><th scope="col">type</th><th scope="col">required</th><th scope="col">what it is</th></tr></thead>
<tbody>${properties.map(([name, field]) => html`<tr><th scope="row"><code>${name}</code></th><td>${typeOf(field, doc)}</td><td>${required.has(name) ? 'yes' : 'no'}</td><td>${resolve(field, doc).description ?? ''}</td></tr>`)}</tbody>
</table></div>`;
}

function operationSection(method: string, path: string, op: OpenApiOperation, doc: OpenApiDocument): SafeHtml {
  const id = anchor(method, path);
  const parameters = op.parameters ?? [];
  const body = Object.values(op.requestBody?.content ?? {})[0]?.schema;
  const responses = Object.entries(op.responses ?? {});
  return html`<section class="card api-operation" aria-labelledby="${id}">
<h3 id="${id}"><span class="method">${method.toUpperCase()}</span> <code>${path}</code></h3>
${op.summary ? html`<p><strong>${op.summary}</strong></p>` : null}
${op.description ? html`<p>${op.description}</p>` : null}
<p class="muted">${op.security && op.security.length === 0 ? 'No API key needed.' : 'Needs an API key.'}</p>
${parameters.length > 0 ? html`<div class="table-scroll" tabindex="0" role="region" aria-label="Parameters of ${method.toUpperCase()} ${path}"><table>
<caption>Parameters</caption>
<thead><tr><th scope="col">name</th><th scope="col">in</th><th scope="col">type</th><th scope="col">required</th><th scope="col">what it is</th></tr></thead>
<tbody>${parameters.map((p) => html`<tr><th scope="row"><code>${p.name}</code></th><td>${p.in}</td><td>${typeOf(p.schema, doc)}</td><td>${p.required ? 'yes' : 'no'}</td><td>${p.description ?? p.schema?.description ?? ''}</td></tr>`)}</tbody>
</table></div>` : null}
${fieldsTable(`Request body (JSON) of ${method.toUpperCase()} ${path}`, body, doc)}
${responses.length > 0 ? html`<p>Answers: ${responses.map(([status, r], i) => html`${i > 0 ? ', ' : ''}<code>${status}</code>${r.description && r.description !== 'Default Response' ? html` ${r.description}` : null}`)}.</p>` : null}
</section>`;
}

/** The /docs page: every operation of `doc`, grouped by tag, with a table of contents. */
export function apiDocsPage(doc: OpenApiDocument, demo: DemoSettings | null = null): SafeHtml {
  const groups = new Map<string, { method: string; path: string; op: OpenApiOperation }[]>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op || op.hide) continue;
      const tag = op.tags?.[0] ?? 'other';
      groups.set(tag, [...(groups.get(tag) ?? []), { method, path, op }]);
    }
  }
  const title = doc.info?.title ?? 'API';
  const tagId = (tag: string) => `tag-${tag.replace(/[^A-Za-z0-9]+/g, '-')}`;
  return page({
    title: 'API reference',
    description: `Every route of the ${title}, its parameters, body and answers.`,
    demo,
    body: html`<h1>API reference</h1>
<p>${doc.info?.description ?? ''}</p>
<p>The same, as an OpenAPI 3.1 document for tools and code generators: <a href="/openapi.json">/openapi.json</a>. Send the key as <code>Authorization: Bearer &lt;key&gt;</code> or <code>x-api-key: &lt;key&gt;</code>.</p>
<nav aria-label="Routes"><ul>${[...groups].map(
      ([tag, ops]) => html`<li><a href="#${tagId(tag)}">${TAG_TITLES[tag] ?? tag}</a><ul>${ops.map(({ method, path, op }) => html`<li><a href="#${anchor(method, path)}">${method.toUpperCase()} <code>${path}</code></a>${op.summary ? html` · ${op.summary}` : null}</li>`)}</ul></li>`,
    )}</ul></nav>
${[...groups].map(([tag, ops]) => html`<h2 id="${tagId(tag)}">${TAG_TITLES[tag] ?? tag}</h2>
${ops.map(({ method, path, op }) => operationSection(method, path, op, doc))}`)}`,
  });
}
