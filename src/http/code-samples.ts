// The reference page's SDK examples: one `x-codeSamples` entry (lang `typescript`, label `SDK`) per
// operation, written here from each operation's method, path, parameters and request body, so that no
// route file carries one and none can be forgotten. Scalar lists them beside its own generated `curl`.
// Every sample is code of the real SDK (sdk/, @crm/sdk); test/sdk/code-samples.test.ts type-checks
// them all against it.

type Json = Record<string, any>;

const METHODS = ['get', 'post', 'patch', 'put', 'delete'] as const;
const header = (imports: string) => `import { ${imports} } from '@crm/sdk';

const crm = createClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'crm_live_…' });
`;

/** Adds the SDK sample to every operation of `doc` (in place) and returns it. */
export function addSdkCodeSamples<T extends Json>(doc: T): T {
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      const samples = ((op['x-codeSamples'] ??= []) as Json[]).filter((s) => s.label !== 'SDK');
      samples.push({ lang: 'typescript', label: 'SDK', source: sdkSample(doc, method, path, op) });
      op['x-codeSamples'] = samples;
    }
  }
  return doc;
}

/** The SDK call of one operation: `await crm.GET('/api/v1/contacts/{id}', { params: { path: { id: '<id>' } } })`. */
export function sdkSample(doc: Json, method: (typeof METHODS)[number], path: string, op: Json): string {
  const params = (op.parameters ?? []) as Json[];
  const paged = pagination(doc, method, op);
  const init: Json = {};
  const pathParams = Object.fromEntries(params.filter((p) => p.in === 'path').map((p) => [p.name, `<${p.name}>`]));
  const query: Json = {};
  for (const p of params.filter((x) => x.in === 'query')) {
    if (p.required) query[p.name] = p.example ?? sampleValue(doc, p.schema ?? {}, p.name, 0);
    else if (paged && p.name === 'pageSize') query.pageSize = 50;
  }
  const request: Json = {};
  if (Object.keys(pathParams).length) request.path = pathParams;
  if (Object.keys(query).length) request.query = query;
  if (Object.keys(request).length) init.params = request;

  const media = op.requestBody?.content?.['application/json'] as Json | undefined;
  if (media) init.body = media.example ?? sampleValue(doc, media.schema ?? {}, 'body', 0);
  const success = Object.entries((op.responses ?? {}) as Record<string, Json>).filter(([status]) => /^2/.test(status));
  const json = success.some(([, r]) => r.content?.['application/json']);
  if (!json && success.some(([, r]) => r.content)) init.parseAs = 'text';

  const lines = [header(paged === 'body' ? 'createClient, type RequestBody' : 'createClient')];
  // A POST list repeats its body on every page: it is named once (typed, so its literals stay literal types) and given to both calls.
  if (paged === 'body') {
    const type = `RequestBody<${literal(path)}>`;
    lines.push(`const body: ${type} = ${literal(init.body, 0, 15 + type.length)};`, '');
    init.body = BODY_VARIABLE;
  }
  const call = (name: string, args: unknown[], used: number) => {
    const head = `${name}(${literal(path)}`;
    if (!args.length) return `${head})`;
    return `${head}, ${literal(args[0], 0, used + head.length + 2)})`;
  };
  const declare = success.some(([, r]) => r.content) ? 'const { data } = await ' : 'await ';
  const method_ = `crm.${method.toUpperCase()}`;
  lines.push(`${declare}${call(method_, Object.keys(init).length ? [init] : [], declare.length)};`);
  if (paged) {
    const first = paged === 'body' ? { body: BODY_VARIABLE } : request;
    const loop = 'for await (const record of ';
    lines.push('', `// Every record, page after page (the SDK follows ${paged === 'link' ? 'the Link header' : 'pagination.nextCursor'}):`);
    lines.push(`${loop}${call('crm.paginate', Object.keys(first).length ? [first] : [], loop.length)}) {`, `  console.log(record.${itemKey(doc, op)});`, '}');
  }
  return lines.join('\n') + '\n';
}

