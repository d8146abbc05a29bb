/**
 * The batch API through `inject`, over the fixture zones, with the in-process runner (or a fake
 * queue where a test needs batches to stay put).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { postgresBackend, sqliteBackend } from '../store/backends.js';
import type { FastifyInstance } from 'fastify';
import { MAX_BATCH_NAMES } from '../../src/jobs/batches/model.js';
import { processChunk } from '../../src/jobs/batches/process.js';
import {
  batchApp,
  BATCHES,
  bearerA,
  bearerB,
  DNS_FAILURE_NAME,
  expectError,
  FakeQueue,
  fixtureCheck,
  ndjson,
  VERDICT_NAMES,
} from './helpers.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function setUp(options: Parameters<typeof batchApp>[0] = {}) {
  const built = await batchApp(options);
  apps.push(built.app);
  return built;
}

const submit = (app: FastifyInstance, domains: string[], headers: Record<string, string> = bearerA) =>
  app.inject({ method: 'POST', url: BATCHES, headers, payload: { domains } });

describe('batch API: submit, progress, results', () => {
  it('checks every name once, in submission order, with the same verdicts as single checks; invalid names become error rows', async () => {
    const { app, runner } = await setUp();
    const names = [...VERDICT_NAMES, 'not a domain', DNS_FAILURE_NAME, 'https://www.p-none.example/contact'];
    const accepted = await submit(app, names);
    expect(accepted.statusCode, accepted.body).toBe(202);
    const body = accepted.json();
    expect(body).toEqual({ id: expect.stringMatching(/^batch_[0-9a-f]{32}$/), status: 'queued', total: names.length, createdAt: expect.any(String) });

    await runner!.idle();
    const status = await app.inject({ method: 'GET', url: `${BATCHES}/${body.id}`, headers: bearerA });
    expect(status.statusCode).toBe(200);
    expect(status.json()).toMatchObject({ id: body.id, status: 'done', total: names.length, done: names.length, failed: 2 });
    expect(status.json().finishedAt).toEqual(expect.any(String));
    expect(status.json().namesPerSecond).toBeGreaterThan(0);

    const results = await app.inject({ method: 'GET', url: `${BATCHES}/${body.id}/results`, headers: bearerA });
    expect(results.statusCode).toBe(200);
    expect(results.headers['content-type']).toMatch(/^application\/x-ndjson/);
    const lines = ndjson(results.body);
    expect(lines.map((line) => line['cursor'])).toEqual(names.map((_, i) => String(i)));
    const check = await fixtureCheck();
    for (const [i, name] of names.entries()) {
      const line = lines[i]!;
      if (name === 'not a domain') {
        expect(line).toEqual({ cursor: String(i), domain: name, error: { code: 'INVALID_DOMAIN', message: expect.stringContaining('not a domain') } });
      } else if (name === DNS_FAILURE_NAME) {
        expect(line).toMatchObject({ domain: name, error: { code: 'DNS_FAILURE', message: expect.stringContaining('attempt') } });
      } else {
        const single = await check(name);
        expect(line).toMatchObject({ input: name, domain: single.domain, verdict: single.verdict, inboxOutcome: single.inboxOutcome });
        expect(line).not.toHaveProperty('details');
      }
    }
  });

  it('resumes after a cursor', async () => {
    const { app, runner } = await setUp();
    const { id } = (await submit(app, VERDICT_NAMES)).json();
    await runner!.idle();
    const first = ndjson((await app.inject({ method: 'GET', url: `${BATCHES}/${id}/results`, headers: bearerA })).body);
    const rest = ndjson((await app.inject({ method: 'GET', url: `${BATCHES}/${id}/results?after=${first[3]!['cursor']}`, headers: bearerA })).body);
    expect(rest).toEqual(first.slice(4));
    const bad = await app.inject({ method: 'GET', url: `${BATCHES}/${id}/results?after=abc`, headers: bearerA });
    expectError(bad, 400, 'VALIDATION_FAILED');
  });

  it('takes text/plain, one name a line, skipping blank lines and comments', async () => {
    const { app, runner } = await setUp();
    const response = await app.inject({
      method: 'POST',
      url: BATCHES,
      headers: { ...bearerA, 'content-type': 'text/plain' },
      payload: '# my domains\np-reject.example\r\n\n  p-none.example  \n',
    });
    expect(response.statusCode, response.body).toBe(202);
    expect(response.json().total).toBe(2);
    await runner!.idle();
    const lines = ndjson((await app.inject({ method: 'GET', url: `${BATCHES}/${response.json().id}/results`, headers: bearerA })).body);
    expect(lines.map((l) => l['input'])).toEqual(['p-reject.example', 'p-none.example']);
  });

  it('refuses an empty list, a non-string name and an unknown field, naming the problem', async () => {
    const { app } = await setUp({ queue: new FakeQueue() });
    expect(expectError(await submit(app, []), 400, 'VALIDATION_FAILED')['message']).toMatch(/domains/);
    const notString = await app.inject({ method: 'POST', url: BATCHES, headers: bearerA, payload: { domains: ['a.example', 7] } });
    expectError(notString, 400, 'VALIDATION_FAILED');
    const extra = await app.inject({ method: 'POST', url: BATCHES, headers: bearerA, payload: { domains: ['a.example'], priority: 1 } });
    expect(expectError(extra, 400, 'VALIDATION_FAILED')['message']).toMatch(/priority/);
  });
});

describe('batch API: tenancy and authentication', () => {
  it("answers 404 to another organisation's key on every batch route, and 401 without a key", async () => {
    const { app } = await setUp({ queue: new FakeQueue() });
    const { id } = (await submit(app, ['p-reject.example'])).json();
    for (const [method, url] of [
      ['GET', `${BATCHES}/${id}`],
      ['GET', `${BATCHES}/${id}/results`],
      ['DELETE', `${BATCHES}/${id}`],
    ] as const) {
      expectError(await app.inject({ method, url, headers: bearerB }), 404, 'NOT_FOUND');
      expectError(await app.inject({ method, url }), 401, 'UNAUTHORIZED');
    }
    expectError(await app.inject({ method: 'POST', url: BATCHES, payload: { domains: ['a.example'] } }), 401, 'UNAUTHORIZED');
    // The batch is untouched by B's DELETE.
    expect((await app.inject({ method: 'GET', url: `${BATCHES}/${id}`, headers: bearerA })).json().status).toBe('queued');
  });
});

describe('batch API: size limits', () => {
  // Three bodies of 100,000 names through the whole route: seconds on a quiet machine, 17–20 s on a
  // loaded one (CI on 2 shared cores), so its own bound, well past both: its verdict is not the machine's speed.
  it(`accepts ${MAX_BATCH_NAMES} names (a body over 1 MiB) and refuses one more; other routes keep 1 MiB`, { timeout: 120_000 }, async () => {
    const queue = new FakeQueue();
    const { app } = await setUp({ queue });
    const names = Array.from({ length: MAX_BATCH_NAMES }, (_, i) => `name-${i}.p-reject.example`);
    const big = await submit(app, names);
    expect(big.statusCode, big.body.slice(0, 300)).toBe(202);
    expect(big.json().total).toBe(MAX_BATCH_NAMES);
    expect(queue.enqueued).toEqual([big.json().id]);

    const tooMany = await submit(app, [...names, 'one-more.example']);
    expect(expectError(tooMany, 400, 'VALIDATION_FAILED')['message']).toMatch(String(MAX_BATCH_NAMES));

    const asText = await app.inject({ method: 'POST', url: BATCHES, headers: { ...bearerA, 'content-type': 'text/plain' }, payload: names.join('\n') });
    expect(asText.statusCode).toBe(202);

    const overOneMiB = JSON.stringify({ domain: 'x'.repeat(1024 * 1024 + 10) });
    const single = await app.inject({ method: 'POST', url: '/api/tools/v1/spoof-checker', headers: { ...bearerA, 'content-type': 'application/json' }, payload: overOneMiB });
    expectError(single, 413, 'PAYLOAD_TOO_LARGE');
  });
});

describe('batch API: quota', () => {
  it('refuses a batch past the daily quota with a 429 that says how many remain and when it resets', async () => {
    const now = () => new Date('2026-03-01T18:00:00.000Z');
    const { app } = await setUp({ queue: new FakeQueue(), namesPerDay: 5, now });
    expect((await submit(app, ['a.example', 'b.example', 'c.example'])).statusCode).toBe(202);
    const refused = await submit(app, ['d.example', 'e.example', 'f.example']);
    const body = expectError(refused, 429, 'RATE_LIMITED');
    expect(body['message']).toMatch(/quota of 5 names per day \(3 used today\)/);
    expect(body['fix']).toMatch(/at most 2 names/);
    expect(body['retryAfter']).toBe(6 * 3600);
    expect(refused.headers['retry-after']).toBe(String(6 * 3600));
    // Another organisation has its own quota.
    expect((await submit(app, ['a.example', 'b.example', 'c.example'], bearerB)).statusCode).toBe(202);
  });
});

describe.each([sqliteBackend, postgresBackend()])('batch API: the quota under concurrency, on $name', (backend) => {
  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());

  it('30 concurrent 100-name batches against a quota of 1,000: exactly 10 accepted, the rest 429', { timeout: 60_000 }, async () => {
    const opened = await backend.open();
    try {
      const { app } = await setUp({ queue: new FakeQueue(), namesPerDay: 1000, store: opened.stores.batches });
      const names = Array.from({ length: 100 }, (_, i) => `n${i}.example`);
      const responses = await Promise.all(Array.from({ length: 30 }, () => submit(app, names)));
      const statuses = responses.map((response) => response.statusCode).sort();
      expect(statuses.filter((status) => status === 202)).toHaveLength(10);
      expect(statuses.filter((status) => status === 429)).toHaveLength(20);
      expect(await opened.stores.batches.namesSubmittedSince('org_a', '1970-01-01T00:00:00.000Z')).toBe(1000);
    } finally {
      await opened.dispose();
    }
  });
});

describe('batch API: queue down, cancel, partial results', () => {
  it('answers 503 when the queue is unreachable, and stores nothing', async () => {
    const queue = new FakeQueue();
    queue.readiness = { ok: false, reason: 'Redis is not connected (reconnecting).' };
    const { app, store } = await setUp({ queue, namesPerDay: 10 });
    const body = expectError(await submit(app, ['p-reject.example']), 503, 'SERVICE_UNAVAILABLE');
    expect(body['message']).toMatch(/job queue is unreachable/);
    expect(body['why']).toMatch(/Redis is not connected/);
    expect(await store.namesSubmittedSince('org_a', '1970-01-01T00:00:00.000Z')).toBe(0);
  });

  it('keeps a batch whose enqueue failed and queues it at the next sweep', async () => {
    const queue = new FakeQueue();
    queue.failEnqueue = true;
    const { app, service, store } = await setUp({ queue });
    const accepted = await submit(app, ['p-reject.example']);
    expect(accepted.statusCode).toBe(202);
    const { id } = accepted.json();
    expect((await store.getById(id))?.enqueued).toBe(false);
    queue.failEnqueue = false;
    expect(await service.sweep()).toBe(1);
    expect(queue.enqueued).toEqual([id]);
    expect((await store.getById(id))?.enqueued).toBe(true);
    expect(await service.sweep()).toBe(0);
  });

  it('cancels what has not run: later chunks are skipped, status says cancelled', async () => {
    const { app, store } = await setUp({ queue: new FakeQueue() });
    const { id } = (await submit(app, ['p-reject.example', 'p-none.example'])).json();
    const cancelled = await app.inject({ method: 'DELETE', url: `${BATCHES}/${id}`, headers: bearerA });
    expect(cancelled.statusCode).toBe(200);
    expect(cancelled.json()).toMatchObject({ id, status: 'cancelled', done: 0, finishedAt: expect.any(String) });
    const outcome = await processChunk({ batchId: id, fromSeq: 0, toSeq: 2 }, { store, check: await fixtureCheck(), gate: (task) => task() });
    expect(outcome).toEqual({ kind: 'skipped', reason: 'cancelled' });
    expect((await app.inject({ method: 'GET', url: `${BATCHES}/${id}/results`, headers: bearerA })).body).toBe('');
  });

  it('while a batch runs, streams only up to the first name not yet done (so resuming never skips one)', async () => {
    const { app, store } = await setUp({ queue: new FakeQueue() });
    const { id } = (await submit(app, ['a.example', 'b.example', 'c.example', 'd.example'])).json();
    await store.markRunning(id, new Date().toISOString());
    const line = (seq: number) => ({ seq, failed: false, line: JSON.stringify({ input: `n${seq}` }) });
    await store.recordResults(id, [line(0), line(1), line(3)], new Date().toISOString());
    const partial = ndjson((await app.inject({ method: 'GET', url: `${BATCHES}/${id}/results`, headers: bearerA })).body);
    expect(partial.map((l) => l['cursor'])).toEqual(['0', '1']);
    await store.recordResults(id, [line(2), line(3)], new Date().toISOString());
    const rest = ndjson((await app.inject({ method: 'GET', url: `${BATCHES}/${id}/results?after=1`, headers: bearerA })).body);
    expect(rest.map((l) => l['cursor'])).toEqual(['2', '3']);
    const status = (await app.inject({ method: 'GET', url: `${BATCHES}/${id}`, headers: bearerA })).json();
    expect(status).toMatchObject({ status: 'done', done: 4 });
  });
});

describe('batch API: OpenAPI', () => {
  const OPERATIONS = [
    ['post', BATCHES, '202'],
    ['get', `${BATCHES}/{id}`, '200'],
    ['get', `${BATCHES}/{id}/results`, '200'],
    ['delete', `${BATCHES}/{id}`, '200'],
  ] as const;

  it.each(OPERATIONS)('%s %s: both auth schemes, its success response and the catalogue errors', async (method, path, success) => {
    const { app } = await setUp({ queue: new FakeQueue() });
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operation = doc.paths[path]?.[method];
    expect(operation, `${method} ${path}`).toBeDefined();
    expect(operation.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining([success, '400', '401', '404', '413', '415', '429', '500']));
    expect(JSON.stringify(operation.responses['401'])).toMatch(/ErrorBody/);
  });

  it('documents both body types of a submission, the 503 of a queue that is down, and the JSON lines of the results', async () => {
    const { app } = await setUp({ queue: new FakeQueue() });
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const post = doc.paths[BATCHES].post;
    expect(Object.keys(post.requestBody.content).sort()).toEqual(['application/json', 'text/plain']);
    expect(post.requestBody.content['application/json'].schema.properties.domains).toMatchObject({ type: 'array', minItems: 1, maxItems: MAX_BATCH_NAMES });
    expect(Object.keys(post.responses)).toContain('503');
    const results = doc.paths[`${BATCHES}/{id}/results`].get;
    expect(Object.keys(results.responses['200'].content)).toEqual(['application/x-ndjson']);
    expect(results.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['id', 'after']));
  });
});
