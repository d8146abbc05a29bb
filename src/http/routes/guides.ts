/**
 * `GET /guides/:topic`: the pages `nextStep.href` links to (docs/guides/<topic>.md), public and
 * served as Markdown, so the links in a spoof check result work against this service itself.
 */
import { readFile } from 'node:fs/promises';
import type { FastifyPluginAsync } from 'fastify';
import { GUIDE_TOPICS } from '../../verdict/index.js';
import { ApiError } from '../errors.js';

/** Where the guide pages live, from src/http/routes or dist/http/routes alike. */
const GUIDES_DIR = new URL('../../../docs/guides/', import.meta.url);

/** The guide routes. */
export const guideRoutes: FastifyPluginAsync = async (app) => {
  const topics = new Set<string>(GUIDE_TOPICS);
  app.get<{ Params: { topic: string } }>('/guides/:topic', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const { topic } = request.params;
    if (!topics.has(topic)) {
      throw new ApiError('ROUTE_NOT_FOUND', { message: `There is no guide "${topic}". Guides: ${GUIDE_TOPICS.join(', ')}.` });
    }
    const text = await readFile(new URL(`${topic}.md`, GUIDES_DIR), 'utf8');
    return reply.type('text/markdown; charset=utf-8').send(text);
  });
};
