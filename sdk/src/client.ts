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

export interface CrmClient {
  GET: CrmMethod<'get'>;
  POST: CrmMethod<'post'>;
  PATCH: CrmMethod<'patch'>;
  DELETE: CrmMethod<'delete'>;
  /** Every record of a paginated list, page after page (see paginate.ts). */
  paginate: Paginate;
  /** Adds openapi-fetch middleware (runs before the answer is turned into a `CrmApiError`). */
  use(...middleware: Middleware[]): void;
  contacts: Restorable<'/api/v1/contacts/{id}/restore'> & WithDuplicates<'/api/v1/contacts/duplicates'>;
  companies: Restorable<'/api/v1/companies/{id}/restore'> & WithDuplicates<'/api/v1/companies/duplicates'>;
  deals: Restorable<'/api/v1/deals/{id}/restore'>;
  proposals: Restorable<'/api/v1/proposals/{id}/restore'>;
  lists: Restorable<'/api/v1/lists/{id}/restore'>;
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
  return {
    ...crm,
    paginate: paginator(crm),
    contacts: { ...restorable('/api/v1/contacts/{id}/restore'), ...withDuplicates('/api/v1/contacts/duplicates') },
    companies: { ...restorable('/api/v1/companies/{id}/restore'), ...withDuplicates('/api/v1/companies/duplicates') },
    deals: restorable('/api/v1/deals/{id}/restore'),
    proposals: restorable('/api/v1/proposals/{id}/restore'),
    lists: restorable('/api/v1/lists/{id}/restore'),
  };
}
