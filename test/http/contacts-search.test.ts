import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp, type Client } from '../helpers/app.js';

const t = await testApp();

async function create(api: Client, body: Record<string, unknown>) {
  const r = await api.post('/contacts', body);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}
const group = (...conditions: unknown[]) => ({ operator: 'AND', conditions });

/** A tenant with three contacts of known values. */
async function seed() {
  const tenant = await newTenant(t);
  const { api, refs } = tenant;
  const vip = (await api.post('/tags', { name: 'VIP' })).body.id;
  const cold = (await api.post('/tags', { name: 'Cold' })).body.id;
  const p = (ref: string) => refs[ref];
  const ana = await create(api, {
    firstName: 'Ana',
    lastName: 'Souza',
    email: 'ana@acme.com',
    phone: '11987654321',
    ownerId: refs.ana,
    score: 90,
    tags: [vip],
    customProperties: {
      [p('contact_number')]: 5,
      [p('contact_select')]: 'smb',
      [p('contact_boolean')]: true,
      [p('contact_multi_select')]: ['smb'],
      [p('contact_date')]: '2026-03-01',
      [p('contact_datetime')]: '2026-03-01T12:00:00Z',
      [p('contact_text')]: 'Likes coffee',
    },
  });
  const bruno = await create(api, {
    firstName: 'Bruno',
    email: 'bruno@beta.com',
    ownerId: refs.bruno,
    score: 40,
    tags: [vip, cold],
    customProperties: {
      [p('contact_number')]: 12,
      [p('contact_select')]: 'ent',
      [p('contact_boolean')]: false,
      [p('contact_multi_select')]: ['smb', 'ent'],
      [p('contact_date')]: '2026-05-01',
    },
  });
  const carla = await create(api, { firstName: 'Carla', lastName: 'Lima', phone: '+5521912345678' });
  return { ...tenant, vip, cold, ana, bruno, carla };
}

async function ids(api: Client, filters: unknown, extra: Record<string, unknown> = {}): Promise<string[]> {
  const r = await api.post('/contacts/search', { filters, ...extra });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.data.map((x: any) => x.id).sort();
}

test('search: the spec example — ownerId eq, score gte, createdAt after — answers the paginated envelope', async () => {
  const { api, refs, ana } = await seed();
  const r = await api.post('/contacts/search', {
    filters: group(
      { field: 'ownerId', operator: 'eq', value: refs.ana },
      { field: 'score', operator: 'gte', value: 80 },
      { field: 'createdAt', operator: 'after', value: '2020-01-01T00:00:00Z' },
    ),
    page: 1,
    pageSize: 50,
  });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body.data, [(await api.get(`/contacts/${ana.id}`)).body], 'items are full contacts, as a single read');
  assert.deepEqual(r.body.pagination, { page: 1, pageSize: 50, total: 1, totalPages: 1, hasNext: false, hasPrev: false, nextCursor: null });
  // No filters: every contact.
  assert.equal((await api.post('/contacts/search', {})).body.pagination.total, 3);
});

test('search: AND, OR and nested groups', async () => {
  const { api, ana, bruno, carla, refs } = await seed();
  const sorted = (...xs: any[]) => xs.map((x) => x.id).sort();
  assert.deepEqual(
    await ids(api, {
      operator: 'OR',
      conditions: [
        { field: 'firstName', operator: 'eq', value: 'Ana' },
        { field: 'firstName', operator: 'eq', value: 'Carla' },
      ],
    }),
    sorted(ana, carla),
  );
  assert.deepEqual(await ids(api, group({ field: 'score', operator: 'exists' }, { field: 'score', operator: 'lt', value: 50 })), sorted(bruno));
  assert.deepEqual(
    await ids(api, {
      operator: 'OR',
      conditions: [
        { field: 'phone', operator: 'contains', value: '2191' },
        {
          operator: 'AND',
          conditions: [
            { field: 'ownerId', operator: 'eq', value: refs.bruno },
            {
              operator: 'OR',
              conditions: [
                { field: 'score', operator: 'gt', value: 100 },
                { field: 'email', operator: 'contains', value: 'BETA' },
              ],
            },
          ],
        },
      ],
    }),
    sorted(bruno, carla),
  );
});

