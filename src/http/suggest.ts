import { distance } from 'fastest-levenshtein';

/**
 * Errors that say how to fix them: the known name closest to an unknown one (a body field, a query
 * parameter, a `sortKey` value), and JSON types in plain words. Only run on the error path.
 */

/** Case and separators do not count: `first_name`, `first-name` and `FirstName` all read as `firstname`. */
const folded = (s: string): string => s.toLowerCase().replace(/[-_\s]/g, '');

/**
 * The name of `known` closest to `input` by edit distance (Levenshtein, on the folded names), or undefined
 * when none is close enough to be what was meant. Close enough: the same name once folded (`first_name` →
 * `firstName`); at most one edit in three characters (`emial` → `email`, `frstName` → `firstName`); or a
 * known name that starts with the input of three characters or more (`sort` → `sortKey`). Ties go to the
 * name listed first.
 */
export function closestName(input: string, known: Iterable<string>): string | undefined {
  const typed = folded(input);
  if (typed.length < 2) return undefined;
  const limit = Math.max(1, Math.floor((typed.length + 1) / 3));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    if (name === input) continue;
    const candidate = folded(name);
    const d = distance(typed, candidate);
    const close = d <= limit || (typed.length >= 3 && candidate.startsWith(typed));
    if (close && d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  return best;
}

/** The suffix of a message naming a suggestion. */
export const didYouMean = (name: string): string => `; did you mean ${JSON.stringify(name)}?`;

const ONE: Record<string, string[]> = {
  string: ['a string'],
  number: ['a number'],
  integer: ['an integer'],
  boolean: ['true', 'false'],
  null: ['null'],
  object: ['an object'],
  array: ['an array'],
};

const MANY: Record<string, string> = {
  string: 'strings',
  number: 'numbers',
  integer: 'integers',
  boolean: 'true or false values',
  null: 'nulls',
  object: 'objects',
  array: 'arrays',
};

/**
 * Ajv's `type` failure in plain words: `['number', 'null']` → `must be a number or null`, `boolean` →
 * `must be true or false`, an array whose items have one type → `must be an array of strings`.
 */
export function typeMessage(type: unknown, schema?: object): string {
  const types = Array.isArray(type) ? type.map(String) : String(type).split(',');
  const words: string[] = [];
  for (const t of types) {
    const itemType = (schema as { items?: { type?: unknown } } | undefined)?.items?.type;
    if (t === 'array' && typeof itemType === 'string' && MANY[itemType]) words.push(`an array of ${MANY[itemType]}`);
    else words.push(...(ONE[t] ?? [t]));
  }
  const last = words.pop()!;
  return `must be ${words.length ? `${words.join(', ')} or ${last}` : last}`;
}
