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
