/**
 * `POST /api/tools/v1/lookalikes` through app.inject over the fixture zones: the report, deep runs
 * as jobs (202, Location, `GET …/lookalikes/jobs/{id}` with progress then the report, 404 across
 * organisations), errors from the catalogue, the stricter rate limits, the OpenAPI entry.
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ZoneResolver } from '../../packages/engine/src/zones/zone-resolver.js';
import { findLookalikes } from '../../packages/engine/src/lookalikes/index.js';
import { loadZoneDirectory } from '../../packages/engine/src/zones/load.js';
import { API_DEEP_MAX_CANDIDATES, LOOKALIKE_JOBS_PATH, type LookalikeRun } from '../../src/http/routes/lookalikes.js';
import { LookalikeJobService, type DeepLookalikeRun } from '../../src/jobs/batches/lookalike-jobs.js';
import type { LookalikeJobQueue } from '../../src/jobs/batches/queue-types.js';
import { InProcessBatchRunner } from '../../src/jobs/batches/runner.js';
import { MemoryBatchStore } from '../../src/store/batches-memory.js';
import type { AppOptions } from '../../src/http/app.js';
import { bearerA, bearerB, makeApp, seededStores } from './helpers.js';

let resolver: ZoneResolver;
let run: LookalikeRun;
/** The deep run `serve` binds: the API's cap, progress as it goes. */
let deepRun: DeepLookalikeRun;
beforeAll(async () => {
  resolver = new ZoneResolver(await loadZoneDirectory(new URL('../../fixtures/zones/', import.meta.url).pathname));
  run = (domain, options) => findLookalikes(domain, { resolver, ...options });
  deepRun = (domain, { onProgress, signal }) => findLookalikes(domain, { resolver, deep: true, maxCandidates: API_DEEP_MAX_CANDIDATES, onProgress, signal });
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** An app with deep runs on an in-process runner (the batches' queue without Redis). */
async function jobApp(overrides: Partial<AppOptions> = {}, runDeep: DeepLookalikeRun = deepRun): Promise<{ app: FastifyInstance; runner: InProcessBatchRunner; jobs: LookalikeJobService }> {
  const stores = await seededStores();
  const runner = new InProcessBatchRunner({ store: new MemoryBatchStore(), check: async () => Promise.reject(new Error('no batches here')), lookalikes: { store: stores.lookalikeJobs, run: runDeep } });
  const jobs = new LookalikeJobService({ store: stores.lookalikeJobs, queue: runner });
  await jobs.start();
  closers.push(() => runner.close(), () => jobs.close());
  const { app } = await makeApp({ stores, lookalikes: run, lookalikeJobs: jobs, now: () => new Date(), ...overrides });
  return { app, runner, jobs };
}

const getJob = (app: FastifyInstance, location: string, headers: Record<string, string> = bearerA) => app.inject({ method: 'GET', url: location, headers });

const post = (body: unknown) => ({ method: 'POST' as const, url: '/api/tools/v1/lookalikes', headers: { ...bearerA, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

describe('POST /api/tools/v1/lookalikes', () => {
  it('answers the graded report, worst first', async () => {
    const { app } = await makeApp({ lookalikes: run });
    const response = await app.inject(post({ domain: 'acmebank.example' }));
    expect(response.statusCode).toBe(200);
    const report = response.json();
    expect(report).toMatchObject({ domain: 'acmebank.example', deep: false, counts: { critical: 2, high: 4, medium: 1, protected: 2, unknown: 0 } });
    expect(report.lookalikes[0]).toMatchObject({ domain: 'xn--acmebnk-6fg.example', unicode: 'acmeb\u0430nk.example', grade: 'critical', fuzzers: ['homoglyph'], distance: 1, sharedWithOriginal: false });
    expect(report.queries).toBeGreaterThan(report.generated);
  });

  it('a deep run is a job: 202 with a Location, then GET shows it completed with the report the engine gives in one call', async () => {
    const { app, runner } = await jobApp();
    const accepted = await app.inject(post({ domain: 'https://www.AcmeBank.example/login', deep: true }));
    expect(accepted.statusCode, accepted.body).toBe(202);
    const job = accepted.json();
    expect(job).toMatchObject({ domain: 'acmebank.example', progress: { done: 0, total: 0 } });
    expect(['queued', 'running']).toContain(job.status);
    expect(job.id).toMatch(/^lookalike_job_[0-9a-f]{32}$/);
    expect(job.createdAt).toBe(job.updatedAt);
    expect(job).not.toHaveProperty('report');
    expect(accepted.headers['location']).toBe(`${LOOKALIKE_JOBS_PATH}/${job.id}`);

    await runner.idle();
    const read = await getJob(app, accepted.headers['location'] as string);
    expect(read.statusCode).toBe(200);
    const done = read.json();
    const direct = await findLookalikes('acmebank.example', { resolver, deep: true, maxCandidates: API_DEEP_MAX_CANDIDATES });
    expect(done).toMatchObject({ id: job.id, domain: 'acmebank.example', status: 'completed', progress: { done: API_DEEP_MAX_CANDIDATES, total: API_DEEP_MAX_CANDIDATES }, createdAt: job.createdAt });
    expect(done).not.toHaveProperty('error');
    expect(done.report).toEqual(direct);
    expect(done.report).toMatchObject({ deep: true, generated: API_DEEP_MAX_CANDIDATES, capped: true });
    expect(done.report.lookalikes).toHaveLength(9);
  });

  it('shows progress while the run goes, and a failed run says why', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow: DeepLookalikeRun = async (domain, options) => {
      options.onProgress(40, 1000);
      await held;
      if (domain === 'acmebank.example') return deepRun(domain, options);
      throw new Error('boom');
    };
    const { app, runner } = await jobApp({}, slow);
    const { id } = (await app.inject(post({ domain: 'acmebank.example', deep: true }))).json();
    const failing = (await app.inject(post({ domain: 'globex.example', deep: true }))).json();
    // The first progress write goes out at once; later ones at most every 250 ms.
    let running = (await getJob(app, `${LOOKALIKE_JOBS_PATH}/${id}`)).json();
    for (let i = 0; running.progress.done === 0 && i < 100; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      running = (await getJob(app, `${LOOKALIKE_JOBS_PATH}/${id}`)).json();
    }
    expect(running).toMatchObject({ status: 'running', progress: { done: 40, total: 1000 } });
    expect(running).not.toHaveProperty('report');
    release();
    await runner.idle();
    expect((await getJob(app, `${LOOKALIKE_JOBS_PATH}/${id}`)).json()).toMatchObject({ status: 'completed' });
    const failed = (await getJob(app, `${LOOKALIKE_JOBS_PATH}/${failing.id}`)).json();
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'INTERNAL', message: 'The lookalike search failed on our side.' } });
    expect(failed).not.toHaveProperty('report');
  });

  it("another organisation's job, or an unknown id, is 404; a bad id is 400", async () => {
    const { app, runner } = await jobApp();
    const { id } = (await app.inject(post({ domain: 'acmebank.example', deep: true }))).json();
    await runner.idle();
    const other = await getJob(app, `${LOOKALIKE_JOBS_PATH}/${id}`, bearerB);
    expect(other.statusCode).toBe(404);
    expect(other.json()).toMatchObject({ code: 'NOT_FOUND', message: 'Lookalike job not found.' });
    expect((await getJob(app, `${LOOKALIKE_JOBS_PATH}/lookalike_job_nope`)).statusCode).toBe(404);
    expect((await getJob(app, `${LOOKALIKE_JOBS_PATH}/${'x'.repeat(300)}`)).json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED' });
    expect((await app.inject({ method: 'GET', url: `${LOOKALIKE_JOBS_PATH}/${id}` })).statusCode).toBe(401);
  });

  it('a deep run of a name that is not registrable is INVALID_DOMAIN before any job; an unreachable queue is 503, nothing stored', async () => {
    const { app, jobs } = await jobApp();
    const invalid = await app.inject(post({ domain: 'co.uk', deep: true }));
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({ code: 'INVALID_DOMAIN' });
    expect(await jobs.store.unfinished(false, 10)).toEqual([]);

    const down: LookalikeJobQueue = { kind: 'redis', ready: async () => ({ ok: false, reason: 'Redis is not connected (reconnecting).' }), enqueueLookalikeJob: async () => {} };
    const stores = await seededStores();
    const refusing = new LookalikeJobService({ store: stores.lookalikeJobs, queue: down });
    const { app: app503 } = await makeApp({ stores, lookalikes: run, lookalikeJobs: refusing });
    const unavailable = await app503.inject(post({ domain: 'acmebank.example', deep: true }));
    expect(unavailable.statusCode).toBe(503);
    expect(unavailable.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(unavailable.json().why).toContain('Nothing was stored');
    expect(await stores.lookalikeJobs.unfinished(false, 10)).toEqual([]);
    // Without a job service, a deep run is 503 too and the job route is not served; the default run still answers.
    const { app: plain } = await makeApp({ lookalikes: run });
    expect((await plain.inject(post({ domain: 'acmebank.example', deep: true }))).json()).toMatchObject({ statusCode: 503, code: 'SERVICE_UNAVAILABLE' });
    expect((await plain.inject({ method: 'GET', url: `${LOOKALIKE_JOBS_PATH}/x`, headers: bearerA })).json()).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
    expect((await plain.inject(post({ domain: 'acmebank.example' }))).statusCode).toBe(200);
  });

  it('a job whose queue refused it at first is queued by the sweeper', async () => {
    const stores = await seededStores();
    const added: string[] = [];
    let fail = true;
    const flaky: LookalikeJobQueue = {
      kind: 'redis',
      ready: async () => ({ ok: true }),
      enqueueLookalikeJob: async (id) => {
        if (fail) throw new Error('connection refused');
        added.push(id);
      },
    };
    const jobs = new LookalikeJobService({ store: stores.lookalikeJobs, queue: flaky });
    const { app } = await makeApp({ stores, lookalikes: run, lookalikeJobs: jobs });
    const accepted = await app.inject(post({ domain: 'acmebank.example', deep: true }));
    expect(accepted.statusCode).toBe(202);
    expect((await stores.lookalikeJobs.getById(accepted.json().id))?.enqueued).toBe(false);
    fail = false;
    expect(await jobs.sweep()).toBe(1);
    expect(added).toEqual([accepted.json().id]);
    expect((await stores.lookalikeJobs.getById(accepted.json().id))?.enqueued).toBe(true);
    expect(await jobs.sweep()).toBe(0);
  });

  it('a name that is not registrable is INVALID_DOMAIN; a bad body is VALIDATION_FAILED; no key is 401', async () => {
    const { app } = await makeApp({ lookalikes: run });
    const invalid = await app.inject(post({ domain: 'co.uk' }));
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toMatchObject({ code: 'INVALID_DOMAIN' });
    expect(invalid.json().fix).toContain('registrable');
    const extra = await app.inject(post({ domain: 'acmebank.example', fuzzers: ['x'] }));
    expect(extra.json()).toMatchObject({ statusCode: 400, code: 'VALIDATION_FAILED' });
    const anonymous = await app.inject({ method: 'POST', url: '/api/tools/v1/lookalikes', headers: { 'content-type': 'application/json' }, payload: '{"domain":"acmebank.example"}' });
    expect(anonymous.statusCode).toBe(401);
  });

  it('is limited more strictly than the spoof check, and deep runs more strictly still', async () => {
    const { app } = await jobApp({ rateLimits: { lookalikes: { max: 3, windowMs: 60_000 }, deepLookalikes: { max: 1, windowMs: 60_000 } } });
    expect((await app.inject(post({ domain: 'acmebank.example', deep: true }))).statusCode).toBe(202);
    const deep = await app.inject(post({ domain: 'acmebank.example', deep: true }));
    expect(deep.statusCode).toBe(429);
    expect(deep.json()).toMatchObject({ code: 'RATE_LIMITED' });
    expect((await app.inject(post({ domain: 'acmebank.example' }))).statusCode).toBe(200);
    const third = await app.inject(post({ domain: 'acmebank.example' }));
    expect(third.statusCode).toBe(429);
    expect(third.json().why).toContain('lookalike runs');
  });

  it('an IPv6 client rotating /64s inside one /48 meets the aggregate limit, counted apart from the spoof check', async () => {
    const { app } = await makeApp({ lookalikes: async (domain) => ({ ...(await run(domain, { deep: false })) }), rateLimits: { lookalikes: { max: 1, windowMs: 60_000 } } });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const response = await app.inject({ ...post({ domain: 'acmebank.example' }), remoteAddress: `2001:db8:9:${(i << 8).toString(16)}::1` });
      statuses.push(response.statusCode);
    }
    // One per /64, and the /48 allows IPV6_48_ALLOWANCE_FACTOR (4) clients' worth.
    expect(statuses).toEqual([200, 200, 200, 200, 429, 429]);
    // The spoof check of the same client is not charged.
    const check = await app.inject({ method: 'GET', url: '/api/tools/v1/spoof-checker?domain=example.com', remoteAddress: '2001:db8:9:900::1', headers: bearerA });
    expect(check.statusCode).toBe(200);
  });

  it('is in the OpenAPI document when served, and not served without a runner', async () => {
    const { app } = await jobApp();
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const operation = doc.paths['/api/tools/v1/lookalikes'].post;
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '202', '400', '401', '429', '500', '503']));
    expect(operation.requestBody.content['application/json'].schema.properties.deep.type).toBe('boolean');
    const accepted = operation.responses['202'].content['application/json'].schema;
    expect(accepted.properties.status.enum).toEqual(['queued', 'running', 'completed', 'failed']);
    expect(Object.keys(accepted.properties.progress.properties)).toEqual(['done', 'total']);
    const read = doc.paths[`${LOOKALIKE_JOBS_PATH}/{id}`].get;
    expect(Object.keys(read.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404']));
    expect(read.summary).toMatch(/deep lookalike run/);
    const { app: without } = await makeApp();
    expect((await without.inject(post({ domain: 'acmebank.example' }))).json()).toMatchObject({ code: 'ROUTE_NOT_FOUND' });
  });
});
