import type { Db } from '../../db/index.js';
import { errors } from '../../errors.js';
import { inIdSet, onlyId, preparedByIdSet } from '../../db/batch.js';
import { prepared } from '../../db/prepared.js';

/**
 * Existence checks for ids given inside bodies (B.2): an id that does not exist in the tenant, or is
 * soft-deleted, is 404 `not_found` naming the field. One place, so every resource answers alike.
 */
export type RefKind = 'contact' | 'company' | 'deal' | 'user' | 'pipeline' | 'stage' | 'lossReason' | 'tag' | 'proposal' | 'list';

const TABLES: Record<RefKind, { table: string; softDelete: boolean }> = {
  contact: { table: 'contacts', softDelete: true },
  company: { table: 'companies', softDelete: true },
  deal: { table: 'deals', softDelete: true },
  user: { table: 'users', softDelete: false },
  pipeline: { table: 'pipelines', softDelete: false },
  stage: { table: 'stages', softDelete: false },
  lossReason: { table: 'loss_reasons', softDelete: false },
  tag: { table: 'tags', softDelete: false },
  proposal: { table: 'proposals', softDelete: true },
  list: { table: 'lists', softDelete: true },
};

function existing(db: Db, kind: RefKind) {
  const { table, softDelete } = TABLES[kind];
  const q = db.selectFrom(table as 'contacts').select('id');
  return softDelete ? q.where('deleted_at', 'is', null) : q;
}

/** One id, the common case (a `companyId`, an `ownerId`): compiled once per kind (db/prepared.ts). */
const oneExisting = Object.fromEntries(
  (Object.keys(TABLES) as RefKind[]).map((kind) => [
    kind,
    prepared((db: Db, tenantId: string, id: string) => existing(db, kind).where('tenant_id', '=', tenantId).where('id', '=', id)),
  ]),
) as Record<RefKind, (db: Db, tenantId: string, id: string) => Promise<{ id: string }[]>>;

/** Several ids (a `tags` array, a batch's references): one statement per kind too, any number of ids (db/batch.ts inIdSet). */
const manyExisting = Object.fromEntries(
  (Object.keys(TABLES) as RefKind[]).map((kind) => [
    kind,
    preparedByIdSet((db: Db, tenantId: string, ids: unknown) =>
      existing(db, kind)
        .where('tenant_id', '=', tenantId)
        .where(inIdSet(db, 'id', ids)),
    ),
  ]),
) as Record<RefKind, (db: Db, tenantId: string, ids: readonly string[]) => Promise<{ id: string }[]>>;

/** The subset of `ids` that exist (and are not deleted) in the tenant. */
export async function existingIds(db: Db, tenantId: string, kind: RefKind, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const one = onlyId(ids);
  const rows = one !== undefined ? await oneExisting[kind](db, tenantId, one) : await manyExisting[kind](db, tenantId, ids);
  return new Set(rows.map((r) => r.id));
}

/** Throws 404 naming `field` when `id` (if given and not null) does not exist in the tenant. */
export async function assertRef(db: Db, tenantId: string, kind: RefKind, field: string, id: string | null | undefined): Promise<void> {
  if (id === undefined || id === null) return;
  const found = await existingIds(db, tenantId, kind, [id]);
  if (!found.has(id)) throw errors.refNotFound(field, id);
}

/** Checks several references at once: `{ companyId: ['company', id], ownerId: ['user', id] }`. */
export async function assertRefs(db: Db, tenantId: string, refs: Record<string, [RefKind, string | null | undefined]>): Promise<void> {
  for (const [field, [kind, id]] of Object.entries(refs)) await assertRef(db, tenantId, kind, field, id);
}

/** Throws 404 naming `field[i]` for the first id of the array that does not exist. */
export async function assertRefArray(db: Db, tenantId: string, kind: RefKind, field: string, ids: string[]): Promise<void> {
  const found = await existingIds(db, tenantId, kind, ids);
  const i = ids.findIndex((id) => !found.has(id));
  if (i >= 0) throw errors.refNotFound(`${field}[${i}]`, ids[i]);
}
