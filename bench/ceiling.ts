// The ceiling: a bare Fastify server (no database, no auth, no rate limit, no validation) answering
// GET /api/v1/contacts/:id and GET /api/v1/contacts (any query) with the very JSON the real server returns
// for a contact (CEILING_BODY_FILE) and for a page of 50 (CEILING_LIST_FILE), and POST /api/v1/contacts with
// the contact. The real endpoints' throughput is reported as a share of this one's.
//
// With CEILING_REALISTIC_BODY_FILE and CEILING_REALISTIC_LIST_FILE, the same for the realistic tenant's contacts
// (bench/realistic.ts: phone, owner and 8 custom properties each) under /realistic/v1/contacts/:id and
// /realistic/v1/contacts: the ceilings of the realistic scenarios, whose bodies are two to three times the minimal ones.
//
// The floor (SQLite only, with CEILING_DB_FILE and CEILING_TENANT_ID): the same bare Fastify answering
// GET /floor/v1/contacts/:id and GET /floor/v1/contacts?page=&pageSize= by running the statements the
// service runs for them (each contact the JSON object its row stores, its tags included, in the index's order)
// on a read-only connection with the service's page cache, and sends the text in the page's envelope.
// No auth, rate limit, validation, Kysely, cursor or logging: what answering from this database costs at
// the least, in this process model. The gap between it and the ceiling is the database's; the gap between
// the service and it is the service's own work (bench/RESULTS.md, "The floor").
import { readFileSync } from 'node:fs';
import Sqlite from '../src/db/sqlite-driver.mjs';
import Fastify from 'fastify';

const body = JSON.parse(readFileSync(process.env.CEILING_BODY_FILE!, 'utf8'));
const list = JSON.parse(readFileSync(process.env.CEILING_LIST_FILE!, 'utf8'));
const app = Fastify({ logger: false });
app.get('/api/v1/contacts/:id', async () => body);
app.get('/api/v1/contacts', async () => list);
// A create's request and answer (its body parsed as JSON, 201 with a contact): what the load generator and HTTP
// cost a write at the least; its tails at one connection are the harness's own.
app.post('/api/v1/contacts', async (_req, reply) => {
  reply.code(201);
  return body;
});

if (process.env.CEILING_REALISTIC_BODY_FILE && process.env.CEILING_REALISTIC_LIST_FILE) {
  const realisticBody = JSON.parse(readFileSync(process.env.CEILING_REALISTIC_BODY_FILE, 'utf8'));
  const realisticList = JSON.parse(readFileSync(process.env.CEILING_REALISTIC_LIST_FILE, 'utf8'));
  app.get('/realistic/v1/contacts/:id', async () => realisticBody);
  app.get('/realistic/v1/contacts', async () => realisticList);
}

const dbFile = process.env.CEILING_DB_FILE;
const tenantId = process.env.CEILING_TENANT_ID;
if (dbFile && tenantId) {
  const db = new Sqlite(dbFile, { readonly: true });
  db.pragma('cache_size = -8192'); // the service's writer connection's (src/db/index.ts)
  // The service's statements (contacts.repo.ts: each contact the JSON its row stores, `doc`, migration 014),
  // with LIMIT and OFFSET bound as the service binds them (src/db/index.ts FastSqliteQueryCompiler).
  const json = 'doc';
  const byId = db.prepare<[string, string], string>(`select ${json} from contacts where tenant_id = ? and deleted_at is null and id = ?`).pluck();
  const page = db
    .prepare<[string, number, number], [string, string, string]>(
      `select id, ${json}, created_at as __sort_value from contacts where tenant_id = ? and deleted_at is null order by created_at desc, id desc limit (? + 0) offset (? + 0)`,
    )
    .raw();
  const total = (db.prepare('select count(*) n from contacts where tenant_id = ? and deleted_at is null').get(tenantId) as { n: number }).n;
  app.get('/floor/v1/contacts/:id', async (req, reply) => {
    const text = byId.get(tenantId, (req.params as { id: string }).id);
    if (text === undefined) return reply.code(404).send({ error: 'not found' });
    return reply.type('application/json; charset=utf-8').send(text);
  });
  app.get('/floor/v1/contacts', async (req, reply) => {
    const q = req.query as { page?: string; pageSize?: string };
    const pageNo = Number(q.page ?? 1);
    const pageSize = Number(q.pageSize ?? 50);
    const rows = page.all(tenantId, pageSize, (pageNo - 1) * pageSize);
    const totalPages = Math.ceil(total / pageSize);
    // The service's cursor is an HMAC over the position; the floor sends the first page's, as the ceiling does.
    const pagination = {
      page: pageNo,
      pageSize,
      total,
      totalPages,
      hasNext: pageNo < totalPages,
      hasPrev: pageNo > 1,
      nextCursor: list.pagination?.nextCursor ?? null,
    };
    return reply.type('application/json; charset=utf-8').send(`{"data":[${rows.map((r) => r[1]).join(',')}],"pagination":${JSON.stringify(pagination)}}`);
  });
}

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stderr.write(`ceiling listening on ${process.env.PORT}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
