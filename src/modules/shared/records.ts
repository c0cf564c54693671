import type { Ctx } from '../../http/context.js';

/**
 * Records of another resource as their single reads return them, for a write whose side effects reach
 * them (a deleted company clears `companyId` on its deals; a deleted tag leaves their `tags`) and must
 * raise their `*.updated` events. Each resource's service provides its reader when it loads: the deals
 * service already reads companies (expansion), so the companies service importing it would close an
 * import cycle.
 */
export type RecordType = 'contact' | 'company' | 'deal';
type Reader = (ctx: Ctx, ids: string[]) => Promise<Map<string, { id: string } & Record<string, unknown>>>;

const readers = new Map<RecordType, Reader>();

export function provideRecordReader(type: RecordType, reader: Reader): void {
  readers.set(type, reader);
}

/** Live records of `type` among `ids`, by id (missing and soft-deleted ones are absent). */
export function recordsOf(ctx: Ctx, type: RecordType, ids: string[]): Promise<Map<string, { id: string } & Record<string, unknown>>> {
  const reader = readers.get(type);
  if (!reader) throw new Error(`no record reader for ${type}: its service module was not loaded`);
  return ids.length ? reader(ctx, ids) : Promise.resolve(new Map());
}
