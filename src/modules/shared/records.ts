import type { Ctx } from '../../http/context.js';

/**
 * Records of another resource as their single reads return them, for a write whose side effects reach
 * them (a deleted company clears `companyId` on its deals; a deleted tag leaves their `tags`) and must
 * raise their `*.updated` events. The writer receives the readers it needs from the module index
 * (modules/index.ts), which wires each resource's service in: the deals service already reads companies
 * (expansion) and tags, so the companies or tags service importing it would close an import cycle.
 */
export type RecordType = 'contact' | 'company' | 'deal';
export type RecordReader = (ctx: Ctx, ids: string[]) => Promise<Map<string, { id: string } & Record<string, unknown>>>;
export type RecordReaders = Readonly<Record<RecordType, RecordReader>>;

/** Live records among `ids`, by id (missing and soft-deleted ones are absent), as `read` returns them. */
export function recordsOf(read: RecordReader, ctx: Ctx, ids: string[]): Promise<Map<string, { id: string } & Record<string, unknown>>> {
  return ids.length ? read(ctx, ids) : Promise.resolve(new Map());
}
