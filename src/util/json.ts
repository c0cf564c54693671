export function parseJson<T>(text: string | null | undefined, fallback: T): T {
  if (text === null || text === undefined || text === '') return fallback;
  return JSON.parse(text) as T;
}

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` compare equal (request fingerprints, record diffs). */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return '';
  // Loops and concatenation rather than map/filter/join: it runs on every idempotent request's body.
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i ? ',' : '') + (value[i] === undefined ? 'null' : canonicalJson(value[i]));
    return out + ']';
  }
  const record = value as Record<string, unknown>;
  let out = '{';
  for (const k of Object.keys(record).sort()) {
    if (record[k] === undefined) continue;
    out += (out.length > 1 ? ',' : '') + JSON.stringify(k) + ':' + canonicalJson(record[k]);
  }
  return out + '}';
}
