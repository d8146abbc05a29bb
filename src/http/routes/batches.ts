/**
 * Batch checks: hand over up to 100,000 names, follow progress, stream the results back as JSON
 * lines. Same keys and organisation isolation as every route (a batch of another organisation is
 * not found). The work itself happens in the batch service (src/jobs/batches/): in this process, or on
 * queue workers when the service runs with Redis.
 */
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type, type Static } from 'typebox';
import { BATCH_BODY_LIMIT_BYTES, MAX_BATCH_NAMES, namesPerSecond, startOfUtcDay, withCursor, type Batch } from '../../jobs/batches/model.js';
import type { BatchService } from '../../jobs/batches/service.js';
import { resultPages } from '../../jobs/batches/results.js';
import { newBatch, newBatchId } from '../../jobs/batches/submit.js';
import type { AuditSpec } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, errorResponses, routeSchema, SpoofCheckResultSchema, TimestampSchema } from '../schemas.js';

/** Where the batch routes live. */
export const BATCHES_PATH = '/api/tools/v1/spoof-checker/batches';
/** The media type of the results stream: one JSON document per line. */
export const NDJSON = 'application/x-ndjson';

const BatchStatusSchema = Type.Enum(['queued', 'running', 'done', 'cancelled'], {
  description: 'queued: waiting; running: being checked; done: every name has a result line; cancelled: the names not yet checked never will be',
});

/** `POST …/batches` → 202. */
export const BatchAcceptedSchema = Type.Object(
  { id: Type.String(), status: BatchStatusSchema, total: Type.Integer(), createdAt: TimestampSchema },
  { additionalProperties: false },
);

/** `GET …/batches/:id` and `DELETE …/batches/:id`. */
export const BatchStatusBodySchema = Type.Object(
  {
    id: Type.String(),
    status: BatchStatusSchema,
    total: Type.Integer({ description: 'Names submitted' }),
    done: Type.Integer({ description: 'Names with a result line (checked, or recorded as an error)' }),
    failed: Type.Integer({ description: 'Error lines among done' }),
    createdAt: TimestampSchema,
    finishedAt: Type.Union([TimestampSchema, Type.Null()], { description: 'When the last name was done, or the batch cancelled' }),
    namesPerSecond: Type.Number({ description: 'Names done per second since the batch started' }),
  },
  { additionalProperties: false },
);

const { details: _details, ...resultFields } = SpoofCheckResultSchema.properties;
const CursorField = Type.String({ description: 'Opaque position of this line: pass it as ?after= to resume after it' });
/** One line of the results stream: a result, or the reason a name could not be checked. */
export const BatchResultLineSchema = Type.Union([
  Type.Object({ cursor: CursorField, input: Type.String({ description: 'The name as submitted' }), ...resultFields }),
  Type.Object({
    cursor: CursorField,
    domain: Type.String({ description: 'The name as submitted' }),
    error: Type.Object({ code: Type.String({ description: 'INVALID_DOMAIN, DNS_FAILURE, DNS_TIMEOUT or INTERNAL' }), message: Type.String() }),
  }),
]);

const SubmitBody = Type.Object(
  {
    domains: Type.Array(Type.String(), {
      minItems: 1,
      maxItems: MAX_BATCH_NAMES,
      description: `1 to ${MAX_BATCH_NAMES} domains, URLs or addresses; a name that cannot be checked becomes an error line, it does not fail the batch`,
    }),
  },
  { additionalProperties: false },
);
type SubmitBodyType = Static<typeof SubmitBody>;

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
const ResultsQuery = Type.Object(
  { after: Type.Optional(Type.String({ pattern: '^(0|[1-9][0-9]{0,8})$', description: 'The cursor of the last line already read' })) },
  { additionalProperties: false },
);

const audit = (verb: string, past: string, idParam?: string): AuditSpec => ({
  service: 'tools',
  resource: 'spoof_check_batch',
  verb,
  past,
  ...(idParam ? { idParam } : {}),
});

/** Options of the batch routes. */
export interface BatchRouteOptions {
  batches: BatchService;
  now: () => Date;
}

/** Reads a `text/plain` body (one name a line; blank lines and `#` comments skipped) as `{ domains }`. */
export function parsePlainTextNames(text: string): SubmitBodyType {
  const domains: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const name = raw.trim();
    if (name !== '' && !name.startsWith('#')) domains.push(name);
  }
  return { domains };
}

