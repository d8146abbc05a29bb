/**
 * The one shape of the API's plain lists (`GET` a page of the organisation's items, newest first):
 * `page` and `limit` in the query string (spec: Pagination rules 1–3), `{ <key>: [...], total, page,
 * limit, event }` back. Email logs, domains and templates are listed this way.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { Page, PageRequest } from '../../store/types.js';
import type { Principal } from '../context.js';
import { COMMON_ERROR_STATUSES, DEFAULT_PAGE_LIMIT, errorResponses, pageQuery } from '../schemas.js';
import { principalOf } from './logs.js';

/** What one list route is. */
export interface PagedListRoute<T> {
  path: string;
  /** The record log's audit entry (verb `list`). */
  audit: { service: string; resource: string };
  tag: string;
  summary: string;
  security: { [scheme: string]: string[] }[];
  /** The body's field that holds the items, and their schema. */
  key: string;
  item: TSchema;
  /** The body's `event` (e.g. `domain.list`). */
  event: string;
  list: (organizationId: string, page: PageRequest) => Promise<Page<T>>;
  body: (item: T) => unknown;
}

/** Registers one paged list route on `app`. */
export function registerPagedList<T>(app: FastifyInstance<any, any, any, any, any>, route: PagedListRoute<T>): void {
  app.get(
    route.path,
    {
      config: { audit: { ...route.audit, verb: 'list', past: 'listed' } },
      schema: {
        tags: [route.tag],
        security: route.security,
        summary: route.summary,
        querystring: Type.Object(pageQuery(DEFAULT_PAGE_LIMIT), { additionalProperties: false }),
        response: {
          200: Type.Object({ [route.key]: Type.Array(route.item), total: Type.Integer(), page: Type.Integer(), limit: Type.Integer(), event: Type.Literal(route.event) }),
          ...errorResponses(...COMMON_ERROR_STATUSES),
        },
      },
    },
    async (request: { query: unknown; principal: Principal | null }) => {
      const query = request.query as { page?: number; limit?: number };
      const page = query.page ?? 1;
      const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
      const result = await route.list(principalOf(request).organizationId, { page, limit });
      return { [route.key]: result.items.map(route.body), total: result.total, page, limit, event: route.event };
    },
  );
}
