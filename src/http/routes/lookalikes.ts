/**
 * `POST /api/tools/v1/lookalikes`: the registered names that look like a domain, graded by what each
 * can do with mail (the engine's `findLookalikes`). A default run tries a few hundred names and
 * answers the report (200); a deep run (`"deep": true`) tries up to `API_DEEP_MAX_CANDIDATES` as a
 * job on the batches' queue (src/jobs/batches/lookalike-jobs.ts): 202 with the job, whose progress and report
 * `GET /api/tools/v1/lookalikes/jobs/{id}` reads; it has its own stricter limit. A name that is not
 * registrable is INVALID_DOMAIN 400 (before any job is made); every DNS condition is a value in the
 * report (a failed lookup grades its name `unknown`), never an error of the request.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestHookHandler } from 'fastify';
import { Type, type Static } from 'typebox';
import { LOOKALIKE_FUZZERS, LOOKALIKE_GRADES, lookalikeOriginal, SpoofCheckError, type LookalikeReport } from '@spoof-checker/engine';
import type { LookalikeJobService } from '../../jobs/batches/lookalike-jobs.js';
import type { LookalikeJob } from '../../store/lookalike-jobs.js';
import type { AuditSpec } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, errorResponses, TimestampSchema } from '../schemas.js';
import { SPOOF_DOMAIN_MAX_LENGTH } from './spoof-checker.js';

/**
 * The most names a deep run of the API tries (a job: `serve` and `worker` bind the run to it),
 * below the engine's `DEEP_MAX_CANDIDATES`: about 1,000 DNS queries plus five per name that exists,
 * seconds on a warm resolver.
 */
export const API_DEEP_MAX_CANDIDATES = 1000;
/** Where deep runs are read back: `GET {LOOKALIKE_JOBS_PATH}/{id}`. */
export const LOOKALIKE_JOBS_PATH = '/api/tools/v1/lookalikes/jobs';

/** What a request may ask of a run. */
export interface LookalikeRunOptions {
  deep: boolean;
  /** Most names to try (the page's cap). */
  maxCandidates?: number;
  /** Most DNS lookups (the page's budget). */
  maxQueries?: number;
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
}

/** Runs one lookalike search (the app is given `findLookalikes` bound to a resolver). */
export type LookalikeRun = (domain: string, options: LookalikeRunOptions) => Promise<LookalikeReport>;

const Grade = Type.Enum([...LOOKALIKE_GRADES]);
const Fuzzer = Type.Enum([...LOOKALIKE_FUZZERS]);

const LookalikeSchema = Type.Object(
  {
    domain: Type.String({ description: 'The lookalike in A-labels (what DNS is asked)' }),
    unicode: Type.String({ description: 'The lookalike in U-labels (the same string for an ASCII name)' }),
    fuzzers: Type.Array(Fuzzer, { description: 'The dnstwist fuzzers that make it' }),
    distance: Type.Integer({ minimum: 0, description: 'Damerau-Levenshtein distance between the Unicode labels' }),
    grade: Grade,
    mx: Type.Object({ status: Type.Enum(['receives', 'implicit', 'null', 'none', 'unknown']), hosts: Type.Array(Type.String()) }, { additionalProperties: false }),
    spf: Type.Object({ status: Type.Enum(['authorises', 'fail-all', 'none', 'invalid', 'unknown']), record: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false }),
    dmarc: Type.Object({ status: Type.Enum(['reject', 'quarantine', 'none', 'absent', 'unknown']), record: Type.Union([Type.String(), Type.Null()]) }, { additionalProperties: false }),
    sharedWithOriginal: Type.Boolean({ description: 'Shares name servers or MX hosts with the original: probably a defensive registration' }),
    note: Type.String(),
  },
  { additionalProperties: false },
);

