import type { PathsWithMethod, RequiredKeysOf } from 'openapi-typescript-helpers';
import type { CrmClient } from './client.js';
import type { paths } from './schema.js';

type Json200<Op> = Op extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;
type Envelope = { data: unknown[]; pagination: { nextCursor: string | null } };
/** B is a page of a cursor-paginated list (`never`, an operation without a 200 JSON answer, is not). */
type IsEnvelope<B> = [B] extends [never] ? false : B extends Envelope ? true : false;
type GetPath = PathsWithMethod<paths, 'get'>;
type PostPath = PathsWithMethod<paths, 'post'>;

/** GET lists with the C.1 envelope (`pagination.nextCursor`): contacts, companies, deals, proposals, list members, submissions, events. */
type EnvelopeGetPath = { [P in GetPath]: IsEnvelope<Json200<paths[P]['get']>> extends true ? P : never }[GetPath];
/** GET lists answering a bare array with a `Link: <…>; rel="next"` header (C.1). */
type LinkGetPath = Extract<GetPath, '/api/v1/webhooks/{id}/deliveries'>;
/** POST lists taking the cursor in the body: `POST /contacts/search`. */
type EnvelopePostPath = { [P in PostPath]: IsEnvelope<Json200<paths[P]['post']>> extends true ? P : never }[PostPath];

export type PaginatedPath = EnvelopeGetPath | LinkGetPath | EnvelopePostPath;

type Page<P extends PaginatedPath> = P extends EnvelopePostPath ? Json200<paths[P]['post']> : P extends GetPath ? Json200<paths[P]['get']> : never;
/** The record type a paginated path yields. */
export type Item<P extends PaginatedPath> = Page<P> extends { data: (infer T)[] } ? T : Page<P> extends (infer T)[] ? T : never;

type GetParams<P extends GetPath> = paths[P]['get'] extends { parameters: infer X } ? X : never;
type PostBody<P extends PostPath> = paths[P]['post'] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The first page's parameters: `{ path?, query? }` of a GET list, `{ body }` of a POST list. */
export type PaginateArgs<P extends PaginatedPath> = P extends EnvelopePostPath
  ? [params: { body: PostBody<P> }]
  : P extends GetPath
    ? RequiredKeysOf<GetParams<P>> extends never
      ? [params?: GetParams<P>]
      : [params: GetParams<P>]
    : never;

/**
 * `for await (const contact of crm.paginate('/api/v1/contacts', { query: { pageSize: 100 } }))`: every
 * record of a list, fetching the next page only when the previous one is consumed. It follows
 * `pagination.nextCursor` (in the query, or in the body for `POST /contacts/search`) and, for webhook
 * deliveries, the `Link: <…>; rel="next"` header, repeating the first page's other parameters as the
 * cursor requires. The walk ends on the last page; breaking out of the loop stops it.
 */
export type Paginate = <P extends PaginatedPath>(path: P, ...args: PaginateArgs<P>) => AsyncGenerator<Item<P>, void, undefined>;

type AnyParams = { path?: Record<string, unknown>; query?: Record<string, unknown> };
type AnyCall = (path: string, init: Record<string, unknown>) => Promise<{ data: any; response: Response }>;

export function paginator(crm: Pick<CrmClient, 'GET' | 'POST'>): Paginate {
  const get = crm.GET as unknown as AnyCall;
  const post = crm.POST as unknown as AnyCall;

  async function* walk(path: string, params: AnyParams | { body: Record<string, unknown> } = {}): AsyncGenerator<unknown, void, undefined> {
    if ('body' in params) {
      let body = params.body;
      for (;;) {
        const { data: page } = await post(path, { body });
        yield* page.data;
        if (!page.pagination.nextCursor) return;
        const { page: _offset, ...rest } = body;
        body = { ...rest, cursor: page.pagination.nextCursor };
      }
    }
    let query = params.query ?? {};
    for (;;) {
      const { data: page, response } = await get(path, { params: { ...params, query } });
      const cursor = Array.isArray(page) ? nextLinkCursor(response) : page.pagination.nextCursor;
      yield* Array.isArray(page) ? page : page.data;
      if (!cursor) return;
      // A cursor replaces `page` (both together are 400); every other parameter stays as on the first page.
      const { page: _offset, ...rest } = query;
      query = { ...rest, cursor };
    }
  }
  return walk as unknown as Paginate;
}

/** The `cursor` of the `rel="next"` target of a Link header (RFC 8288), or null on the last page. */
export function nextLinkCursor(response: Response): string | null {
  const link = response.headers.get('link');
  if (!link) return null;
  // Each link is `<target>` followed by its `; name=value` parameters; a target may itself hold commas.
  for (const [, target, linkParams] of link.matchAll(/<([^>]*)>([^<]*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^;,\s]+))/i.exec(linkParams);
    if (rel && (rel[1] ?? rel[2]).toLowerCase().split(/\s+/).includes('next')) {
      return new URL(target, response.url || 'http://localhost/').searchParams.get('cursor');
    }
  }
  return null;
}
