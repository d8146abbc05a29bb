import { describe, expect, it } from 'vitest';
import { apiKeyB, bearerA, chars, expectError, expectShape, makeApp, TEMPLATE_VERSION_SHAPE } from './helpers.js';

const versions = (id = 'tpl_a') => `/api/template/v1/${id}/versions`;

describe('POST /api/template/v1/:id/versions', () => {
  it('creates a draft: version = highest + 1, draftNumber = drafts + 1, default name, no publishNumber', async () => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'POST', url: versions(), headers: bearerA, payload: { content: [{ type: 'p', text: 'hi' }] } });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expectShape(body, TEMPLATE_VERSION_SHAPE);
    // Seed: version 1 (draft 1), version 2 (publish 1).
    expect(body).toMatchObject({ templateId: 'tpl_a', version: 3, draftNumber: 2, name: 'Draft 2', isMajor: false, content: [{ type: 'p', text: 'hi' }] });
    expect(body).not.toHaveProperty('publishNumber');
    expect(body.createdAt).toBe('2025-06-01T00:00:00.000Z');
    expect(body.createdByUserId).toBe('user_a');
    expect(body.createdBy).toEqual({ id: 'user_a', name: 'User user_a', email: 'user_a@example.test', image: 'https://example.test/user_a.png' });
  });

  it('creates a major version: publishNumber = published + 1, default name v{n}, no draftNumber', async () => {
    const { app } = await makeApp();
    const body = (await app.inject({ method: 'POST', url: versions(), headers: bearerA, payload: { content: [], isMajor: true } })).json();
    expect(body).toMatchObject({ version: 3, publishNumber: 2, name: 'v2', isMajor: true });
    expect(body).not.toHaveProperty('draftNumber');
  });

  it('numbers one sequence across drafts and majors, starting at 1 for a template without versions', async () => {
    const { app } = await makeApp();
    const seen: [number, number | undefined, number | undefined, string][] = [];
    for (const isMajor of [false, true, false, true, true]) {
      const b = (await app.inject({ method: 'POST', url: versions('tpl_a_empty'), headers: bearerA, payload: { content: [], isMajor } })).json();
      seen.push([b.version, b.draftNumber, b.publishNumber, b.name]);
    }
    expect(seen).toEqual([
      [1, 1, undefined, 'Draft 1'],
      [2, undefined, 1, 'v1'],
      [3, 2, undefined, 'Draft 2'],
      [4, undefined, 2, 'v2'],
      [5, undefined, 3, 'v3'],
    ]);
  });

  it('inherits subject, fromEmail, replyTo, previewText and variables from the template when left out', async () => {
    const { app } = await makeApp();
    const body = (await app.inject({ method: 'POST', url: versions(), headers: bearerA, payload: { content: [] } })).json();
    expect(body).toMatchObject({
      subject: 'Welcome {{name}}',
      fromEmail: 'hello@a.test',
      replyTo: 'reply@a.test',
      previewText: 'Hi there',
      variables: [{ name: 'name', type: 'string', defaultValue: 'friend' }],
      description: null,
      renderedHtml: null,
    });
  });

  it('keeps what is given, including a name and variables', async () => {
    const { app } = await makeApp();
    const payload = {
      content: [1, 'two', { three: 3 }, null],
      subject: 'S',
      fromEmail: 'f@a.test',
      replyTo: 'r@a.test',
      previewText: 'P',
      description: 'D',
      name: 'My name',
      isMajor: false,
      renderedHtml: '<p>x</p>',
      variables: [
        { name: 'count', type: 'number', defaultValue: null },
        { name: 'who', type: 'string', defaultValue: 'you' },
      ],
    };
    const body = (await app.inject({ method: 'POST', url: versions(), headers: bearerA, payload })).json();
    const { isMajor, ...rest } = payload;
    expect(body).toMatchObject({ ...rest, isMajor });
    // Given variables become the template's: the next version inherits them.
    const next = (await app.inject({ method: 'POST', url: versions(), headers: bearerA, payload: { content: [] } })).json();
    expect(next.variables).toEqual(payload.variables);
  });

  it.each([
    ['subject', 500],
    ['description', 500],
    ['fromEmail', 255],
    ['replyTo', 255],
    ['name', 255],
  ])('%s: %i characters pass, one more is refused naming the field and the bound', async (field, max) => {
    const { app } = await makeApp();
    const ok = await app.inject({ method: 'POST', url: versions(), headers: bearerA, payload: { content: [], [field]: chars(max) } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()[field]).toBe(chars(max));
    const tooLong = await app.inject({ method: 'POST', url: versions(), headers: bearerA, payload: { content: [], [field]: chars(max + 1) } });
    const body = expectError(tooLong, 400, 'VALIDATION_FAILED');
    expect(body['message']).toContain(`body.${field} must be at most ${max} characters long (it has ${max + 1})`);
  });

  it('counts characters, not UTF-16 units, against the bounds', async () => {
    const { app } = await makeApp();
    const ok = await app.inject({ method: 'POST', url: versions(), headers: bearerA, payload: { content: [], name: chars(255, '😀') } });
    expect(ok.statusCode).toBe(200);
  });

  it.each([
    [{}, /body\.content is required/, 'content missing'],
    [{ content: 'text' }, /body\.content must be an array/, 'content not an array'],
    [{ content: [], isMajor: 'true' }, /body\.isMajor must be true or false/, 'no coercion of "true"'],
    [{ content: [], unknown: 1 }, /body\.unknown is not an allowed field/, 'unknown field'],
    [{ content: [], variables: [{ name: 'x', type: 'date', defaultValue: null }] }, /body\.variables\[0\]\.type must be one of 'string', 'number'/, 'variable type'],
    [{ content: [], variables: [{ name: 'x', type: 'string' }] }, /body\.variables\[0\]\.defaultValue is required/, 'defaultValue required'],
    [{ content: [], variables: [{ name: 'x', type: 'string', defaultValue: 3 }] }, /body\.variables\[0\]\.defaultValue must be a string or null/, 'defaultValue string or null'],
    [{ content: [], variables: ['x'] }, /body\.variables\[0\] must be an object/, 'variables are objects, not strings'],
    [{ content: [], variables: [{ name: 'x', type: 'string', defaultValue: null, extra: 1 }] }, /body\.variables\[0\]\.extra is not an allowed field/, 'unknown variable field'],
  ] as [unknown, RegExp, string][])('refuses %j (%s)', async (payload, message, _reason) => {
    const { app } = await makeApp();
    const body = expectError(await app.inject({ method: 'POST', url: versions(), headers: bearerA, payload: payload as object }), 400, 'VALIDATION_FAILED');
    expect(body['message']).toMatch(message);
  });

  it("answers 404 for another organisation's template and for an unknown one, creating nothing", async () => {
    const { app, stores } = await makeApp();
    const theirs = await app.inject({ method: 'POST', url: versions('tpl_b'), headers: bearerA, payload: { content: [] } });
    expectError(theirs, 404, 'NOT_FOUND');
    expect(theirs.body).not.toContain('B template');
    expect(await stores.templates.listVersions('org_b', 'tpl_b')).toEqual([]);
    expectError(await app.inject({ method: 'POST', url: versions('nope'), headers: bearerA, payload: { content: [] } }), 404, 'NOT_FOUND');
    // The owner can.
    expect((await app.inject({ method: 'POST', url: versions('tpl_b'), headers: apiKeyB, payload: { content: [] } })).statusCode).toBe(200);
  });

  it('50 concurrent creations get 50 distinct consecutive numbers', async () => {
    const { app, stores } = await makeApp();
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => app.inject({ method: 'POST', url: versions('tpl_a_empty'), headers: bearerA, payload: { content: [i], isMajor: i % 3 === 0 } })),
    );
    const bodies = responses.map((r) => (expect(r.statusCode).toBe(200), r.json()));
    expect(bodies.map((b) => b.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    const drafts = bodies.filter((b) => !b.isMajor).map((b) => b.draftNumber).sort((a, b) => a - b);
    const majors = bodies.filter((b) => b.isMajor).map((b) => b.publishNumber).sort((a, b) => a - b);
    expect(drafts).toEqual(Array.from({ length: drafts.length }, (_, i) => i + 1));
    expect(majors).toEqual(Array.from({ length: 17 }, (_, i) => i + 1));
    expect((await stores.templates.listVersions('org_a', 'tpl_a_empty'))?.length).toBe(50);
  });

  it('a major version publishes the template (status and currentVersion in the list)', async () => {
    const { app } = await makeApp();
    await app.inject({ method: 'POST', url: versions('tpl_a_empty'), headers: bearerA, payload: { content: [], isMajor: true } });
    const list = (await app.inject({ method: 'GET', url: '/api/template/v1', headers: bearerA })).json();
    expect(list.templates.find((t: { id: string }) => t.id === 'tpl_a_empty')).toMatchObject({ status: 'published', currentVersion: 1 });
  });
});

