/**
 * The one shape of the API's plain lists (`GET` a page of the organisation's items, newest first):
 * `page` and `limit` in the query string (spec: Pagination rules 1–3), `{ <key>: [...], total, page,
 * limit, event }` back. Email logs, domains and templates are listed this way, and a monitor's
 * history and deliveries (under its id: an id of no monitor of the organisation is 404).
 */
import type { FastifyInstance } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { Page, PageRequest } from '../../store/types.js';
import { principalOf, type Principal } from '../context.js';
import { notFound } from '../errors.js';
import { COMMON_ERROR_STATUSES, DEFAULT_PAGE_LIMIT, errorResponses, pageQuery } from '../schemas.js';

/** What one list route is. */
export interface PagedListRoute<T> {
  path: string;
  /** The record log's audit entry (verb `list` unless given). */
  audit: { service: string; resource: string; verb?: string; past?: string; idParam?: string };
  tag: string;
  summary: string;
  description?: string;
  /** The path's parameters (an id), when the list is of one resource's items. */
  params?: TSchema;
  /** What the id names, for the 404 when `list` finds nothing under it (e.g. "Monitor"). */
  owner?: string;
  security: { [scheme: string]: string[] }[];
  /** The body's field that holds the items, and their schema. */
  key: string;
  item: TSchema;
  /** The body's `event` (e.g. `domain.list`); none when left out (the report routes). */
  event?: string;
  /** The page; undefined when the resource the path names does not exist (404 naming `owner`). */
  list: (organizationId: string, page: PageRequest, params: Record<string, string>) => Promise<Page<T> | undefined>;
  body: (item: T) => unknown;
}

/** Registers one paged list route on `app`. */
export function registerPagedList<T>(app: FastifyInstance<any, any, any, any, any>, route: PagedListRoute<T>): void {
  app.get(
    route.path,
    {
      config: { audit: { verb: 'list', past: 'listed', ...route.audit } },
      schema: {
        tags: [route.tag],
        security: route.security,
        summary: route.summary,
        ...(route.description !== undefined ? { description: route.description } : {}),
        ...(route.params !== undefined ? { params: route.params } : {}),
        querystring: Type.Object(pageQuery(DEFAULT_PAGE_LIMIT), { additionalProperties: false }),
        response: {
          200: Type.Object({ [route.key]: Type.Array(route.item), total: Type.Integer(), page: Type.Integer(), limit: Type.Integer(), ...(route.event !== undefined ? { event: Type.Literal(route.event) } : {}) }),
          ...errorResponses(...COMMON_ERROR_STATUSES),
        },
      },
    },
    async (request: { query: unknown; params: unknown; principal: Principal | null }) => {
      const query = request.query as { page?: number; limit?: number };
      const params = (request.params ?? {}) as Record<string, string>;
      const page = query.page ?? 1;
      const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
      const result = await route.list(principalOf(request).organizationId, { page, limit }, params);
      if (result === undefined) throw notFound(route.owner ?? 'Resource', params['id'] ?? '');
      return { [route.key]: result.items.map(route.body), total: result.total, page, limit, ...(route.event !== undefined ? { event: route.event } : {}) };
    },
  );
}
