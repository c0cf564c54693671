import { Ajv } from 'ajv';
import type { Db } from '../db/index.js';
import { withTx } from '../db/index.js';
import { normalizeEmail } from '../domain/email.js';
import { validateFilter } from '../domain/filters.js';
import type { PropertyDef, PropertyType } from '../domain/properties.js';
import { fieldPath } from '../http/validation.js';
import { checkJsonValue } from '../http/body-checks.js';
import { newId, randomBase62 } from '../util/ids.js';
import { nowIso } from '../util/time.js';
import { AdminError, createKey } from './keys.js';
import { SetupFile, type SetupFileT } from './setup.schema.js';
import { DEFAULT_LOCALE } from '../modules/forms/forms.texts.js';
import { insertForm } from '../modules/forms/forms.repo.js';
import { insertList } from '../modules/lists/lists.repo.js';
import { insertPipeline } from '../modules/pipelines/pipelines.repo.js';
import { insertProperty } from '../modules/properties/properties.repo.js';
import { insertLossReasons } from '../modules/reference/reference.repo.js';
import { markChanged } from '../modules/shared/changes.js';
import { recordAudit } from '../modules/audit/audit.service.js';
import { OPERATOR_ACTOR } from '../http/context.js';
import { insertTenant, insertUsers, tenantSlugTaken } from './tenants.repo.js';

export interface SetupResult {
  tenantId: string;
  refs: Record<string, string>;
  apiKeys: Record<string, string>;
}

const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: false });
const checkShape = ajv.compile(SetupFile);
const CONTACT_FIELDS = ['email', 'firstName', 'lastName', 'phone'];

const fail = (path: string, message: string): never => {
  throw new AdminError('validation_failed', `${path}: ${message}`, path);
};

function slugify(name: string): string {
  const s = name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return s || 'tenant';
}

/**
 * Provisions one new tenant from a setup file (CONTRACT A.3), in one transaction: an invalid file
 * changes nothing, and the error names the path of the bad value.
 */
export async function applySetup(db: Db, input: unknown): Promise<SetupResult> {
  const file = checkFile(input);
  const refs = new Refs();
  const tenantId = newId('ten');
  const now = nowIso();
  const { users, userByRef } = planUsers(file, refs);
  const pipelines = planPipelines(file, refs);
  const lossReasons = planLossReasons(file, refs);
  const { properties, propByRef, defsByType } = planProperties(file, refs);
  const forms = planForms(file, refs, propByRef);
  const lists = planLists(file, refs, propByRef, defsByType);
  checkApiKeyRefs(file, refs, userByRef);

  return withTx(db, async (tx) => {
    await insertTenantOf(tx, file, tenantId, now);
    await insertUsers(
      tx,
      users.map((u) => ({ tenant_id: tenantId, id: u.id, name: u.name, email: u.email, created_at: now })),
    );
    for (const p of pipelines) await insertPipelineOf(tx, tenantId, p, now);
    await insertLossReasons(
      tx,
      lossReasons.map((r) => ({ tenant_id: tenantId, ...r })),
    );
    for (const p of properties) await insertPropertyOf(tx, tenantId, p);
    for (const f of forms)
      await insertForm(tx, {
        tenant_id: tenantId,
        id: f.id,
        name: f.name,
        slug: f.slug,
        fields: JSON.stringify(f.fields),
        submissions_count: 0,
        created_at: now,
        updated_at: now,
      });
    for (const l of lists) await insertListOf(tx, tenantId, l, now);
    const apiKeys = await createApiKeys(tx, file, tenantId, refs, userByRef);
    const sections = Object.keys(file).filter((k) => (file as Record<string, unknown>)[k] !== undefined);
    await recordAudit(tx, { tenantId, actor: OPERATOR_ACTOR }, { action: 'tenant.setup_applied', objectType: 'tenant', objectId: tenantId, changes: sections });
    return { tenantId, refs: refs.ids, apiKeys };
  });
}

/** The file as a setup file: B.2's honest values (as for a body, http/body-checks.ts), then its shape. */
function checkFile(input: unknown): SetupFileT {
  const dishonest = checkJsonValue(input);
  if (dishonest) fail(dishonest.field, dishonest.message);
  if (!checkShape(input)) {
    const e = checkShape.errors![0];
    const extra =
      e.keyword === 'additionalProperties' ? String(e.params.additionalProperty) : e.keyword === 'required' ? String(e.params.missingProperty) : undefined;
    const path = fieldPath(e.instancePath, extra) || '(root)';
    const message =
      e.keyword === 'additionalProperties'
        ? 'is not a known field'
        : e.keyword === 'required'
          ? 'is required'
          : e.keyword === 'enum'
            ? `must be one of ${(e.params.allowedValues as unknown[]).join(', ')}`
            : (e.message ?? 'is invalid');
    fail(path, message);
  }
  return input as SetupFileT;
}

