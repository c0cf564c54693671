import createOpenApiClient, { type FetchResponse, type MaybeOptionalInit, type Middleware } from 'openapi-fetch';
import type { HttpMethod, MediaType, PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import { CrmApiError } from './errors.js';
import { paginator, type Paginate } from './paginate.js';
import { retryingFetch, type FetchLike, type RetryOptions } from './retry.js';
import type { paths } from './schema.js';

export interface ClientOptions {
  /** The service's root, e.g. `https://crm.example.com` (paths carry `/api/v1`). */
  baseUrl: string;
  /** `crm_live_…`, sent as `X-API-Key`. */
  apiKey: string;
  /** Retries of 429/503/network failures (a number: how many; default 2), or their settings; 0 turns them off. */
  retries?: number | RetryOptions;
  /** The `fetch` to use (default: the global one); tests and proxies plug in here. */
  fetch?: FetchLike;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
}

type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];
/** A call's result once errors are thrown: only the success branch of openapi-fetch's `{ data, error }`. */
type Success<R> = R extends { data: infer D; error?: never } ? { data: D; response: Response } : never;

/**
 * openapi-fetch's method, typed by the generated `paths`: the path, its parameters and body are checked,
 * and `data` is the 2xx body. Non-2xx answers throw `CrmApiError`, so `data` is always there.
 */
export type CrmMethod<M extends HttpMethod> = <P extends PathsWithMethod<paths, M>, Init extends MaybeOptionalInit<paths[P], M>>(
  url: P,
  ...init: InitParam<Init>
) => Promise<Success<FetchResponse<Operation<P, M>, Init, MediaType>>>;
type Operation<P extends keyof paths, M extends HttpMethod> = paths[P] extends { [K in M]: infer Op extends Record<string, any> } ? Op : never;

/** The JSON body of an operation, e.g. `RequestBody<'/api/v1/contacts/search'>`, to build one before the call. */
export type RequestBody<P extends keyof paths, M extends HttpMethod = 'post'> = paths[P] extends {
  [K in M]: { requestBody?: { content: { 'application/json': infer B } } };
}
  ? B
  : never;

/** A record as its restore answers it (the single read's schema). */
type Restored<P extends RestorePath> = paths[P] extends { post: { responses: { 200: { content: { 'application/json': infer R } } } } } ? R : never;
type RestorePath =
  | '/api/v1/contacts/{id}/restore'
  | '/api/v1/companies/{id}/restore'
  | '/api/v1/deals/{id}/restore'
  | '/api/v1/proposals/{id}/restore'
  | '/api/v1/lists/{id}/restore';

/** The operations of a resource with soft delete that have a name of their own (restore: CONTRACT D.1). */
export interface Restorable<P extends RestorePath> {
  /** Brings back a record deleted within the restore window; resolves to it as its single read answers it. */
  restore(id: string): Promise<Restored<P>>;
}

type DuplicatesPath = '/api/v1/contacts/duplicates' | '/api/v1/companies/duplicates';
type DuplicatesQuery<P extends DuplicatesPath> = NonNullable<paths[P]['get']['parameters']['query']>;
type DuplicatesPage<P extends DuplicatesPath> = paths[P]['get']['responses'][200]['content']['application/json'];

/** Probable duplicates of contacts or companies (CONTRACT D.3). */
export interface WithDuplicates<P extends DuplicatesPath> {
  /** One page of pairs of records that are probably the same, most likely first; pass `pagination.nextCursor` back as `cursor` (with the same `reason`) for the next. */
  duplicates(query?: DuplicatesQuery<P>): Promise<DuplicatesPage<P>>;
}

type MergePath = '/api/v1/contacts/merge' | '/api/v1/companies/merge';
type Merged<P extends MergePath> = paths[P]['post']['responses'][200]['content']['application/json'];

/** Two records of one person or organization folded into one (CONTRACT D.2). */
export interface Mergeable<P extends MergePath> {
  /** Folds `mergedId` into `primaryId` (references re-pointed, the merged record deleted); resolves to the primary afterwards. */
  merge(primaryId: string, mergedId: string): Promise<Merged<P>>;
}

/** A person's request to be forgotten (CONTRACT D.5). */
export interface Erasable {
  /** Erases a contact for good, with its values in stored events, submissions and idempotent answers (scope `contacts:erase`). */
  erase(id: string): Promise<void>;
}

