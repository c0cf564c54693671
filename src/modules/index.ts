import type { FastifyPluginAsync } from 'fastify';
import { tagsRoutes } from './tags/tags.routes.js';
import { listsRoutes } from './lists/lists.routes.js';
import { proposalsRoutes } from './proposals/proposals.routes.js';
import { dealsRoutes } from './deals/deals.routes.js';
import { activitiesRoutes } from './activities/activities.routes.js';
import { contactsRoutes } from './contacts/contacts.routes.js';
import { webhooksRoutes } from './webhooks/webhooks.routes.js';
import { companiesRoutes } from './companies/companies.routes.js';
import { pipelinesRoutes } from './pipelines/pipelines.routes.js';
import { propertiesRoutes } from './properties/properties.routes.js';
import { formsRoutes } from './forms/forms.routes.js';
import { formsPublicRoutes } from './forms/forms.public.js';
import { referenceRoutes } from './reference/reference.routes.js';
import { eventsRoutes } from './events/events.routes.js';
import { auditRoutes } from './audit/audit.routes.js';
import { contactsByIds } from './contacts/contacts.service.js';
import { companiesByIds } from './companies/companies.service.js';
import { dealsByIds } from './deals/deals.service.js';
import type { RecordReaders } from './shared/records.js';

/**
 * How a write reaches the records of another resource (a deleted tag or company raises their `*.updated`):
 * each resource's single read, passed to the routes whose writes need them.
 */
const RECORD_READERS: RecordReaders = { contact: contactsByIds, company: companiesByIds, deal: dealsByIds };

/** Every resource's routes, registered under /api/v1 by app.ts. One line per module. */
export const MODULES: FastifyPluginAsync[] = [
  tagsRoutes(RECORD_READERS),
  listsRoutes,
  proposalsRoutes,
  dealsRoutes,
  activitiesRoutes,
  contactsRoutes,
  webhooksRoutes,
  companiesRoutes(RECORD_READERS),
  pipelinesRoutes,
  propertiesRoutes,
  formsRoutes,
  referenceRoutes,
  eventsRoutes,
  auditRoutes,
];

/** Routes outside /api/v1 that need no API key (public form intake at /f/…). */
export const PUBLIC_MODULES: FastifyPluginAsync[] = [formsPublicRoutes];
