import type { FastifyPluginAsync } from 'fastify';
import { tagsRoutes } from './tags/tags.routes.js';

/** Every resource's routes, registered under /api/v1 by app.ts. One line per module. */
export const MODULES: FastifyPluginAsync[] = [
  tagsRoutes,
];

/** Routes outside /api/v1 that need no API key (public form intake at /f/…). */
export const PUBLIC_MODULES: FastifyPluginAsync[] = [];
