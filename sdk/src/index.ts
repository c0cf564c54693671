export { createClient, type ClientOptions, type CrmClient, type CrmMethod, type RequestBody } from './client.js';
export { CrmApiError, type ErrorBody, type ErrorDetail } from './errors.js';
export { nextLinkCursor, type Item, type PaginateArgs, type PaginatedPath } from './paginate.js';
export { retryingFetch, type FetchLike, type RetryOptions } from './retry.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyOptions,
  type WebhookHeaders,
  type WebhookPayload,
  type WebhookVerificationReason,
} from './webhooks.js';
export type { components, operations, paths, webhooks } from './schema.js';