/** The file's refs, each naming the id made for its entry; a ref used twice is an error at its second use. */
class Refs {
  readonly ids: Record<string, string> = {};

  claim(ref: string | undefined, path: string, id: string): void {
    if (ref === undefined) return;
    if (ref in this.ids) fail(`${path}.ref`, `"${ref}" is used twice in the file`);
    this.ids[ref] = id;
  }
}

/** Users: e-mail addresses valid and unique in the tenant. */
function planUsers(file: SetupFileT, refs: Refs) {
  const users: { id: string; name: string; email: string }[] = [];
  const userByRef = new Map<string, string>();
  const emails = new Set<string>();
  file.users?.forEach((u, i) => {
    let email = '';
    try {
      email = normalizeEmail(u.email);
    } catch {
      fail(`users[${i}].email`, 'must be a valid e-mail address');
    }
    if (emails.has(email)) fail(`users[${i}].email`, `"${email}" is used by another user of the tenant`);
    emails.add(email);
    const id = newId('usr');
    refs.claim(u.ref, `users[${i}]`, id);
    if (u.ref) userByRef.set(u.ref, id);
    users.push({ id, name: u.name.trim(), email });
  });
  return { users, userByRef };
}

type PlannedPipeline = ReturnType<typeof planPipelines>[number];

/** Pipelines and stages: array position is displayOrder; one default pipeline (the first if none says so). */
function planPipelines(file: SetupFileT, refs: Refs) {
  const pipelines = (file.pipelines ?? []).map((p, i) => {
    const id = newId('pip');
    refs.claim(p.ref, `pipelines[${i}]`, id);
    const stages = p.stages.map((s, j) => {
      if (s.isWonStage && s.isLostStage) fail(`pipelines[${i}].stages[${j}].isLostStage`, 'a stage cannot be both won and lost');
      const sid = newId('stg');
      refs.claim(s.ref, `pipelines[${i}].stages[${j}]`, sid);
      return { ...s, id: sid, order: j };
    });
    return { ...p, id, order: i, stages };
  });
  const defaults = pipelines.filter((p) => p.isDefault);
  if (defaults.length > 1) fail(`pipelines[${pipelines.indexOf(defaults[1])}].isDefault`, 'only one pipeline can be the default');
  if (pipelines.length && defaults.length === 0) pipelines[0].isDefault = true;
  return pipelines;
}

function planLossReasons(file: SetupFileT, refs: Refs): { id: string; name: string }[] {
  return (file.lossReasons ?? []).map((r, i) => {
    const id = newId('lsr');
    refs.claim(r.ref, `lossReasons[${i}]`, id);
    return { id, name: r.name.trim() };
  });
}

type PropertyRefs = Map<string, { id: string; objectType: string; def: PropertyDef }>;
type PlannedProperty = ReturnType<typeof planProperties>['properties'][number];

/** Properties: displayOrder counts within each object type; internalName is unique within it. */
function planProperties(file: SetupFileT, refs: Refs) {
  const orderByType: Record<string, number> = {};
  const propByRef: PropertyRefs = new Map();
  const defsByType: Record<string, Map<string, PropertyDef>> = { contact: new Map(), company: new Map(), deal: new Map() };
  const seenNames = new Set<string>();
  const properties = (file.properties ?? []).map((p, i) => {
    const at = `properties[${i}]`;
    const key = `${p.objectType}:${p.internalName}`;
    if (seenNames.has(key)) fail(`${at}.internalName`, `"${p.internalName}" is used twice for ${p.objectType}`);
    seenNames.add(key);
    const needsOptions = p.type === 'select' || p.type === 'multi_select';
    if (needsOptions && !p.options?.length) fail(`${at}.options`, `is required for ${p.type} properties`);
    if (!needsOptions && p.options) fail(`${at}.options`, `only select and multi_select properties have options`);
    if (p.options) checkOptions(p.options, `${at}.options`);
    const id = newId('prop');
    refs.claim(p.ref, at, id);
    const def: PropertyDef = { id, type: p.type as PropertyType, options: p.options ?? null };
    if (p.ref) propByRef.set(p.ref, { id, objectType: p.objectType, def });
    defsByType[p.objectType].set(id, def);
    const order = (orderByType[p.objectType] = (orderByType[p.objectType] ?? -1) + 1);
    return { ...p, id, order };
  });
  return { properties, propByRef, defsByType };
}

