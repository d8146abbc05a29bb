/**
 * The lookalikes a monitor remembers (issue 41), under `/api/tools/v1/spoof-checker/monitors/{id}/lookalikes`:
 * every name its searches have found, with first and last seen, the confirmed state and every change
 * of it; and a person's mark "ours", which keeps a name out of alerts. Organisation-scoped (another
 * organisation's monitor is not found). The memory itself is src/jobs/monitors/lookalike-memory.ts.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { normaliseDomainInput } from '@spoof-checker/engine';
import type { MonitorService } from '../../jobs/monitors/monitors.js';
import type { RememberedLookalike } from '../../store/remembered-lookalikes.js';
import type { AuditSpec } from '../context.js';
import { ApiError, notFound } from '../errors.js';
import { API_SECURITY, COMMON_ERROR_STATUSES, DEFAULT_PAGE_LIMIT, errorResponses, pageQuery } from '../schemas.js';
import { principalOf } from './logs.js';
import { MONITORS_PATH } from './monitors.js';

const audit = (verb: string, past: string): AuditSpec => ({ service: 'tools', resource: 'monitor', verb, past, idParam: 'id' });

const StateSchema = Type.Object({
  registered: Type.Boolean(),
  mx: Type.Boolean({ description: 'It receives mail (MX hosts, or an address with no MX)' }),
  spf: Type.Boolean({ description: 'Its SPF record authorises senders' }),
  grade: Type.String({ description: 'critical, high, medium, protected or none' }),
});

/** One remembered lookalike as the API shows it. */
export const RememberedLookalikeSchema = Type.Object({
  object: Type.Literal('lookalike'),
  domain: Type.String({ description: 'A-labels' }),
  unicode: Type.String(),
  firstSeen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a search first saw it registered' }),
  lastSeen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a search last saw it registered' }),
  state: StateSchema,
  pending: Type.Union([Type.Object({ state: StateSchema, seen: Type.Integer() }), Type.Null()], { description: 'A different state seen once, waiting for a second search to confirm it' }),
  ours: Type.Boolean({ description: 'Marked as the organisation\'s own: never alerted' }),
  history: Type.Array(
    Type.Object({
      at: Type.String({ format: 'date-time' }),
      change: Type.Enum(['registered', 'unregistered', 'mx-published', 'mx-removed', 'spf-published', 'spf-removed', 'grade-up', 'grade-down']),
      before: Type.String(),
      after: Type.String(),
    }),
    { description: 'Every confirmed change of state, oldest first (the newest 100)' },
  ),
});

/** A remembered lookalike as the API shows it. */
export function rememberedLookalikeBody(entry: RememberedLookalike): Static<typeof RememberedLookalikeSchema> {
  return {
    object: 'lookalike',
    domain: entry.domain,
    unicode: entry.unicode,
    firstSeen: entry.firstSeen,
    lastSeen: entry.lastSeen,
    state: entry.state,
    pending: entry.pending,
    ours: entry.ours,
    history: entry.history,
  };
}

const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
const NameParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }), domain: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
const PageQuery = Type.Object(pageQuery(DEFAULT_PAGE_LIMIT), { additionalProperties: false });

/** The remembered-lookalike routes. */
export const monitorLookalikeRoutes: FastifyPluginAsyncTypebox<{ monitors: MonitorService }> = async (app, { monitors }) => {
  const common = { tags: ['monitors'], security: API_SECURITY };
  const errors = errorResponses(...COMMON_ERROR_STATUSES);
  const store = monitors.lookalikes!;

  app.get(
    `${MONITORS_PATH}/:id/lookalikes`,
    {
      config: { audit: audit('view_lookalikes', 'viewed_lookalikes') },
      schema: {
        ...common,
        summary: 'The lookalikes a monitor remembers',
        description:
          'Every name the monitor\'s lookalike searches (checks: ["lookalikes"]) have found: first and last seen registered, the confirmed state (registered, MX, SPF, grade: a new state is believed when two searches in a row see it), every change of state, and whether it is marked ours. Registered first, worst grade first, then by name.',
        params: IdParams,
        querystring: PageQuery,
        response: {
          200: Type.Object({ lookalikes: Type.Array(RememberedLookalikeSchema), total: Type.Integer(), page: Type.Integer(), limit: Type.Integer(), event: Type.Literal('monitor.lookalikes') }),
          ...errors,
        },
      },
    },
    async (request) => {
      const organizationId = principalOf(request).organizationId;
      if (!(await monitors.store.get(organizationId, request.params.id))) throw notFound('Monitor', request.params.id);
      const page = request.query.page ?? 1;
      const limit = request.query.limit ?? DEFAULT_PAGE_LIMIT;
      const result = await store.list(organizationId, request.params.id, { page, limit });
      return { lookalikes: result.items.map(rememberedLookalikeBody), total: result.total, page, limit, event: 'monitor.lookalikes' as const };
    },
  );

  app.patch(
    `${MONITORS_PATH}/:id/lookalikes/:domain`,
    {
      config: { audit: audit('mark_lookalike', 'marked_lookalike') },
      schema: {
        ...common,
        summary: 'Mark a lookalike as ours (or not)',
        description: 'A name marked ours (a defensive registration) is still remembered and listed, and never alerted. The name is given in A-labels or Unicode.',
        params: NameParams,
        body: Type.Object({ ours: Type.Boolean() }, { additionalProperties: false }),
        response: { 200: RememberedLookalikeSchema, ...errors },
      },
    },
    async (request) => {
      const organizationId = principalOf(request).organizationId;
      if (!(await monitors.store.get(organizationId, request.params.id))) throw notFound('Monitor', request.params.id);
      const name = normaliseDomainInput(request.params.domain);
      if (!name.ok) throw new ApiError('INVALID_DOMAIN', { message: name.message, fix: name.fix });
      const updated = await store.setOurs(organizationId, request.params.id, name.domain, request.body.ours);
      if (!updated) throw notFound('Lookalike', name.domain);
      return rememberedLookalikeBody(updated);
    },
  );
};
