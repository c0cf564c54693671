// CONTRACT C.5: `search` and filter `contains` ignore case and accents, for every script, on both databases;
// `search` matches phones only for phone-like terms; every write path refreshes the stored search column.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DIALECT, newTenant as makeTenant, testApp, type Client } from '../helpers/app.js';
import { recalculateDirtyLists } from '../../src/workers/dynamic-lists.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

const t = await testApp();
const tenants: string[] = [];
const newTenant = async () => {
  const tenant = await makeTenant(t);
  tenants.push(tenant.tenantId);
  return tenant;
};

async function created(api: Client, path: string, body: Record<string, unknown>): Promise<any> {
  const r = await api.post(path, body);
  assert.equal(r.status, 201, `${path}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** Ids a paginated list answers for `search` (sorted). */
async function found(api: Client, path: string, term: string): Promise<string[]> {
  const r = await api.get(`${path}?search=${encodeURIComponent(term)}${path === '/tags' ? '' : '&pageSize=100'}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const rows = Array.isArray(r.body) ? r.body : r.body.data;
  return rows.map((x: any) => x.id).sort();
}
const ids = (...xs: any[]) => xs.map((x) => x.id).sort();

/** Names in several scripts, each found by other spellings of it, and by nothing that is not in it. */
const NAMES = {
  joao: { first: 'João', last: 'Gonçalves', finds: ['joao', 'JOAO', 'joão', 'goncalves', 'GONÇALVES', 'joao goncalves', 'JOÃO GONÇ'] },
  angela: { first: 'ângela', last: 'Zoë', finds: ['ÂNGELA', 'angela', 'Zoë', 'ZOË', 'zoe', 'angela zoe'] },
  greek: { first: 'Οδυσσέας', last: 'Παπαδόπουλος', finds: ['ΟΔΥΣΣΕΑΣ', 'οδυσσεας', 'ΟΔΥΣΣΈΑΣ', 'παπαδοπουλοσ', 'ΠΑΠΑΔΌΠΟΥΛΟΣ'] },
  cyrillic: { first: 'Фёдор', last: 'Жуков', finds: ['ФЁДОР', 'федор', 'ЖУКОВ', 'жуков', 'фёдор жуков'] },
  cjk: { first: '東京', last: '太郎', finds: ['東京', '太郎', '京 太'] },
};
const NOT_FOUND = ['joana', 'angelo', 'zoey', 'οδυσσεια', 'жуковский', '東京都'];

test(`search: contacts by name and e-mail ignore case and accents in every script, without false positives (${DIALECT})`, async () => {
  const { api } = await newTenant();
  const made: Record<string, any> = {};
  for (const [k, n] of Object.entries(NAMES)) made[k] = await created(api, '/contacts', { firstName: n.first, lastName: n.last });
  const mail = await created(api, '/contacts', { firstName: 'Mail', email: 'Renee.Dupont@Exemple.FR' });
  for (const [k, n] of Object.entries(NAMES)) {
    for (const term of n.finds) assert.deepEqual(await found(api, '/contacts', term), ids(made[k]), `${term} finds ${n.first} ${n.last}`);
  }
  for (const term of NOT_FOUND) assert.deepEqual(await found(api, '/contacts', term), [], `${term} finds nothing`);
  assert.deepEqual(await found(api, '/contacts', 'RENEE.DUPONT'), ids(mail), 'e-mail');
  // A term never matches across the name and the e-mail.
  assert.deepEqual(await found(api, '/contacts', 'Mail renee'), []);
  // LIKE wildcards in a term are literal.
  assert.deepEqual(await found(api, '/contacts', 'jo%o'), []);
  assert.deepEqual(await found(api, '/contacts', 'j_ao'), []);
});

test(`search: phones match only terms that look like one (${DIALECT})`, async () => {
  const { api } = await newTenant();
  const phone = await created(api, '/contacts', { firstName: 'Fone', phone: '+55 11 91234-5678' });
  const sort = await created(api, '/contacts', { firstName: 'Sort1a2b3' });
  assert.deepEqual(await found(api, '/contacts', '1234'), ids(phone));
  assert.deepEqual(await found(api, '/contacts', '(11) 91234'), ids(phone));
  assert.deepEqual(await found(api, '/contacts', '+55 11 9123-4'), ids(phone));
  assert.deepEqual(await found(api, '/contacts', 'sort1a2b3'), ids(sort), 'letters with digits: never the phone 123…');
  assert.deepEqual(await found(api, '/contacts', 'SORT1A2B3'), ids(sort));
  assert.deepEqual(await found(api, '/contacts', '12'), [], 'fewer than 3 digits is no phone term');
});

test(`search: companies by name, CNPJ, website and domain ignore case and accents (${DIALECT})`, async () => {
  const { api } = await newTenant();
  const acai = await created(api, '/companies', { name: 'Açaí Comércio Ltda', website: 'https://www.acai-loja.com.br', domain: 'açaí.com.br' });
  const greek = await created(api, '/companies', { name: 'Ελληνική Εταιρεία', cnpj: '11.222.333/0001-81' });
  const cyr = await created(api, '/companies', { name: 'ООО «Ёжик»' });
  assert.deepEqual(await found(api, '/companies', 'acai comercio'), ids(acai));
  assert.deepEqual(await found(api, '/companies', 'AÇAÍ'), ids(acai));
  assert.deepEqual(await found(api, '/companies', 'ACAI-LOJA'), ids(acai), 'website');
  assert.deepEqual(await found(api, '/companies', 'ελληνικη'), ids(greek));
  assert.deepEqual(await found(api, '/companies', 'ΕΤΑΙΡΕΊΑ'), ids(greek));
  assert.deepEqual(await found(api, '/companies', '11.222.333/0001'), ids(greek), 'CNPJ with punctuation');
  assert.deepEqual(await found(api, '/companies', '112223330001'), ids(greek), 'CNPJ digits');
  assert.deepEqual(await found(api, '/companies', 'ежик'), ids(cyr));
  assert.deepEqual(await found(api, '/companies', 'ЁЖИК'), ids(cyr));
  assert.deepEqual(await found(api, '/companies', 'acai ltda'), [], 'no false positive across words');
});

test(`search: deals by title, tags by name, proposals by number and subject ignore case and accents (${DIALECT})`, async () => {
  const { api, refs } = await newTenant();
  const deal = (title: string) => created(api, '/deals', { title, pipelineId: refs.sales, stageId: refs.lead });
  const d1 = await deal('Expansão São Paulo');
  const d2 = await deal('Продажа Москва');
  const d3 = await deal('Πώληση Αθήνα');
  assert.deepEqual(await found(api, '/deals', 'EXPANSAO SAO'), ids(d1));
  assert.deepEqual(await found(api, '/deals', 'são paulo'), ids(d1));
  assert.deepEqual(await found(api, '/deals', 'москва'), ids(d2));
  assert.deepEqual(await found(api, '/deals', 'ΑΘΗΝΑ'), ids(d3));
  assert.deepEqual(await found(api, '/deals', 'paulo sao'), []);

  const t1 = await created(api, '/tags', { name: 'Prioritário' });
  const t2 = await created(api, '/tags', { name: 'Ωμέγα' });
  const t3 = await created(api, '/tags', { name: 'Zoë' });
  assert.deepEqual(await found(api, '/tags', 'PRIORITARIO'), ids(t1));
  assert.deepEqual(await found(api, '/tags', 'ωμεγα'), ids(t2));
  assert.deepEqual(await found(api, '/tags', 'ZOË'), ids(t3));
  assert.deepEqual(await found(api, '/tags', 'zoe'), ids(t3));
  assert.deepEqual(await found(api, '/tags', 'zoey'), []);

  const p1 = await created(api, '/proposals', { subject: 'Implantação do Módulo Financeiro' });
  const p2 = await created(api, '/proposals', { subject: 'Лицензии' });
  assert.deepEqual(await found(api, '/proposals', 'IMPLANTACAO DO MODULO'), ids(p1));
  assert.deepEqual(await found(api, '/proposals', 'лицензии'), ids(p2));
  assert.deepEqual(await found(api, '/proposals', p2.number.toLowerCase()), ids(p2), 'number, any case');
  assert.deepEqual(await found(api, '/proposals', 'financeiro modulo'), []);
});

test(`filter contains ignores case and accents on standard fields and text custom properties (${DIALECT})`, async () => {
  const { api, refs } = await newTenant();
  const text = refs.contact_text;
  const joao = await created(api, '/contacts', {
    firstName: 'João',
    lastName: 'Gonçalves',
    email: 'joao@exemplo.com',
    customProperties: { [text]: 'Prefere café com pão de queijo' },
  });
  const zoe = await created(api, '/contacts', { firstName: 'Zoë', lastName: 'Жукова', customProperties: { [text]: 'ΚΑΦΈΣ ελληνικός' } });
  const joana = await created(api, '/contacts', { firstName: 'Joana', lastName: 'Silva', customProperties: { [text]: 'Chá' } });
  const search = async (field: string, value: string) => {
    const r = await api.post('/contacts/search', { filters: { operator: 'AND', conditions: [{ field, operator: 'contains', value }] } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return r.body.data.map((x: any) => x.id).sort();
  };
  assert.deepEqual(await search('firstName', 'JOAO'), ids(joao));
  assert.deepEqual(await search('firstName', 'zoe'), ids(zoe));
  assert.deepEqual(await search('firstName', 'ZOË'), ids(zoe));
  assert.deepEqual(await search('lastName', 'goncalves'), ids(joao));
  assert.deepEqual(await search('lastName', 'ЖУКОВ'), ids(zoe));
  assert.deepEqual(await search('lastName', 'gonçalves silva'), []);
  assert.deepEqual(await search('email', 'JOAO@'), ids(joao));
  assert.deepEqual(await search(`customProperties.${text}`, 'CAFE COM PAO'), ids(joao));
  assert.deepEqual(await search(`customProperties.${text}`, 'καφες'), ids(zoe));
  assert.deepEqual(await search(`customProperties.${text}`, 'CHA'), ids(joana));
  assert.deepEqual(await search(`customProperties.${text}`, 'chai'), []);
});

test(`filter contains: companies and deals through dynamic lists, on names, titles and custom properties (${DIALECT})`, async () => {
  // Dynamic lists come from a setup file (the API creates static ones only).
  const setup = STANDARD_SETUP();
  const dynamic = (ref: string, objectType: string, field: string, value: string) => ({
    ref,
    name: ref,
    objectType,
    kind: 'dynamic',
    filters: { operator: 'AND', conditions: [{ field, operator: 'contains', value }] },
  });
  setup.lists = [
    dynamic('companyName', 'company', 'name', 'ACAI DO PARA'),
    dynamic('companyProp', 'company', 'customProperties.company_text', 'regiao'),
    dynamic('dealTitle', 'deal', 'title', 'renovacao angstrom'),
    dynamic('dealProp', 'deal', 'customProperties.deal_text', 'URGENT'),
  ];
  const { api, refs, tenantId } = await makeTenant(t, setup);
  const acai = await created(api, '/companies', { name: 'Açaí do Pará', customProperties: { [refs.company_text]: 'Região Norte' } });
  await created(api, '/companies', { name: 'Acme', customProperties: { [refs.company_text]: 'Sul' } });
  const deal = await created(api, '/deals', {
    title: 'Renovação Ångström',
    pipelineId: refs.sales,
    stageId: refs.lead,
    customProperties: { [refs.deal_text]: 'Ürgent' },
  });
  await created(api, '/deals', { title: 'Other', pipelineId: refs.sales, stageId: refs.lead });
  await recalculateDirtyLists(t.database, undefined, undefined, { tenantIds: [tenantId] });
  const members = async (ref: string) => (await api.get(`/lists/${refs[ref]}/members?pageSize=100`)).body.data.map((x: any) => x.id).sort();
  assert.deepEqual(await members('companyName'), ids(acai));
  assert.deepEqual(await members('companyProp'), ids(acai));
  assert.deepEqual(await members('dealTitle'), ids(deal));
  assert.deepEqual(await members('dealProp'), ids(deal));
});

test(`search column follows every write: PATCH, batch update, batch upsert, renames of companies, deals, tags and proposals (${DIALECT})`, async () => {
  const { api, refs } = await newTenant();
  const c = await created(api, '/contacts', { firstName: 'Antônio', lastName: 'Souza', email: 'antonio@x.test' });
  assert.equal((await api.patch(`/contacts/${c.id}`, { lastName: 'Araújo' })).status, 200);
  assert.deepEqual(await found(api, '/contacts', 'antonio araujo'), ids(c), 'PATCH of one name keeps the other');
  assert.deepEqual(await found(api, '/contacts', 'souza'), []);
  assert.equal((await api.patch(`/contacts/${c.id}`, { email: 'toninho@x.test' })).status, 200);
  assert.deepEqual(await found(api, '/contacts', 'TONINHO'), ids(c));
  assert.deepEqual(await found(api, '/contacts', 'antonio araujo'), ids(c));

  const b = await api.post('/contacts/batch/update', { inputs: [{ id: c.id, firstName: 'Élodie' }] });
  assert.equal(b.status, 200, JSON.stringify(b.body));
  assert.deepEqual(await found(api, '/contacts', 'elodie araujo'), ids(c));
  assert.deepEqual(await found(api, '/contacts', 'antonio'), []);

  const up = await api.post('/contacts/batch/upsert', {
    idProperty: 'email',
    inputs: [
      { firstName: 'Ñandú', email: 'TONINHO@x.test' },
      { firstName: 'Øyvind', email: 'oyvind@x.test' },
    ],
  });
  assert.equal(up.status, 200, JSON.stringify(up.body));
  assert.deepEqual(
    up.body.results.map((r: any) => r.action),
    ['updated', 'created'],
  );
  assert.deepEqual(await found(api, '/contacts', 'nandu'), ids(c), 'upsert update');
  assert.deepEqual(await found(api, '/contacts', 'OYVIND'), [up.body.results[1].id], 'upsert create');
  assert.deepEqual(await found(api, '/contacts', 'elodie'), []);

  const co = await created(api, '/companies', { name: 'Café Ltda' });
  assert.equal((await api.patch(`/companies/${co.id}`, { domain: 'cafe-exemplo.com' })).status, 200);
  assert.deepEqual(await found(api, '/companies', 'cafe ltda'), ids(co), 'name kept when the domain changes');
  assert.deepEqual(await found(api, '/companies', 'CAFE-EXEMPLO'), ids(co));
  const cb = await api.post('/companies/batch/update', { inputs: [{ id: co.id, name: 'Pão Quente' }] });
  assert.equal(cb.status, 200, JSON.stringify(cb.body));
  assert.deepEqual(await found(api, '/companies', 'pao quente'), ids(co));
  assert.deepEqual(await found(api, '/companies', 'cafe ltda'), []);

  const d = await created(api, '/deals', { title: 'Primeira versão', pipelineId: refs.sales, stageId: refs.lead });
  assert.equal((await api.patch(`/deals/${d.id}`, { title: 'Segunda versão' })).status, 200);
  assert.deepEqual(await found(api, '/deals', 'SEGUNDA VERSAO'), ids(d));
  assert.deepEqual(await found(api, '/deals', 'primeira'), []);
  assert.equal((await api.patch(`/deals/${d.id}`, { value: 10 })).status, 200);
  assert.deepEqual(await found(api, '/deals', 'segunda'), ids(d), 'a change of another field keeps the title searchable');

  const tag = await created(api, '/tags', { name: 'Antigo' });
  assert.equal((await api.patch(`/tags/${tag.id}`, { name: 'Ação' })).status, 200);
  assert.deepEqual(await found(api, '/tags', 'acao'), ids(tag));
  assert.deepEqual(await found(api, '/tags', 'antigo'), []);

  const p = await created(api, '/proposals', { subject: 'Versão inicial' });
  assert.equal((await api.patch(`/proposals/${p.id}`, { subject: 'Revisão final' })).status, 200);
  assert.deepEqual(await found(api, '/proposals', 'REVISAO'), ids(p));
  assert.deepEqual(await found(api, '/proposals', 'inicial'), []);
  assert.deepEqual(await found(api, '/proposals', p.number), ids(p), 'the number stays searchable after a PATCH');
});
