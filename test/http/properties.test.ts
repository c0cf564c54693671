import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newTenant, testApp } from '../helpers/app.js';
import { STANDARD_SETUP } from '../helpers/fixtures.js';

const t = await testApp();

const TYPES = ['text', 'textarea', 'email', 'phone', 'url', 'number', 'date', 'datetime', 'select', 'multi_select', 'boolean'];
const OPTIONS = [
  { value: 'smb', label: 'SMB' },
  { value: 'ent', label: 'Enterprise' },
];

test('properties: definitions of one object type, by displayOrder, options only for select types', async () => {
  const { api, refs } = await newTenant(t);
  for (const objectType of ['contact', 'company', 'deal']) {
    const r = await api.get(`/properties?objectType=${objectType}`);
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body,
      TYPES.map((type, i) => ({
        id: refs[`${objectType}_${type}`],
        objectType,
        internalName: `${type}_field`,
        label: `${type} field`,
        type,
        group: 'Custom',
        displayOrder: i,
        isDefaultInForm: false,
        ...(type === 'select' || type === 'multi_select' ? { options: OPTIONS } : {}),
      })),
    );
    for (const p of r.body) assert.equal('options' in p, p.type === 'select' || p.type === 'multi_select');
  }
});

test('properties: objectType is required and must be contact, company or deal', async () => {
  const { api } = await newTenant(t);
  for (const q of [
    '',
    '?objectType=',
    '?objectType=proposal',
    '?objectType=Contact',
    '?objectType=contact&objectType=deal',
    '?objectType=%00',
    '?objectType=contact&extra=1',
  ]) {
    const r = await api.get(`/properties${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.body.error, 'validation_failed', q);
    assert.ok(r.body.details.length > 0);
  }
  const missing = await api.get('/properties');
  assert.deepEqual(
    missing.body.details.map((d: any) => d.field),
    ['objectType'],
  );
});

test("properties: another tenant's definitions are never listed; group, isDefaultInForm and order come from the setup", async () => {
  const setup = STANDARD_SETUP();
  setup.properties = [
    { ref: 'd1', objectType: 'deal', internalName: 'source', label: 'Source', type: 'text', group: 'Marketing', isDefaultInForm: true },
    { ref: 'c1', objectType: 'contact', internalName: 'nps', label: 'NPS', type: 'number', group: 'Success' },
    { ref: 'd2', objectType: 'deal', internalName: 'tier', label: 'Tier', type: 'multi_select', group: 'Sales', options: [{ value: 'gold', label: 'Gold' }] },
  ];
  setup.forms = [];
  const a = await newTenant(t, setup);
  const b = await newTenant(t);
  const deals = (await a.api.get('/properties?objectType=deal')).body;
  assert.deepEqual(deals, [
    { id: a.refs.d1, objectType: 'deal', internalName: 'source', label: 'Source', type: 'text', group: 'Marketing', displayOrder: 0, isDefaultInForm: true },
    {
      id: a.refs.d2,
      objectType: 'deal',
      internalName: 'tier',
      label: 'Tier',
      type: 'multi_select',
      group: 'Sales',
      displayOrder: 1,
      isDefaultInForm: false,
      options: [{ value: 'gold', label: 'Gold' }],
    },
  ]);
  assert.deepEqual((await a.api.get('/properties?objectType=company')).body, []);
  const contacts = (await a.api.get('/properties?objectType=contact')).body;
  assert.deepEqual(
    contacts.map((p: any) => p.id),
    [a.refs.c1],
  );
  const other = (await b.api.get('/properties?objectType=deal')).body;
  assert.equal(other.length, TYPES.length);
  assert.ok(other.every((p: any) => p.id !== a.refs.d1 && p.id !== a.refs.d2));
});

test('properties: scope properties:read; read-only resource', async () => {
  const setup = STANDARD_SETUP();
  setup.apiKeys.push({ ref: 'pr', name: 'Properties', user: 'ana', scopes: ['properties:read'] });
  const ten = await newTenant(t, setup);
  assert.equal((await ten.as('pr').get('/properties?objectType=contact')).status, 200);
  const denied = await ten.as('ro').get('/properties?objectType=contact');
  assert.equal(denied.status, 403);
  assert.equal(denied.body.error, 'insufficient_scope');
  assert.deepEqual(denied.body.required, ['properties:read']);
  // Scope is checked before query validation.
  assert.equal((await ten.as('ro').get('/properties')).status, 403);
  assert.equal((await ten.api.post('/properties', { objectType: 'contact' })).status, 404);
});