/** What identifies an item of the operation's page: `id`, or `ids` for a page of pairs (the duplicates, CONTRACT D.3). */
function itemKey(doc: Json, op: Json): 'id' | 'ids' {
  const page = resolve(doc, op.responses?.['200']?.content?.['application/json']?.schema ?? {});
  const item = resolve(doc, resolve(doc, page.properties?.data ?? {}).items ?? {});
  return item.properties?.id === undefined && item.properties?.ids !== undefined ? 'ids' : 'id';
}

/** How the operation's list continues: a cursor in the query or in the body, the Link header, or not at all. */
function pagination(doc: Json, method: string, op: Json): 'query' | 'body' | 'link' | null {
  const ok = op.responses?.['200'] as Json | undefined;
  if (!ok) return null;
  if (method === 'get' && ok.headers?.Link) return 'link';
  const schema = resolve(doc, ok.content?.['application/json']?.schema ?? {});
  if (!resolve(doc, schema.properties?.pagination ?? {}).properties?.nextCursor) return null;
  return method === 'get' ? 'query' : method === 'post' ? 'body' : null;
}

function resolve(doc: Json, schema: Json): Json {
  const ref = schema.$ref as string | undefined;
  if (!ref?.startsWith('#/')) return schema;
  return (
    ref
      .slice(2)
      .split('/')
      .reduce<Json>((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc) ?? {}
  );
}

/** A small valid value of a schema: its example, else its required properties (or its first one), one array item. */
function sampleValue(doc: Json, raw: Json, name: string, depth: number): unknown {
  const schema = resolve(doc, raw);
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum.find((v: unknown) => v !== null) ?? null;
  const variants = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (variants) return sampleValue(doc, variants.find((v) => resolve(doc, v).type !== 'null') ?? variants[0], name, depth + 1);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  if (depth > 6) return null;
  switch (type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Json>;
      const keys = (schema.required as string[] | undefined)?.length ? (schema.required as string[]) : Object.keys(props).slice(0, 1);
      return Object.fromEntries(keys.map((k) => [k, sampleValue(doc, props[k] ?? {}, k, depth + 1)]));
    }
    case 'array':
      return [sampleValue(doc, schema.items ?? {}, name.replace(/s$/, ''), depth + 1)];
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'email') return 'ana@example.com';
      if (schema.format === 'date-time') return '2026-11-22T10:00:00.000Z';
      if (schema.format === 'date') return '2026-11-22';
      if (schema.format === 'uri' || /url$/i.test(name)) return 'https://example.com/hook';
      return /(^id|Id|Ids?)$/.test(name) ? `<${name}>` : 'text';
    default:
      return null;
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
/** Stands for the variable `body` in a literal (printed bare, and as shorthand `{ body }`). */
const BODY_VARIABLE = Symbol('body');
const LINE = 80;

/**
 * A TypeScript literal of a JSON value: unquoted keys where possible, single-quoted strings; on one line
 * when it fits in what is left of the line (`used` columns are taken), else one item a line.
 */
function literal(value: unknown, indent = 0, used = 0): string {
  if (value === BODY_VARIABLE) return 'body';
  if (typeof value === 'string') return `'${JSON.stringify(value).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const pad = '  '.repeat(indent + 1);
  const entry = ([k, v]: [string, unknown]) => {
    const key = IDENTIFIER.test(k) ? k : literal(k);
    return v === BODY_VARIABLE && k === 'body' ? key : `${key}: ${literal(v, indent + 1, pad.length + key.length + 2)}`;
  };
  const items = Array.isArray(value) ? value.map((v) => literal(v, indent + 1, pad.length)) : Object.entries(value).map(entry);
  if (items.length === 0) return Array.isArray(value) ? '[]' : '{}';
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{ ', ' }'];
  const oneLine = `${open}${items.join(', ')}${close}`;
  if (used + oneLine.length <= LINE && !oneLine.includes('\n')) return oneLine;
  return `${open.trim()}\n${items.map((i) => pad + i).join(',\n')},\n${'  '.repeat(indent)}${close.trim()}`;
}