type FormFieldOfFile = NonNullable<SetupFileT['forms']>[number]['fields'][number];

/** Forms: slugs unique in the tenant, field names unique in their form. */
function planForms(file: SetupFileT, refs: Refs, propByRef: PropertyRefs) {
  const formSlugs = new Set<string>();
  return (file.forms ?? []).map((f, i) => {
    const at = `forms[${i}]`;
    if (formSlugs.has(f.slug)) fail(`${at}.slug`, `"${f.slug}" is used by another form of the tenant`);
    formSlugs.add(f.slug);
    const names = new Set<string>();
    const fields = f.fields.map((fld, j) => planFormField(fld, `${at}.fields[${j}]`, names, propByRef));
    const id = newId('frm');
    refs.claim(f.ref, at, id);
    return { id, name: f.name.trim(), slug: f.slug, fields };
  });
}

/** One field of a form as stored: its options, pattern and `mapsTo` checked (a property ref becomes its id). */
function planFormField(fld: FormFieldOfFile, fat: string, names: Set<string>, propByRef: PropertyRefs) {
  if (names.has(fld.name)) fail(`${fat}.name`, `"${fld.name}" is used twice in the form`);
  names.add(fld.name);
  const needsOptions = fld.type === 'select' || fld.type === 'multi_select';
  if (needsOptions && !fld.options?.length) fail(`${fat}.options`, `is required for ${fld.type} fields`);
  if (fld.options) checkOptions(fld.options, `${fat}.options`);
  if (fld.validations?.pattern !== undefined) {
    try {
      new RegExp(fld.validations.pattern, 'u');
    } catch {
      fail(`${fat}.validations.pattern`, 'is not a valid regular expression');
    }
  }
  let mapsTo: string | undefined;
  if (fld.mapsTo !== undefined) {
    if (CONTACT_FIELDS.includes(fld.mapsTo)) mapsTo = fld.mapsTo;
    else if (fld.mapsTo.startsWith('customProperties.')) {
      const prop = propByRef.get(fld.mapsTo.slice('customProperties.'.length));
      if (!prop || prop.objectType !== 'contact') fail(`${fat}.mapsTo`, `"${fld.mapsTo}" does not name a contact property of the file`);
      mapsTo = `customProperties.${prop!.id}`;
    } else fail(`${fat}.mapsTo`, `must be one of ${CONTACT_FIELDS.join(', ')} or customProperties.<propertyRef>`);
  }
  return {
    name: fld.name,
    label: fld.label,
    type: fld.type,
    required: fld.required,
    ...(fld.options ? { options: fld.options } : {}),
    ...(fld.validations ? { validations: fld.validations } : {}),
    ...(mapsTo ? { mapsTo } : {}),
  };
}

type PlannedList = ReturnType<typeof planLists>[number];

/** Lists: a dynamic list's filters name the file's property refs and must be valid for its object type. */
function planLists(file: SetupFileT, refs: Refs, propByRef: PropertyRefs, defsByType: Record<string, Map<string, PropertyDef>>) {
  return (file.lists ?? []).map((l, i) => {
    const at = `lists[${i}]`;
    let filters: unknown = null;
    if (l.kind === 'dynamic') {
      if (l.filters === undefined) fail(`${at}.filters`, 'is required for dynamic lists');
      filters = resolvePropertyRefs(l.filters, propByRef);
      const issues = validateFilter(filters, l.objectType, defsByType[l.objectType], `${at}.filters`);
      if (issues.length) fail(issues[0].field, issues[0].message);
    } else if (l.filters !== undefined) fail(`${at}.filters`, 'only dynamic lists have filters');
    const id = newId('lst');
    refs.claim(l.ref, at, id);
    return { id, name: l.name.trim(), objectType: l.objectType, kind: l.kind, description: l.description ?? null, filters };
  });
}

/** API keys are validated before anything is written, so a bad key rolls back nothing but is still named. */
function checkApiKeyRefs(file: SetupFileT, refs: Refs, userByRef: Map<string, string>): void {
  file.apiKeys?.forEach((k, i) => {
    if (k.user !== undefined && !userByRef.has(k.user)) fail(`apiKeys[${i}].user`, `"${k.user}" is not a user ref of the file`);
    if (k.ref !== undefined && k.ref in refs.ids) fail(`apiKeys[${i}].ref`, `"${k.ref}" is used twice in the file`);
  });
}