/** The report's schema (the engine's `LookalikeReport`). */
export const LookalikeReportSchema = Type.Object(
  {
    domain: Type.String({ description: "The original's registrable domain, in A-labels" }),
    unicode: Type.String(),
    deep: Type.Boolean(),
    generated: Type.Integer({ minimum: 0, description: 'Candidates made (after the cap)' }),
    probed: Type.Integer({ minimum: 0, description: 'Candidates queried' }),
    queries: Type.Integer({ minimum: 0, description: 'Every DNS lookup the run made' }),
    candidatesBeforeCap: Type.Integer({ minimum: 0 }),
    capped: Type.Boolean(),
    counts: Type.Object(Object.fromEntries(LOOKALIKE_GRADES.map((g) => [g, Type.Integer({ minimum: 0 })])), { additionalProperties: false }),
    lookalikes: Type.Array(LookalikeSchema, { description: 'Every name graded above none, worst grade first' }),
    looksLike: Type.Union([Type.String(), Type.Null()], { description: 'The ASCII name the input itself imitates, if any' }),
    wildcardSuffixes: Type.Array(Type.String()),
    nextSteps: Type.Array(
      Type.Object({ title: Type.String(), body: Type.String(), records: Type.Optional(Type.Array(Type.String())) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

const JobStatusSchema = Type.Enum(['queued', 'running', 'completed', 'failed'], {
  description: 'queued: waiting for a runner; running: being probed; completed: `report` is set; failed: `error` says why',
});

/** A deep run: `POST /api/tools/v1/lookalikes` with `"deep": true` → 202, and `GET …/lookalikes/jobs/{id}`. */
export const LookalikeJobSchema = Type.Object(
  {
    id: Type.String({ description: 'The job id (`lookalike_job_` and 32 hex digits)' }),
    domain: Type.String({ description: "The original's registrable domain, in A-labels" }),
    status: JobStatusSchema,
    progress: Type.Object(
      {
        done: Type.Integer({ minimum: 0, description: 'Candidates probed so far' }),
        total: Type.Integer({ minimum: 0, description: 'Candidates the run probes (0 until they are generated)' }),
      },
      { additionalProperties: false, description: 'Written as the run goes, at most every 250 ms' },
    ),
    createdAt: TimestampSchema,
    updatedAt: Type.String({ format: 'date-time', description: 'The last change: a status, or progress written' }),
    // The report, once completed (the same as a run answered in the request).
    report: Type.Optional(LookalikeReportSchema),
    error: Type.Optional(
      Type.Object(
        {
          code: Type.String({ description: 'INTERNAL (the search failed on our side), INTERRUPTED (its process stopped too often, or for good)' }),
          message: Type.String(),
        },
        { additionalProperties: false, description: 'Why it failed, once failed' },
      ),
    ),
  },
  { additionalProperties: false },
);

const AUDIT: AuditSpec = { service: 'tools', resource: 'lookalikes', verb: 'perform', past: 'performed' };
const JOB_AUDIT: AuditSpec = { service: 'tools', resource: 'lookalike_job', verb: 'view', past: 'viewed', idParam: 'id' };

/** Options of the lookalike route. */
export interface LookalikeRouteOptions {
  run: LookalikeRun;
  limiter: onRequestHookHandler | undefined;
  /** Counts deep runs, on top of `limiter`. */
  deepLimiter: onRequestHookHandler | undefined;
  /** Deep runs as jobs; without it a deep run answers 503 (the default run is still served). */
  jobs?: LookalikeJobService | undefined;
}

/** The job as the API shows it. */
export function lookalikeJobBody(job: LookalikeJob): Static<typeof LookalikeJobSchema> {
  return {
    id: job.id,
    domain: job.domain,
    status: job.status,
    progress: { done: job.done, total: job.total },
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
    ...(job.status === 'completed' && job.report ? { report: job.report } : {}),
    ...(job.status === 'failed' && job.error ? { error: job.error } : {}),
  };
}

/** The lookalike route. */
export const lookalikeRoutes: FastifyPluginAsyncTypebox<LookalikeRouteOptions> = async (app, { run, limiter, deepLimiter, jobs }) => {
  app.post(
    '/api/tools/v1/lookalikes',
    {
      onRequest: limiter ? [limiter] : [],
      preHandler: async function deepLimit(request, reply) {
        if (deepLimiter && request.body.deep === true) await (deepLimiter as unknown as (this: unknown, req: typeof request, rep: typeof reply) => Promise<void>).call(this, request, reply);
      },
      config: { audit: AUDIT },
      schema: {
        tags: ['tools'],
        security: API_SECURITY,
        summary: 'Which names look like this domain, and what can they do with mail?',
        description:
          'Generates the names that look like the domain (the dnstwist fuzzers, homoglyphs its registry accepts), asks DNS which exist (one MX query each, three to five more for each that does), and grades each: critical, high, medium, unknown, protected. Names that do not resolve are counted in `counts.none`, not listed; the report is the answer (200). ' +
          `\`"deep": true\` adds two-letter homoglyphs, a word list and a TLD swap, capped at ${API_DEEP_MAX_CANDIDATES} names, and runs as a job: 202 with the job and a Location header; ` +
          `GET ${LOOKALIKE_JOBS_PATH}/{id} reads its progress, then its report. Deep runs have their own, stricter rate limit; 503 when the job queue is unreachable (nothing was stored: retry).`,
        body: Type.Object(
          {
            domain: Type.String({ minLength: 1, maxLength: SPOOF_DOMAIN_MAX_LENGTH, description: 'The domain, a URL or an email address', examples: ['example.com'] }),
            deep: Type.Optional(Type.Boolean({ description: 'The deep run (more names, slower, limited more strictly)' })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: LookalikeReportSchema,
          202: LookalikeJobSchema,
          ...errorResponses(...COMMON_ERROR_STATUSES, 503),
        },
      },
    },
    async (request, reply) => {
      request.auditResourceId = request.body.domain;
      const deep = request.body.deep === true;
      if (deep) {
        // Refused before anything is stored, as the engine refuses it (INVALID_DOMAIN 400).
        const outcome = lookalikeOriginal(request.body.domain);
        if (!outcome.ok) throw new SpoofCheckError('invalid_domain', outcome.message, { why: 'Lookalikes are made from a registrable domain.', fix: outcome.fix });
        const readiness = jobs ? await jobs.ready() : { ok: false as const, reason: 'This service runs no lookalike jobs.' };
        if (!jobs || !readiness.ok) {
          throw new ApiError('SERVICE_UNAVAILABLE', {
            message: 'Deep lookalike runs cannot be accepted right now: the job queue is unreachable.',
            why: `${readiness.ok ? '' : readiness.reason} Nothing was stored.`,
            fix: 'Retry in a minute. The default run (without "deep") still answers in the request.',
          });
        }
        const job = await jobs.submit(request.principal!.organizationId, outcome.original.domain);
        request.auditResourceId = job.id;
        return reply.code(202).header('location', `${LOOKALIKE_JOBS_PATH}/${job.id}`).send(lookalikeJobBody(job));
      }
      // The response closing before it is sent means the client went away: stop asking DNS for it.
      const controller = new AbortController();
      const abort = (): void => {
        if (!reply.raw.writableFinished) controller.abort();
      };
      reply.raw.once('close', abort);
      try {
        return await run(request.body.domain, { deep: false, signal: controller.signal });
      } finally {
        reply.raw.off('close', abort);
      }
    },
  );

  if (!jobs) return;
  app.get(
    `${LOOKALIKE_JOBS_PATH}/:id`,
    {
      config: { audit: JOB_AUDIT },
      schema: {
        tags: ['tools'],
        security: API_SECURITY,
        summary: 'Progress, then report, of a deep lookalike run',
        description: 'The job a deep run made: its status and progress (candidates probed of the total) while it runs, its report once completed, or why it failed. A job of another organisation is not found.',
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false }),
        response: { 200: LookalikeJobSchema, ...errorResponses(...COMMON_ERROR_STATUSES) },
      },
    },
    async (request) => {
      const job = await jobs.store.get(request.principal!.organizationId, request.params.id);
      if (!job) throw notFound('Lookalike job', request.params.id);
      return lookalikeJobBody(job);
    },
  );
};