/** The batch routes (their own plugin: the larger body limit and the text/plain parser stay inside it). */
export const batchRoutes: FastifyPluginAsyncTypebox<BatchRouteOptions> = async (app, { batches, now }) => {
  const common = { tags: ['tools'], security: API_SECURITY };
  const organizationOf = (request: FastifyRequest): string => request.principal!.organizationId;

  // Encapsulated: only these routes take text/plain.
  app.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: BATCH_BODY_LIMIT_BYTES }, (_request, body, done) => {
    done(null, parsePlainTextNames(body as string));
  });

  app.post(
    BATCHES_PATH,
    {
      bodyLimit: BATCH_BODY_LIMIT_BYTES,
      config: { audit: audit('create', 'created') },
      schema: {
        ...common,
        summary: 'Check many domains: submit a batch',
        description:
          `Up to ${MAX_BATCH_NAMES} names as JSON ({"domains": [...]}) or as text/plain, one name a line (blank lines and # comments skipped); ` +
          `a body of at most ${BATCH_BODY_LIMIT_BYTES / (1024 * 1024)} MiB. The batch is stored, then checked in the background; ` +
          'follow it with GET …/batches/{id} and read the results from GET …/batches/{id}/results. ' +
          'Each organisation may submit a number of names per UTC day (429 past it). 503 when the job queue is unreachable (nothing was stored: retry).',
        consumes: ['application/json', 'text/plain'],
        body: SubmitBody,
        response: { 202: BatchAcceptedSchema, ...errorResponses(...COMMON_ERROR_STATUSES, 503) },
      },
    },
    async (request, reply) => {
      const organizationId = organizationOf(request);
      const names = request.body.domains;
      const readiness = await batches.queue.ready();
      if (!readiness.ok) {
        throw new ApiError('SERVICE_UNAVAILABLE', {
          message: 'Batches cannot be accepted right now: the job queue is unreachable.',
          why: `${readiness.reason} Nothing was stored.`,
          fix: 'Retry in a minute. Checks of one domain at a time (POST /api/tools/v1/spoof-checker) still work.',
        });
      }
      const at = now();
      const dayStart = startOfUtcDay(at);
      const id = newBatchId();
      // The quota is checked and taken in one step of the store: concurrent batches of one
      // organisation cannot all fit in the same remainder.
      const outcome = await batches.store.createWithinQuota(newBatch(id, organizationId, at.toISOString(), names), {
        since: dayStart.toISOString(),
        limit: batches.namesPerDay,
      });
      if (!outcome.ok) {
        const used = outcome.used;
        const retryAfter = Math.max(1, Math.ceil((dayStart.getTime() + 86_400_000 - at.getTime()) / 1000));
        throw new ApiError('RATE_LIMITED', {
          message: `This batch of ${names.length} name(s) would take your organisation past its quota of ${batches.namesPerDay} names per day (${used} used today).`,
          why: `Batches are limited to ${batches.namesPerDay} names per organisation per UTC day; ${Math.max(0, batches.namesPerDay - used)} remain today.`,
          fix: `Send at most ${Math.max(0, batches.namesPerDay - used)} names now, or wait until the quota resets at 00:00 UTC (in ${retryAfter} seconds).`,
          retryAfter,
        });
      }
      request.auditResourceId = id;
      const batch = outcome.batch;
      // Stored first: if the queue refuses it now, the sweeper queues it later.
      await batches.dispatch(batch);
      return reply.code(202).send({ id: batch.id, status: batch.status, total: batch.total, createdAt: batch.createdAt });
    },
  );

  app.get(
    `${BATCHES_PATH}/:id`,
    {
      config: { audit: audit('view', 'viewed', 'id') },
      schema: routeSchema(common, 'Progress of a batch', BatchStatusBodySchema, { params: IdParams }),
    },
    async (request) => {
      const batch = await batches.store.get(organizationOf(request), request.params.id);
      if (!batch) throw notFound('Batch', request.params.id);
      return statusBody(batch, now());
    },
  );

  app.get(
    `${BATCHES_PATH}/:id/results`,
    {
      config: { audit: audit('read', 'read', 'id') },
      schema: {
        ...common,
        summary: 'Results of a batch, as JSON lines',
        description:
          'One JSON line per name (application/x-ndjson), in submission order, streamed. Each line carries a cursor: ' +
          'pass the last one read as ?after= to resume. While the batch runs, the stream ends at the first name not yet done, ' +
          'so resuming later never skips a line; once it is done (or cancelled) every stored line is sent.',
        params: IdParams,
        querystring: ResultsQuery,
        response: {
          200: { description: 'JSON lines', content: { [NDJSON]: { schema: BatchResultLineSchema } } },
          ...errorResponses(...COMMON_ERROR_STATUSES),
        },
      },
    },
    async (request, reply) => {
      const organizationId = organizationOf(request);
      const batch = await batches.store.get(organizationId, request.params.id);
      if (!batch) throw notFound('Batch', request.params.id);
      const after = request.query.after === undefined ? -1 : Number(request.query.after);
      const lines = Readable.from(resultLines(batches, organizationId, batch, after), { objectMode: false });
      // The schema documents one line; the body is a stream of them, which the type provider cannot express.
      return reply.type(NDJSON).header('x-batch-status', batch.status).send(lines as never);
    },
  );

  app.delete(
    `${BATCHES_PATH}/:id`,
    {
      config: { audit: audit('cancel', 'cancelled', 'id') },
      schema: routeSchema(common, 'Cancel a batch', BatchStatusBodySchema, { description: 'Names not yet checked are not checked; the lines already written stay readable. Cancelling a finished batch changes nothing.', params: IdParams }),
    },
    async (request) => {
      const batch = await batches.store.cancel(organizationOf(request), request.params.id, now().toISOString());
      if (!batch) throw notFound('Batch', request.params.id);
      return statusBody(batch, now());
    },
  );
};

function statusBody(batch: Batch, now: Date): Static<typeof BatchStatusBodySchema> {
  return {
    id: batch.id,
    status: batch.status,
    total: batch.total,
    done: batch.done,
    failed: batch.failed,
    createdAt: batch.createdAt,
    finishedAt: batch.finishedAt,
    namesPerSecond: namesPerSecond(batch, now),
  };
}

/** The stored lines after `after` as text, a page at a time; a running batch stops at its first gap. */
async function* resultLines(batches: BatchService, organizationId: string, batch: Batch, after: number): AsyncGenerator<string> {
  const contiguousOnly = batch.status === 'queued' || batch.status === 'running';
  for await (const page of resultPages(batches.store, organizationId, batch.id, after, contiguousOnly)) {
    let text = '';
    for (const row of page) text += withCursor(row);
    yield text;
  }
}