test('search: operators on standard fields', async () => {
  const { api, ana, bruno, carla, refs } = await seed();
  const sorted = (...xs: any[]) => xs.map((x) => x.id).sort();
  const one = (field: string, operator: string, value?: unknown) => ids(api, group(value === undefined ? { field, operator } : { field, operator, value }));
  assert.deepEqual(await one('id', 'eq', ana.id), sorted(ana));
  assert.deepEqual(await one('firstName', 'neq', 'Ana'), sorted(bruno, carla));
  assert.deepEqual(await one('score', 'gt', 40), sorted(ana));
  assert.deepEqual(await one('score', 'gte', 40), sorted(ana, bruno));
  assert.deepEqual(await one('score', 'lt', 90), sorted(bruno));
  assert.deepEqual(await one('score', 'lte', 90), sorted(ana, bruno));
  assert.deepEqual(await one('score', 'neq', 90), sorted(bruno, carla), 'neq also matches empty values');
  assert.deepEqual(await one('email', 'eq', 'ANA@acme.com'), sorted(ana));
  assert.deepEqual(await one('lastName', 'contains', 'ouz'), sorted(ana));
  assert.deepEqual(await one('ownerId', 'in', [refs.ana, refs.bruno]), sorted(ana, bruno));
  assert.deepEqual(await one('ownerId', 'notIn', [refs.ana]), sorted(bruno, carla));
  assert.deepEqual(await one('email', 'exists'), sorted(ana, bruno));
  assert.deepEqual(await one('email', 'notExists'), sorted(carla));
  assert.deepEqual(await one('phone', 'eq', '(11) 98765-4321'), sorted(ana));
  assert.deepEqual(await one('createdAt', 'after', carla.createdAt), []);
  assert.deepEqual(await one('createdAt', 'gte', carla.createdAt), sorted(carla));
  assert.deepEqual(await one('createdAt', 'before', ana.createdAt), []);
  assert.deepEqual(await one('createdAt', 'lte', ana.createdAt), sorted(ana));
  const p = await api.patch(`/contacts/${carla.id}`, { score: 1 });
  assert.deepEqual(await one('updatedAt', 'after', bruno.updatedAt), sorted(carla));
  assert.deepEqual(await one('updatedAt', 'eq', p.body.updatedAt), sorted(carla));
  assert.deepEqual(await one('companyId', 'notExists'), sorted(ana, bruno, carla));
});

test('search: tags — contains, in (any), notIn, exists, notExists', async () => {
  const { api, ana, bruno, carla, vip, cold } = await seed();
  const sorted = (...xs: any[]) => xs.map((x) => x.id).sort();
  assert.deepEqual(await ids(api, group({ field: 'tags', operator: 'contains', value: vip })), sorted(ana, bruno));
  assert.deepEqual(await ids(api, group({ field: 'tags', operator: 'contains', value: cold })), sorted(bruno));
  assert.deepEqual(await ids(api, group({ field: 'tags', operator: 'in', value: [cold, 'tag_unknown'] })), sorted(bruno));
  assert.deepEqual(await ids(api, group({ field: 'tags', operator: 'notIn', value: [cold] })), sorted(ana, carla));
  assert.deepEqual(await ids(api, group({ field: 'tags', operator: 'exists' })), sorted(ana, bruno));
  assert.deepEqual(await ids(api, group({ field: 'tags', operator: 'notExists' })), sorted(carla));
  // Tag changes through PATCH are seen at once.
  await api.patch(`/contacts/${carla.id}`, { tags: [cold] });
  assert.deepEqual(await ids(api, group({ field: 'tags', operator: 'contains', value: cold })), sorted(bruno, carla));
  // Deleting a tag removes it from the search.
  await api.delete(`/tags/${cold}`);
  assert.deepEqual(await ids(api, group({ field: 'tags', operator: 'contains', value: cold })), []);
});

