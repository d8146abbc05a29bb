/**
 * Probes for orchestrators: `GET /healthz` (the process is up and serving) and `GET /readyz` (the
 * stores answer: `stores.health()`; 503 STORE_UNAVAILABLE when they do not, the reason in the
 * server log only, since it names the database's address). Both
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
        description:
          'Answers 503 STORE_UNAVAILABLE while the database cannot be reached (and SERVICE_UNAVAILABLE while shutting down). The reason goes to the server log only: this route is public, and the reason names hosts and files.',
        security: [],
        response: { 200: Type.Object({ status: Type.Literal('ready') }), ...errorResponses(503) },
      },
    },
    async (request) => {
      const health = await stores.health();
      if (!health.ok) {
        // The driver's words name the database's address: the operator reads them in the server log.
        request.log.warn({ reason: health.reason }, 'not ready: the store does not answer');
        throw new ApiError('STORE_UNAVAILABLE', { message: 'The database cannot be reached.' });
      }
      return { status: 'ready' as const };
    },
  );
};
