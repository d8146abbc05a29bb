/**
 * Probes for orchestrators: `GET /healthz` (the process is up and serving) and `GET /readyz` (the
 * stores answer: `stores.health()`; 503 STORE_UNAVAILABLE with the reason when they do not). Both
 * are public and not written to the record log, so a probe every second costs nothing.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Stores } from '../../store/types.js';
import { ApiError } from '../errors.js';
import { errorResponses } from '../schemas.js';

/** Liveness path. */
export const HEALTH_PATH = '/healthz';
/** Readiness path. */
export const READY_PATH = '/readyz';

/** Options of the health routes. */
export interface HealthRouteOptions {
  stores: Stores;
}

/** The health routes. */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthRouteOptions> = async (app, { stores }) => {
  const config = { public: true };
  app.get(
    HEALTH_PATH,
    {
      config,
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process is up',
        security: [],
        response: { 200: Type.Object({ status: Type.Literal('ok') }), ...errorResponses(503) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    READY_PATH,
    {
      config,
      schema: {
        tags: ['operations'],
        summary: 'Readiness: the stores answer',
        description: 'Answers 503 STORE_UNAVAILABLE, with the reason, while the database cannot be reached (and SERVICE_UNAVAILABLE while shutting down).',
        security: [],
        response: { 200: Type.Object({ status: Type.Literal('ready') }), ...errorResponses(503) },
      },
    },
    async () => {
      const health = await stores.health();
      if (!health.ok) throw new ApiError('STORE_UNAVAILABLE', { message: `The database cannot be reached: ${health.reason}` });
      return { status: 'ready' as const };
    },
  );
};
