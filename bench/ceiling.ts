// The ceiling: a bare Fastify server (no database, no auth, no rate limit, no validation) answering
// GET /api/v1/contacts/:id and GET /api/v1/contacts (any query) with the very JSON the real server returns
// for a contact (CEILING_BODY_FILE) and for a page of 50 (CEILING_LIST_FILE). The real endpoints'
// throughput is reported as a share of this one's.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const body = JSON.parse(readFileSync(process.env.CEILING_BODY_FILE!, 'utf8'));
const list = JSON.parse(readFileSync(process.env.CEILING_LIST_FILE!, 'utf8'));
const app = Fastify({ logger: false });
app.get('/api/v1/contacts/:id', async () => body);
app.get('/api/v1/contacts', async () => list);
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stderr.write(`ceiling listening on ${process.env.PORT}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