test('search: custom properties of several types', async () => {
  const { api, refs, ana, bruno, carla } = await seed();
  const sorted = (...xs: any[]) => xs.map((x) => x.id).sort();
  const cp = (ref: string, operator: string, value?: unknown) =>
    ids(api, group(value === undefined ? { field: `customProperties.${refs[ref]}`, operator } : { field: `customProperties.${refs[ref]}`, operator, value }));
  assert.deepEqual(await cp('contact_number', 'gt', 5), sorted(bruno));
  assert.deepEqual(await cp('contact_number', 'lte', 12), sorted(ana, bruno));
  assert.deepEqual(await cp('contact_number', 'notExists'), sorted(carla));
  assert.deepEqual(await cp('contact_select', 'eq', 'smb'), sorted(ana));
  assert.deepEqual(await cp('contact_select', 'in', ['smb', 'ent']), sorted(ana, bruno));
  assert.deepEqual(await cp('contact_text', 'contains', 'COFFEE'), sorted(ana));
  assert.deepEqual(await cp('contact_boolean', 'eq', false), sorted(bruno));
  assert.deepEqual(await cp('contact_boolean', 'eq', true), sorted(ana));
  assert.deepEqual(await cp('contact_multi_select', 'contains', 'ent'), sorted(bruno));
  assert.deepEqual(await cp('contact_multi_select', 'in', ['smb']), sorted(ana, bruno));
  assert.deepEqual(await cp('contact_date', 'after', '2026-03-01'), sorted(bruno));
  assert.deepEqual(await cp('contact_date', 'gte', '2026-03-01'), sorted(ana, bruno));
  assert.deepEqual(await cp('contact_datetime', 'before', '2026-03-01T09:00:01-03:00'), sorted(ana));
  assert.deepEqual(await cp('contact_datetime', 'exists'), sorted(ana));
  // Clearing a property removes it from the match.
  await api.patch(`/contacts/${ana.id}`, { customProperties: { [refs.contact_boolean]: null } });
  assert.deepEqual(await cp('contact_boolean', 'exists'), sorted(bruno));
});