type AuditQuery = NonNullable<paths['/api/v1/audit-log']['get']['parameters']['query']>;
type AuditPage = paths['/api/v1/audit-log']['get']['responses'][200]['content']['application/json'];

/** The audit log (CONTRACT D.4). */
export interface AuditLog {
  /** One page of entries, newest first; pass `pagination.nextCursor` back as `cursor` for the next one (or use `paginate`). */
  list(query?: AuditQuery): Promise<AuditPage>;
}

export interface CrmClient {
  GET: CrmMethod<'get'>;
  POST: CrmMethod<'post'>;
  PATCH: CrmMethod<'patch'>;
  DELETE: CrmMethod<'delete'>;
  /** Every record of a paginated list, page after page (see paginate.ts). */
  paginate: Paginate;
  /** Adds openapi-fetch middleware (runs before the answer is turned into a `CrmApiError`). */
  use(...middleware: Middleware[]): void;
  contacts: Restorable<'/api/v1/contacts/{id}/restore'> & WithDuplicates<'/api/v1/contacts/duplicates'> & Mergeable<'/api/v1/contacts/merge'> & Erasable;
  companies: Restorable<'/api/v1/companies/{id}/restore'> & WithDuplicates<'/api/v1/companies/duplicates'> & Mergeable<'/api/v1/companies/merge'>;
  deals: Restorable<'/api/v1/deals/{id}/restore'>;
  proposals: Restorable<'/api/v1/proposals/{id}/restore'>;
  lists: Restorable<'/api/v1/lists/{id}/restore'>;
  auditLog: AuditLog;
}

/** Non-2xx → CrmApiError. Registered first, so its onResponse runs last, after any user middleware. */
const throwOnError: Middleware = {
  async onResponse({ request, response }) {
    if (!response.ok) throw await CrmApiError.fromResponse(request, response);
    return undefined;
  },
};

export function createClient(options: ClientOptions): CrmClient {
  const retry = typeof options.retries === 'number' ? { retries: options.retries } : options.retries;
  const client = createOpenApiClient<paths>({
    baseUrl: options.baseUrl,
    headers: { ...options.headers, 'X-API-Key': options.apiKey },
    fetch: retryingFetch(options.fetch ?? ((request, init) => globalThis.fetch(request, init)), retry),
  });
  client.use(throwOnError);
  const crm = {
    GET: client.GET,
    POST: client.POST,
    PATCH: client.PATCH,
    DELETE: client.DELETE,
    use: (...middleware: Middleware[]) => client.use(...middleware),
  } as unknown as Pick<CrmClient, 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'use'>;
  const restorable = <P extends RestorePath>(path: P): Restorable<P> => ({
    restore: async (id) => {
      const { data } = await (crm.POST as unknown as (p: string, init: unknown) => Promise<{ data: Restored<P> }>)(path, { params: { path: { id } } });
      return data;
    },
  });
  const withDuplicates = <P extends DuplicatesPath>(path: P): WithDuplicates<P> => ({
    duplicates: async (query) => {
      const { data } = await (crm.GET as unknown as (p: string, init: unknown) => Promise<{ data: DuplicatesPage<P> }>)(path, { params: { query } });
      return data;
    },
  });
  const mergeable = <P extends MergePath>(path: P): Mergeable<P> => ({
    merge: async (primaryId, mergedId) => {
      const { data } = await (crm.POST as unknown as (p: string, init: unknown) => Promise<{ data: Merged<P> }>)(path, { body: { primaryId, mergedId } });
      return data;
    },
  });
  const erase = async (id: string): Promise<void> => {
    await crm.POST('/api/v1/contacts/{id}/erase', { params: { path: { id } } });
  };
  return {
    ...crm,
    paginate: paginator(crm),
    contacts: {
      ...restorable('/api/v1/contacts/{id}/restore'),
      ...withDuplicates('/api/v1/contacts/duplicates'),
      ...mergeable('/api/v1/contacts/merge'),
      erase,
    },
    companies: { ...restorable('/api/v1/companies/{id}/restore'), ...withDuplicates('/api/v1/companies/duplicates'), ...mergeable('/api/v1/companies/merge') },
    deals: restorable('/api/v1/deals/{id}/restore'),
    proposals: restorable('/api/v1/proposals/{id}/restore'),
    lists: restorable('/api/v1/lists/{id}/restore'),
    auditLog: {
      list: async (query) => (await crm.GET('/api/v1/audit-log', { params: { query } })).data as AuditPage,
    },
  };
}
