import type { ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

/**
 * Answers `status` with the value `result` resolves to. The handler returns the value rather than the
 * reply (`reply.code(201).send(...)`): an async handler that returns the reply makes Fastify wait for the
 * response's end through stream listeners (`Reply.then`), which every idempotent POST paid, its onSend
 * hook being async (plugins/idempotency.ts): about 3 µs a call.
 */
export async function answer<T>(reply: FastifyReply, status: number, result: Promise<T> | T): Promise<T> {
  const body = await result;
  reply.code(status);
  return body;
}

/** JSON text of a `T` made by the database: a record, or a page of them (listing/page.ts `jsonPage`), as the route's 200 schema describes it. */
export type JsonText<T> = string & { readonly __jsonText: T };

/** The same as UTF-8 bytes: a page whose records the database joined into one BLOB (db/pages-sqlite.ts pageAsBlob). */
export type JsonBytes<T> = Buffer & { readonly __jsonText: T };

/**
 * Answers JSON text as it is, with the type Fastify gives a serialized object. The hottest reads (a contact,
 * a page of contacts) select each record as the JSON object text its row stores (`doc`, migration 014;
 * modules/shared/record-json.ts), instead of a value per column that the driver turns into a JavaScript value, a mapper into an object and the
 * serializer back into text: on SQLite, better-sqlite3 spends ~0.25 µs on each value it hands over, 550 of them
 * for a page of 50 contacts (bench/journal/). Records built so must read, parsed, as their
 * mapper (`toContact`) makes them: test/db/json-records.test.ts compares the two on both databases.
 */
export function sendJsonText<T>(reply: FastifyReply, text: JsonText<T> | JsonBytes<T>): T {
  reply.type('application/json; charset=utf-8');
  if (typeof text !== 'string') reuseWhenClosed(reply.raw, text);
  // Typed as the `T` it is the text of, for the route's typed handler; Fastify sends a string with a JSON type, and
  // a Buffer, as they are.
  return text as unknown as T;
}

/** The size of a reusable answer buffer (replyBytes): a page of 100 contacts of the bench's is ~36 KB. */
const SLOT_BYTES = 64 * 1024;
/** How many free answer buffers are kept: as many as answers in flight at once, beyond which they go to the GC. */
const SLOTS_KEPT = 64;
const freeSlots: ArrayBuffer[] = [];
/** The slots lent out by replyBytes, until their answer's response has closed (reuseWhenClosed). */
const lent = new WeakSet<ArrayBuffer>();

/**
 * `n` bytes for an answer that sendJsonText sends: a reused buffer while `n` fits in one (64 KiB), else a new one.
 *
 * NOTE: why answers do not take `Buffer.allocUnsafe`'s memory. A buffer above 4 KB is memory of its own, which
 * malloc gives and V8 frees only when it collects the Buffer. An answer lives until the socket has written it, so
 * under load the scavenge that meets it in flight moves it to the old generation, and then it waits for a full
 * collection, which external memory triggers only tens of MB later; glibc then keeps the freed chunks. A fresh
 * server after 20 s of pages of 50 at 50 connections, median of three alternating rounds (bench/journal/):
 * 87.0 MB of anonymous memory when each record was a string, 96.2 with a new buffer per page,
 * 90.4 with this pool. Here a buffer goes back to the pool when its response closes, which Node emits after the
 * socket's last write completed, or after the connection was destroyed (libuv cancels its writes first): nothing
 * reads the bytes afterwards. A buffer never given back (its request failed before sending) is left to the GC like
 * any other.
 */
export function replyBytes(n: number): Buffer {
  if (n > SLOT_BYTES) return Buffer.allocUnsafe(n);
  const slot = freeSlots.pop() ?? new ArrayBuffer(SLOT_BYTES);
  lent.add(slot);
  return Buffer.from(slot, 0, n);
}

/** Gives `bytes`' buffer back to replyBytes once `res` has closed, if replyBytes lent it. */
export function reuseWhenClosed(res: Pick<ServerResponse, 'once'>, bytes: Buffer): void {
  const slot = bytes.buffer as ArrayBuffer;
  if (!lent.has(slot)) return;
  res.once('close', () => {
    if (!lent.delete(slot)) return;
    if (freeSlots.length < SLOTS_KEPT) freeSlots.push(slot);
  });
}
