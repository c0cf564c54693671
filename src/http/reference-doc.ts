// What the reference page (Scalar, /docs) needs of the generated OpenAPI document beyond the routes'
// schemas, applied once when the document is built:
// - each resource's operations in the order List, Create, Get, Update, Delete, then the rest (Scalar lists
//   a tag's operations in the document's order of paths and methods; routes register in another order);
// - a real example answer for every 2xx JSON response (else Scalar makes one of `"string"` placeholders),
//   built from the schemas' own examples;
// - no pre-filled values for optional query parameters: Scalar's "Test Request" fills a parameter with its
//   example, which would quietly narrow the answer (`search=maria`). The descriptions stay.

type Json = Record<string, any>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** The `pagination` of an example page: the first of three, with the cursor that continues after it. */
const PAGE: Json = {
  page: 1,
  pageSize: 50,
  limit: 50,
  total: 132,
  totalPages: 3,
  hasNext: true,
  hasPrev: false,
  nextCursor: 'q3Xk9Tz1mW8bR2cL7yPa0vN5sE4hJ6gD8fK1uQ3w.Hq4pL8sV2kT9mW1xR7bC3n',
};

/** Applies the three changes above to `doc` (in place) and returns it. */
export function prepareReference<T extends Json>(doc: T): T {
  const paths = (doc.paths ?? {}) as Record<string, Json>;
  const examples = new ExampleMaker(doc);
  for (const item of Object.values(paths)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      clearOptionalQueryExamples(op);
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        const media = response.content?.['application/json'] as Json | undefined;
        if (!/^2/.test(status) || !media || media.example !== undefined || media.examples !== undefined) continue;
        // A record without a title of its own (a batch result) is of the operation's resource: `Contacts` → `Contact`.
        media.example = examples.of(
          media.schema ?? {},
          'body',
          0,
          String(op.tags?.[0] ?? '')
            .replace(/ies$/, 'y')
            .replace(/s$/, ''),
        );
      }
    }
  }
  (doc as Json).paths = sortPaths(paths);
  return doc;
}

/** Optional query parameters keep their description but lose their example values. */
function clearOptionalQueryExamples(op: Json): void {
  for (const p of (op.parameters ?? []) as Json[]) {
    if (p.in !== 'query' || p.required) continue;
    delete p.example;
    delete p.examples;
    if (p.schema) {
      delete p.schema.example;
      delete p.schema.examples;
    }
  }
}

/** A path's operations' tag: its first one. */
const tagOf = (item: Json): string | undefined => METHODS.map((m) => item[m]?.tags?.[0]).find(Boolean);
const depth = (path: string): number => path.split('/').length;

/**
 * The rank of one operation within its tag: 0 List (GET of the tag's collection path), 1 Create (its POST),
 * 2 Get, 3 Update, 4 Delete (of `<collection>/{id}`), 5 the rest.
 */
function rank(collection: string | undefined, path: string, method: string): number {
  if (collection === undefined) return 5;
  if (path === collection) return method === 'get' ? 0 : method === 'post' ? 1 : 5;
  if (!/^\/\{[^/]+\}$/.test(path.slice(collection.length)) || !path.startsWith(collection)) return 5;
  return method === 'get' ? 2 : method === 'patch' || method === 'put' ? 3 : method === 'delete' ? 4 : 5;
}

/**
 * The paths reordered: within each tag, by the best rank of their operations (ties keep the order of
 * registration), and each path's methods by rank. A tag's collection path is its shortest one.
 */
function sortPaths(paths: Record<string, Json>): Record<string, Json> {
  const collection = new Map<string, string>();
  for (const [path, item] of Object.entries(paths)) {
    const tag = tagOf(item);
    if (tag === undefined) continue;
    const known = collection.get(tag);
    if (known === undefined || depth(path) < depth(known)) collection.set(tag, path);
  }
  const ranked = Object.entries(paths).map(([path, item], index) => {
    const base = collection.get(tagOf(item) ?? '');
    const methods = METHODS.filter((m) => item[m]).sort((a, b) => rank(base, path, a) - rank(base, path, b));
    const best = Math.min(5, ...methods.map((m) => rank(base, path, m)));
    const others = Object.fromEntries(Object.entries(item).filter(([key]) => !(METHODS as readonly string[]).includes(key)));
    return { path, index, best, item: { ...others, ...Object.fromEntries(methods.map((m) => [m, item[m]])) } };
  });
  ranked.sort((a, b) => a.best - b.best || a.index - b.index);
  return Object.fromEntries(ranked.map((r) => [r.path, r.item]));
}

