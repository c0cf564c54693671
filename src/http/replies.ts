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

/** JSON text of a `T` made by the database: a record, or a page of them (`jsonPage`), as the route's 200 schema describes it. */
export type JsonText<T> = string & { readonly __jsonText: T };

/** The same as UTF-8 bytes: a page whose records the database joined into one BLOB (modules/shared/listing.ts pageAsBlob). */
export type JsonBytes<T> = Buffer & { readonly __jsonText: T };

/**
 * Answers JSON text as it is, with the type Fastify gives a serialized object. The hottest reads (a contact,
 * a page of contacts) select each record as the JSON object text its row stores (`doc`, migration 014;
 * modules/shared/record-json.ts), instead of a value per column that the driver turns into a JavaScript value, a mapper into an object and the
 * serializer back into text: on SQLite, better-sqlite3 spends ~0.25 µs on each value it hands over, 550 of them
 * for a page of 50 contacts (bench/RESULTS.md, 2026-11-27 11:30). Records built so must read, parsed, as their
 * mapper (`toContact`) makes them: test/db/json-records.test.ts compares the two on both databases.
 */
export function sendJsonText<T>(reply: FastifyReply, text: JsonText<T> | JsonBytes<T>): T {
  reply.type('application/json; charset=utf-8');
  // Typed as the `T` it is the text of, for the route's typed handler; Fastify sends a string with a JSON type, and
  // a Buffer, as they are.
  return text as unknown as T;
}