describe('GET /api/template/v1', () => {
  const TEMPLATE_SHAPE = {
    id: 'string',
    name: 'string',
    description: 'string|null',
    subject: 'string|null',
    fromEmail: 'string|null',
    replyTo: 'string|null',
    previewText: 'string|null',
    status: { oneOf: ['draft', 'published'] },
    currentVersion: 'number|null',
    variables: 'array',
    createdAt: 'timestamp',
    updatedAt: 'timestamp',
  } as const;

  it('lists the organisation’s templates newest first: {templates, total, page, limit, event}', async () => {
    const { app } = await makeApp();
    const body = (await app.inject({ method: 'GET', url: '/api/template/v1', headers: bearerA })).json();
    expect(Object.keys(body).sort()).toEqual(['event', 'limit', 'page', 'templates', 'total']);
    expect(body).toMatchObject({ total: 2, page: 1, limit: 20, event: 'template.list' });
    expect(body.templates.map((t: { id: string }) => t.id)).toEqual(['tpl_a_empty', 'tpl_a']);
    for (const t of body.templates) expectShape(t, TEMPLATE_SHAPE);
    expect(body.templates[1]).toMatchObject({ status: 'published', currentVersion: 2 });
  });

  it.each([
    ['limit=100', 200],
    ['limit=1', 200],
    ['page=1', 200],
    ['page=99', 200],
    ['limit=101', 400],
    ['limit=0', 400],
    ['page=0', 400],
    ['page=-1', 400],
    ['page=abc', 400],
    ['limit=1.5', 400],
    ['limit=1e2', 400],
    ['limit=', 400],
    ['sort=name', 400],
  ])('?%s answers %i', async (query, status) => {
    const { app } = await makeApp();
    const response = await app.inject({ method: 'GET', url: `/api/template/v1?${query}`, headers: bearerA });
    if (status === 400) expectError(response, 400, 'VALIDATION_FAILED');
    else expect(response.statusCode).toBe(200);
  });

  it('names the bound in the message, and a page past the end is empty with the right total', async () => {
    const { app } = await makeApp();
    const body = expectError(await app.inject({ method: 'GET', url: '/api/template/v1?limit=101', headers: bearerA }), 400, 'VALIDATION_FAILED');
    expect(body['message']).toMatch(/query\.limit must be at most 100/);
    const past = (await app.inject({ method: 'GET', url: '/api/template/v1?page=5&limit=1', headers: bearerA })).json();
    expect(past).toMatchObject({ templates: [], total: 2, page: 5, limit: 1 });
  });
});
