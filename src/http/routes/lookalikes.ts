/**
 * `POST /api/tools/v1/lookalikes`: the registered names that look like a domain, graded by what each
 * can do with mail (the engine's `findLookalikes`). A default run tries a few hundred names; a deep
 * run (`"deep": true`) up to `API_DEEP_MAX_CANDIDATES`, synchronously, with its own stricter limit.
 * A name that is not registrable is INVALID_DOMAIN 400; every DNS condition is a value in the
 * report (a failed lookup grades its name `unknown`), never an error of the request.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { onRequestHookHandler } from 'fastify';
import { Type } from 'typebox';
import { LOOKALIKE_FUZZERS, LOOKALIKE_GRADES, type LookalikeReport } from '@spoof-checker/engine';
import type { AuditSpec } from '../context.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, errorResponses } from '../schemas.js';
import { SPOOF_DOMAIN_MAX_LENGTH } from './spoof-checker.js';

/**
 * The most names a deep run of the API tries. Deep runs answer in the request (not as a queued
 * job), so they are capped well below the engine's `DEEP_MAX_CANDIDATES`: about 1,000 DNS queries
 * plus five per name that exists, seconds on a warm resolver.
 */
export const API_DEEP_MAX_CANDIDATES = 1000;

/** What a request may ask of a run. */
export interface LookalikeRunOptions {
  deep: boolean;
  /** Most names to try (the API's deep cap, the page's cap). */
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

const AUDIT: AuditSpec = { service: 'tools', resource: 'lookalikes', verb: 'perform', past: 'performed' };

/** Options of the lookalike route. */
export interface LookalikeRouteOptions {
  run: LookalikeRun;
  limiter: onRequestHookHandler | undefined;
  /** Counts deep runs, on top of `limiter`. */
  deepLimiter: onRequestHookHandler | undefined;
}

/** The lookalike route. */
export const lookalikeRoutes: FastifyPluginAsyncTypebox<LookalikeRouteOptions> = async (app, { run, limiter, deepLimiter }) => {
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
          'Generates the names that look like the domain (the dnstwist fuzzers, homoglyphs its registry accepts), asks DNS which exist (one MX query each, three to five more for each that does), and grades each: critical, high, medium, unknown, protected. Names that do not resolve are counted in `counts.none`, not listed. `"deep": true` adds two-letter homoglyphs, a word list and a TLD swap, capped at ' +
          `${API_DEEP_MAX_CANDIDATES} names, and has its own, stricter rate limit.`,
        body: Type.Object(
          {
            domain: Type.String({ minLength: 1, maxLength: SPOOF_DOMAIN_MAX_LENGTH, description: 'The domain, a URL or an email address', examples: ['example.com'] }),
            deep: Type.Optional(Type.Boolean({ description: 'The deep run (more names, slower, limited more strictly)' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: LookalikeReportSchema, ...errorResponses(...COMMON_ERROR_STATUSES) },
      },
    },
    async (request, reply) => {
      request.auditResourceId = request.body.domain;
      const deep = request.body.deep === true;
      // The response closing before it is sent means the client went away: stop asking DNS for it.
      const controller = new AbortController();
      const abort = (): void => {
        if (!reply.raw.writableFinished) controller.abort();
      };
      reply.raw.once('close', abort);
      try {
        return await run(request.body.domain, { deep, ...(deep ? { maxCandidates: API_DEEP_MAX_CANDIDATES } : {}), signal: controller.signal });
      } finally {
        reply.raw.off('close', abort);
      }
    },
  );
};