/** The tenant's row; its slug (given, or made from its name) must be free. */
async function insertTenantOf(tx: Db, file: SetupFileT, tenantId: string, now: string): Promise<void> {
  const slug = file.tenant.slug ?? `${slugify(file.tenant.name)}-${randomBase62(6).toLowerCase()}`;
  if (await tenantSlugTaken(tx, slug)) fail('tenant.slug', `"${slug}" is taken by another tenant`);
  await insertTenant(tx, { id: tenantId, name: file.tenant.name.trim(), slug, locale: file.tenant.locale ?? DEFAULT_LOCALE, created_at: now });
}

function insertPipelineOf(tx: Db, tenantId: string, p: PlannedPipeline, now: string): Promise<void> {
  return insertPipeline(
    tx,
    { tenant_id: tenantId, id: p.id, name: p.name.trim(), is_default: p.isDefault ? 1 : 0, display_order: p.order, created_at: now },
    p.stages.map((s) => ({
      tenant_id: tenantId,
      id: s.id,
      pipeline_id: p.id,
      name: s.name.trim(),
      display_order: s.order,
      probability: s.probability,
      is_won_stage: s.isWonStage ? 1 : 0,
      is_lost_stage: s.isLostStage ? 1 : 0,
    })),
  );
}

function insertPropertyOf(tx: Db, tenantId: string, p: PlannedProperty): Promise<void> {
  return insertProperty(tx, {
    tenant_id: tenantId,
    id: p.id,
    object_type: p.objectType,
    internal_name: p.internalName,
    label: p.label,
    type: p.type,
    group_name: p.group ?? '',
    display_order: p.order,
    is_default_in_form: p.isDefaultInForm ? 1 : 0,
    options: p.options ? JSON.stringify(p.options) : null,
  });
}

async function insertListOf(tx: Db, tenantId: string, l: PlannedList, now: string): Promise<void> {
  await insertList(tx, {
    tenant_id: tenantId,
    id: l.id,
    name: l.name,
    object_type: l.objectType,
    kind: l.kind,
    description: l.description,
    filters: l.filters ? JSON.stringify(l.filters) : null,
    member_count: 0,
    recalculated_at: null,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  });
  // A new dynamic list is computed by the next recalculation pass.
  if (l.kind === 'dynamic') await markChanged(tx, tenantId, l.objectType);
}

/** The file's API keys, by ref (by id when it has none), as their secrets are shown once. */
async function createApiKeys(tx: Db, file: SetupFileT, tenantId: string, refs: Refs, userByRef: Map<string, string>): Promise<Record<string, string>> {
  const apiKeys: Record<string, string> = {};
  for (const [i, k] of (file.apiKeys ?? []).entries()) {
    try {
      const created = await createKey(tx, {
        tenantId,
        name: k.name,
        scopes: k.scopes,
        userId: k.user ? userByRef.get(k.user)! : null,
        rateLimit: k.rateLimit,
        expiresAt: k.expiresAt ?? null,
      });
      refs.claim(k.ref, `apiKeys[${i}]`, created.id);
      if (k.ref) apiKeys[k.ref] = created.key;
      else apiKeys[created.id] = created.key;
    } catch (err) {
      if (err instanceof AdminError) fail(`apiKeys[${i}]${err.path ? '.' + err.path : ''}`, err.message);
      throw err;
    }
  }
  return apiKeys;
}

function checkOptions(options: { value: string }[], at: string) {
  const seen = new Set<string>();
  options.forEach((o, i) => {
    if (seen.has(o.value)) fail(`${at}[${i}].value`, `"${o.value}" is used twice`);
    seen.add(o.value);
  });
}

/** `customProperties.<ref>` inside filters → `customProperties.<id>` (refs are the file's names for ids). */
function resolvePropertyRefs(filter: unknown, props: Map<string, { id: string }>): unknown {
  if (Array.isArray(filter)) return filter.map((f) => resolvePropertyRefs(f, props));
  if (!filter || typeof filter !== 'object') return filter;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(filter)) {
    if (k === 'field' && typeof v === 'string' && v.startsWith('customProperties.')) {
      const p = props.get(v.slice('customProperties.'.length));
      out[k] = p ? `customProperties.${p.id}` : v;
    } else out[k] = resolvePropertyRefs(v, props);
  }
  return out;
}