/** The JSON type of a value, as a schema names it. */
function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * Example values built from the document's own examples: a schema's first example where it has one,
 * else its parts' examples; a property without one takes the value the same property has in a
 * record's example (an `id` the one of the record its schema's title names: `ContactDeal` → `Deal`).
 */
class ExampleMaker {
  private readonly byName = new Map<string, unknown>();
  private readonly records: [title: string, example: Json][] = [];

  constructor(private readonly doc: Json) {
    for (const [name, schema] of Object.entries((doc.components?.schemas ?? {}) as Record<string, Json>)) {
      const example = schema.examples?.[0] ?? schema.example;
      if (!example || typeof example !== 'object' || Array.isArray(example)) continue;
      this.records.push([name, example]);
      for (const [key, value] of Object.entries(example)) if (key !== 'id' && !this.byName.has(key)) this.byName.set(key, value);
    }
    // The longest record names first, so that `ContactDeal` finds `Deal` rather than a shorter match.
    this.records.sort((a, b) => b[0].length - a[0].length);
  }

  of(raw: Json, name: string, level: number, owner?: string): unknown {
    const schema = this.resolve(raw);
    if (schema.example !== undefined) return schema.example;
    if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
    if (schema.const !== undefined) return schema.const;
    if (Array.isArray(schema.enum)) return schema.enum.find((v: unknown) => v !== null) ?? null;
    const variants = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
    if (variants?.length) return this.of(variants.find((v) => this.resolve(v).type !== 'null') ?? variants[0], name, level + 1, owner);
    const types = ([] as string[]).concat(schema.type ?? []);
    const type = types.find((t) => t !== 'null');
    if (level > 8) return null;
    const known = this.known(name, owner, types);
    if (known !== undefined) return known;
    if (type === 'object') {
      const props = (schema.properties ?? {}) as Record<string, Json>;
      const title = (schema.title as string | undefined) ?? owner;
      const given = name === 'pagination' ? PAGE : {};
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, given[k] ?? this.of(v, k, level + 1, title)]));
    }
    // An array of ids (`ids`, batch/read's `missing`) holds ids of the owner's records.
    const item = name === 'missing' || name === 'ids' ? 'id' : name.replace(/s$/, '');
    if (type === 'array') return [this.of(schema.items ?? {}, item, level + 1, owner)];
    return this.scalar(schema, type, name);
  }

  /** The value of property `name` in a record's example, when it has a type the schema allows. */
  private known(name: string, owner: string | undefined, types: string[]): unknown {
    const record = name === 'id' && owner ? this.records.find(([title]) => owner.endsWith(title))?.[1] : undefined;
    const value = record ? record.id : name === 'id' ? undefined : this.byName.get(name);
    if (value === undefined) return undefined;
    const type = typeOf(value);
    const fits = types.length === 0 || types.includes(type) || (type === 'integer' && types.includes('number'));
    return fits ? value : undefined;
  }

  private scalar(schema: Json, type: string | undefined, name: string): unknown {
    switch (type) {
      case 'integer':
      case 'number':
        // `index` of a batch result counts from 0; its `status` is the HTTP status of that input.
        if (name === 'index') return 0;
        if (name === 'status') return 200;
        return schema.minimum ?? 1;
      case 'boolean':
        return true;
      case 'string':
        if (schema.format === 'email') return 'maria@acme.com.br';
        if (schema.format === 'date-time') return '2026-11-22T10:00:00.000Z';
        if (schema.format === 'date') return '2026-11-22';
        if (schema.format === 'uri' || /url$/i.test(name)) return 'https://example.com/hook';
        return /(^id|Id)$/.test(name) ? `${name.replace(/Id$/, '').slice(0, 3) || 'obj'}_3kT9xQ2mL8vB1nR7pW4z` : 'Example';
      default:
        return null;
    }
  }

  private resolve(schema: Json): Json {
    const ref = schema.$ref as string | undefined;
    if (!ref?.startsWith('#/')) return schema;
    return (
      ref
        .slice(2)
        .split('/')
        .reduce<Json>((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc) ?? {}
    );
  }
}
