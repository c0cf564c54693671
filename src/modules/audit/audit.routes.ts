import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ctxOf } from '../../http/context.js';
import { errorResponses } from '../../http/schemas.js';
import * as service from './audit.service.js';
import { AuditListQuery, AuditPage } from './audit.schema.js';

const AUDIT_DOC = [
  'Requires scope `audit:read` (`*` covers it). Who changed what, newest first: every change made through the API (actor `api_key`, with the key’s id and name), ' +
    'by a public form’s submission (`public_form`), by the operator’s command line (`operator`: keys created and revoked, setups applied) and by the service itself ' +
    '(`system`: webhooks disabled, deleted records purged after the restore window). `action` is the change’s event type (`contact.updated`, `contact.restored`) or, for a ' +
    'change that raises no event, its own name (`proposal.created`, `list.updated`, `webhook.secret_rotated`, `webhook.delivery_retried`, `api_key.created`).',
  '`changes` names the fields the change set or changed, never their values: the change’s event (`GET /events`) carries them. Each entry is written in the same ' +
    'transaction as its change. The log is append-only: no call changes or deletes an entry; entries older than the retention period (365 days by default) are deleted.',
  'Filters combine (AND). Paged by cursor: `pagination.nextCursor`, with the same filters, gives the next, older entries; `total` is `null`.',
].join('\n\n');

/** CONTRACT D.4: the audit log. */
export const auditRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/audit-log',
    {
      config: { scopes: ['audit:read'] },
      schema: {
        tags: ['Audit log'],
        operationId: 'listAuditLog',
        summary: 'List audit-log entries',
        description: AUDIT_DOC,
        querystring: AuditListQuery,
        response: { 200: AuditPage, ...errorResponses(400) },
      },
    },
    async (req) => service.listAudit(ctxOf(req), req.query, req.principal.keyId),
  );
};
