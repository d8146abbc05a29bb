import { describe, expect, it } from 'vitest';
import { withoutHyphenSpans } from '../web/helpers.js';
import { makeApp } from './helpers.js';

/** Every operation of the API, in OpenAPI path syntax. */
const OPERATIONS = [
  ['post', '/api/tools/v1/spoof-checker'],
  ['get', '/api/tools/v1/spoof-checker'],
  ['get', '/api/logs/v1/emails/{id}'],
  ['get', '/api/logs/v1/emails'],
  ['get', '/api/logs/v1/{log_id}'],
  ['post', '/api/template/v1/{id}/versions'],
  ['get', '/api/template/v1'],
  ['patch', '/api/domain/v1/{domain_id}'],
  ['delete', '/api/domain/v1/{domain_id}'],
  ['get', '/api/domain/v1'],
  ['get', '/api/contacts/list'],
  ['get', '/api/contacts/v1/list'],
  ['get', '/api/tools/v1/spoof-checker/reports'],
  ['post', '/api/tools/v1/spoof-checker/reports'],
  ['get', '/api/tools/v1/spoof-checker/reports/rejections'],
  ['get', '/api/tools/v1/spoof-checker/reports/domains/{domain}'],
  ['get', '/api/tools/v1/spoof-checker/reports/domains/{domain}/senders'],
  ['get', '/api/tools/v1/spoof-checker/reports/domains/{domain}/readiness'],
  ['get', '/api/tools/v1/spoof-checker/reports/domains/{domain}/tls'],
  ['get', '/api/tools/v1/spoof-checker/failure-reports'],
  ['get', '/api/tools/v1/spoof-checker/failure-reports/settings'],
  ['patch', '/api/tools/v1/spoof-checker/failure-reports/settings'],
  ['get', '/api/tools/v1/spoof-checker/failure-reports/{id}'],
] as const;

/** Public operations that are not probes: TLS-RPT's HTTPS delivery (RFC 8460 §5.3 defines no authentication). */
const PUBLIC = [['post', '/api/tools/v1/spoof-checker/tlsrpt']] as const;

/** The operations probes call: public, no key. */
const PROBES = [
  ['get', '/healthz'],
  ['get', '/readyz'],
] as const;

interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
  requestBody?: { content: Record<string, { schema: { properties: Record<string, Record<string, unknown>>; additionalProperties?: boolean } }> };
  parameters?: { name: string; in: string; schema: Record<string, unknown> }[];
}

async function openapi(): Promise<{ openapi: string; paths: Record<string, Record<string, Operation>>; components: Record<string, Record<string, unknown>> }> {
  const { app } = await makeApp();
  const response = await app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  return response.json();
}

describe('/openapi.json', () => {
  it('is an OpenAPI 3 document listing every operation and nothing else of the API', async () => {
    const doc = await openapi();
    expect(doc.openapi).toMatch(/^3\./);
    const listed = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).filter((m) => m !== 'parameters').map((m) => `${m} ${path}`));
    expect(listed.sort()).toEqual([...OPERATIONS, ...PROBES, ...PUBLIC].map(([m, p]) => `${m} ${p}`).sort());
  });

  it.each(PROBES)('%s %s: public (no security), 200 and 503 documented', async (method, path) => {
    const doc = await openapi();
    const operation = doc.paths[path]?.[method];
    expect(operation?.security).toEqual([]);
    expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(['200', '503']));
  });

  it('documents the optional DKIM selectors of the spoof check, with their bounds', async () => {
    const doc = await openapi();
    const body = doc.paths['/api/tools/v1/spoof-checker']?.['post']?.requestBody?.content['application/json']?.schema;
    expect(body?.properties['selectors']).toMatchObject({ type: 'array', maxItems: 50, items: { type: 'string', minLength: 1, maxLength: 128 } });
    expect(String(body?.properties['selectors']?.['description'])).toMatch(/DKIM selectors/);
  });

  it('declares both authentication schemes', async () => {
    const doc = await openapi();
    expect(doc.components['securitySchemes']).toMatchObject({
      bearerAuth: { type: 'http', scheme: 'bearer' },
      apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key' },
    });
  });

  it.each(OPERATIONS)('%s %s: both auth schemes, a 200 schema and the catalogue error responses', async (method, path) => {
    const doc = await openapi();
    const operation = doc.paths[path]?.[method];
    expect(operation).toBeDefined();
    expect(operation?.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
    const statuses = Object.keys(operation?.responses ?? {});
    expect(statuses).toEqual(expect.arrayContaining(['200', '400', '401', '404', '413', '415', '429', '500']));
    const error = JSON.stringify(operation?.responses['401']);
    expect(error).toMatch(/ErrorBody/);
  });

  it('the spoof checker also documents 502 and 503, and the domain bound', async () => {
    const doc = await openapi();
    const post = doc.paths['/api/tools/v1/spoof-checker']?.['post'];
    expect(Object.keys(post?.responses ?? {})).toEqual(expect.arrayContaining(['502', '503']));
    const body = post?.requestBody?.content['application/json']?.schema;
    expect(body?.properties['domain']).toMatchObject({ type: 'string', minLength: 1, maxLength: 255 });
    expect(body?.additionalProperties).toBe(false);
  });

  it('documents the bounds of the template version body and the list query', async () => {
    const doc = await openapi();
    const schema = doc.paths['/api/template/v1/{id}/versions']?.['post']?.requestBody?.content['application/json']?.schema;
    expect(schema?.properties['subject']).toMatchObject({ maxLength: 500 });
    expect(schema?.properties['description']).toMatchObject({ maxLength: 500 });
    expect(schema?.properties['name']).toMatchObject({ maxLength: 255 });
    const limit = doc.paths['/api/contacts/list']?.['get']?.parameters?.find((p) => p.name === 'limit');
    expect(limit).toMatchObject({ in: 'query', schema: { minimum: 1, maximum: 100, default: 100 } });
    const templateLimit = doc.paths['/api/template/v1']?.['get']?.parameters?.find((p) => p.name === 'limit');
    expect(templateLimit?.schema).toMatchObject({ default: 20, maximum: 100 });
  });

  it('the error body is one shared component with the stable codes', async () => {
    const doc = await openapi();
    const errorBody = doc.components['schemas']?.['ErrorBody'] as { properties: Record<string, { enum?: string[] }> };
    expect(errorBody.properties['code']?.enum).toEqual(expect.arrayContaining(['VALIDATION_FAILED', 'UNAUTHORIZED', 'RATE_LIMITED', 'DNS_TIMEOUT']));
  });
});

describe('/docs', () => {
  it('renders the API reference on the server from the OpenAPI document: every operation, no script', async () => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'GET', url: '/docs' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/text\/html/);
    const body = withoutHyphenSpans(response.body);
    expect(body).toContain('<h1>API reference</h1>');
    expect(response.body).toContain('<meta name="viewport"');
    expect(response.body).toContain('href="/openapi.json"');
    expect(response.body).not.toMatch(/swagger/i);
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { hide?: boolean }>> };
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))) {
        expect(body, `${method} ${path}`).toContain(`<span class="method">${method.toUpperCase()}</span> <code>${path}</code>`);
      }
    }
    // The spoof checker's body fields are listed with their types.
    expect(body).toMatch(/<code>domain<\/code><\/th><td>string, at most 255 characters<\/td><td>yes<\/td>/);
  });

  it('is absent from an app without the page (nothing to render it), while /openapi.json stays', async () => {
    const { app } = await makeApp({ pages: false });
    expect((await app.inject({ method: 'GET', url: '/docs' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
  });
});