test('search: pagination and sorting of results', async () => {
  const { api } = await newTenant(t);
  const made = new Set<string>();
  for (let i = 0; i < 12; i++) made.add((await create(api, { firstName: `N${String(i).padStart(2, '0')}`, score: i % 3 })).id);
  await create(api, { firstName: 'Excluded' });
  const filters = group({ field: 'score', operator: 'exists' });
  const seen: string[] = [];
  for (let page = 1; page <= 3; page++) {
    const r = await api.post('/contacts/search', { filters, page, pageSize: 5, sortKey: 'score', sortOrder: 'asc' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.pagination, {
      page,
      pageSize: 5,
      total: 12,
      totalPages: 3,
      hasNext: page < 3,
      hasPrev: page > 1,
      nextCursor: page < 3 ? r.body.pagination.nextCursor : null,
    });
    seen.push(...r.body.data.map((x: any) => x.id));
    const scores = r.body.data.map((x: any) => x.score);
    assert.deepEqual(
      scores,
      [...scores].sort((a, b) => a - b),
    );
  }
  assert.equal(seen.length, 12);
  assert.deepEqual(new Set(seen), made);
  const byName = await api.post('/contacts/search', { filters, sortKey: 'firstName', sortOrder: 'asc', pageSize: 3 });
  assert.deepEqual(
    byName.body.data.map((x: any) => x.firstName),
    ['N00', 'N01', 'N02'],
  );
  assert.equal((await api.post('/contacts/search', { filters })).body.pagination.pageSize, 50, 'default page size 50');
});

test('search: invalid filters and bodies are 400 validation_failed naming the path', async () => {
  const { api, refs } = await seed();
  const cases: [unknown, string][] = [
    [{ filters: { operator: 'XOR', conditions: [{ field: 'score', operator: 'exists' }] } }, 'filters.operator'],
    [{ filters: { operator: 'AND', conditions: [] } }, 'filters.conditions'],
    [{ filters: { operator: 'AND' } }, 'filters.conditions'],
    [{ filters: 'score > 1' }, 'filters'],
    [{ filters: group({ field: 'password', operator: 'eq', value: 'x' }) }, 'filters.conditions[0].field'],
    [{ filters: group({ field: 'score', operator: 'regex', value: 'x' }) }, 'filters.conditions[0].operator'],
    [{ filters: group({ field: 'score', operator: 'contains', value: 1 }) }, 'filters.conditions[0].operator'],
    [{ filters: group({ field: 'score', operator: 'gte', value: '80' }) }, 'filters.conditions[0].value'],
    [{ filters: group({ field: 'score', operator: 'exists' }, { field: 'createdAt', operator: 'after', value: 'last week' }) }, 'filters.conditions[1].value'],
    [{ filters: group({ field: 'email', operator: 'exists', value: true }) }, 'filters.conditions[0].value'],
    [{ filters: group({ field: 'email', operator: 'in', value: [] }) }, 'filters.conditions[0].value'],
    [{ filters: group({ field: 'customProperties.prop_nope', operator: 'exists' }) }, 'filters.conditions[0].field'],
    [{ filters: group({ field: `customProperties.${refs.company_number}`, operator: 'exists' }) }, 'filters.conditions[0].field'],
    [{ filters: group({ field: `customProperties.${refs.contact_boolean}`, operator: 'eq', value: 'yes' }) }, 'filters.conditions[0].value'],
    [{ filters: group(group(group(group({ field: 'score', operator: 'exists' })))) }, 'filters.conditions[0].conditions[0].conditions[0]'],
    [{ filters: group(...Array.from({ length: 51 }, () => ({ field: 'score', operator: 'exists' }))) }, 'filters'],
    [{ page: 0 }, 'page'],
    [{ pageSize: 101 }, 'pageSize'],
    [{ pageSize: '10' }, 'pageSize'],
    [{ sortKey: 'password' }, 'sortKey'],
    [{ sortOrder: 'sideways' }, 'sortOrder'],
    [{ filter: {} }, 'filter'],
  ];
  for (const [body, field] of cases) {
    const r = await api.post('/contacts/search', body as any);
    assert.equal(r.status, 400, JSON.stringify(body).slice(0, 120));
    assert.equal(r.body.error, 'validation_failed');
    assert.equal(r.body.details[0].field, field, JSON.stringify(r.body.details));
  }
  // A huge filter (1 MiB-ish) never 5xx.
  const huge = await api.post('/contacts/search', {
    filters: group(...Array.from({ length: 5000 }, (_, i) => ({ field: 'firstName', operator: 'eq', value: `name ${i}` }))),
  });
  assert.equal(huge.status, 400);
});

test('search: tenant isolation — ids of another tenant in filters match nothing', async () => {
  const a = await seed();
  const b = await newTenant(t);
  assert.deepEqual(await ids(b.api, group({ field: 'id', operator: 'eq', value: a.ana.id })), []);
  assert.deepEqual(await ids(b.api, group({ field: 'tags', operator: 'contains', value: a.vip })), []);
  assert.deepEqual(await ids(b.api, group({ field: 'ownerId', operator: 'eq', value: a.refs.ana })), []);
  // Their own ids of the other tenant's properties are unknown fields here.
  const r = await b.api.post('/contacts/search', { filters: group({ field: `customProperties.${a.refs.contact_number}`, operator: 'exists' }) });
  assert.equal(r.status, 400);
  // A read-only key may search.
  assert.equal((await a.as('ro').post('/contacts/search', { filters: group({ field: 'score', operator: 'exists' }) })).status, 200);
});
