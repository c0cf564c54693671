/**
 * What every JSON body must hold before anything reads it (CONTRACT B.2), judged once at the edge (the
 * content-type parser of app.ts) for every route alike: bounded nesting, no NUL (PostgreSQL text cannot
 * hold one), numbers that are finite and strings (values and keys) that are well-formed Unicode, so that
 * what a write answers is exactly what every later read, event and webhook carries. A body nested too deeply
 * is refused at once; the other issues are held for the body's validator (validation.ts), which names them
 * with the rest of the body's invalid fields, or for app.ts's preValidation hook on a route without a body schema.
 */

declare global {
  interface String {
    // ES2024, in Node since 20; the project's TypeScript lib is ES2022.
    /** False when the string holds a lone surrogate (an unpaired code unit of U+D800–U+DFFF). */
    isWellFormed(): boolean;
    /** The string with each lone surrogate replaced by U+FFFD. */
    toWellFormed(): string;
  }
}

/** No body of the API nests anywhere near this deep (filter groups, the deepest, stay under 10). */
export const MAX_BODY_DEPTH = 64;

export const NOT_FINITE = 'must be a finite number';
export const LONE_SURROGATE = 'must be well-formed Unicode (no lone surrogates)';
const NUL = 'must not contain NUL characters';

/**
 * Raw JSON text whose strings (values and keys) need a look: a NUL is only ever written `\u0000` (a raw control
 * character is invalid JSON), and a lone surrogate only ever as an escape `\uD800`–`\uDFFF` (raw bytes of one are
 * invalid UTF-8, which the body's decoding turns into U+FFFD before JSON.parse sees them). Text without any escape
 * (what JSON.stringify writes for any well-formed string but a control character) is cleared by one scan.
 * Numbers need no such hint: the walk reads every value of every object and array anyway (for the depth), and
 * tells a number that is not finite (a literal beyond ±1.8e308, `1e309`) by one `typeof` and one test.
 */
const ESCAPE = '\\u';

export interface BodyIssue {
  field: string;
  message: string;
}

/** At most this many value issues are named (a 1 MiB body could hold 100,000). */
const MAX_ISSUES = 100;

/**
 * Bodies whose values the parser refused, with their issues. The body's validator reports them together with the
 * schema's own failures and the value rules' (validation.ts), so that every invalid field is named at once (C.5).
 */
const held = new WeakMap<object, BodyIssue[]>();

/**
 * Judges a parsed JSON body. `text` is the raw body it was parsed from: it decides whether strings need a look at
 * all (see ESCAPE). Answers the issues to refuse the body with at once (nested too deeply, or a body that is
 * not an object or array), else null; the issues of an object's values (a NUL, a lone surrogate in a value or a
 * key, a number that is not finite) are held for its validator (heldIssues).
 */
export function judgeJsonBody(value: unknown, text: string): BodyIssue[] | null {
  const { issues, fatal } = walk(value, text.includes(ESCAPE));
  if (issues.length === 0) return null;
  if (fatal || value === null || typeof value !== 'object') return issues;
  held.set(value, issues);
  return null;
}

/**
 * Holds the value issues of a body another parser made (a form's urlencoded fields), for its validator, as
 * judgeJsonBody does for JSON: every string is judged (the raw text gives no hint of a NUL: `%00`).
 */
export function holdValueIssues(body: object): void {
  const { issues } = walk(body, true);
  if (issues.length > 0) held.set(body, issues);
}

/** The value issues judgeJsonBody found in this body, if any. */
export function heldIssues(body: unknown): BodyIssue[] | undefined {
  return body !== null && typeof body === 'object' ? held.get(body) : undefined;
}

/** The first issue of a value that did not come from raw text (a setup file already parsed): every scalar is judged. */
export function checkJsonValue(value: unknown): BodyIssue | null {
  return walk(value, true).issues[0] ?? null;
}

type Node = { value: unknown; parent: Node | null; key: string | number; depth: number };

/**
 * A node's path, built only for the ones named: a search's filter of 8,000 values built 8,000 paths
 * (`filters.conditions[1].value[417]`) on every request otherwise. A key's lone surrogates are shown as
 * U+FFFD, so that the error naming it is well-formed itself.
 */
function pathOf(n: Node): string {
  const keys: (string | number)[] = [];
  for (let x: Node | null = n; x && x.parent; x = x.parent) keys.push(x.key);
  const path = keys.reverse().reduce<string>((p, k) => (typeof k === 'number' ? `${p}[${k}]` : p ? `${p}.${k}` : k), '') || '(body)';
  return path.toWellFormed();
}

/** What is wrong with a string (a value or a key), if anything. */
function stringIssue(s: string): string | null {
  if (s.includes('\u0000')) return NUL;
  return s.isWellFormed() ? null : LONE_SURROGATE;
}

/** Whether a value of an object or array is pushed to be judged (see walk). */
function offends(v: unknown, strings: boolean): boolean {
  return strings || (v !== null && typeof v === 'object') || (typeof v === 'number' && !Number.isFinite(v));
}

/** Past MAX_ISSUES the walk goes on for the depth alone: nothing downstream may meet a hostile depth. */
function add(issues: BodyIssue[], node: Node, message: string): void {
  if (issues.length < MAX_ISSUES) issues.push({ field: pathOf(node), message });
}

/**
 * Every value issue of a body in document order, or the one node nested too deeply (`fatal`: the walk stops there,
 * and nothing downstream may walk such a body). Iterative with an explicit stack: a recursive walk is a stack
 * overflow (a 500) on a 10 KB body nested 5,000 deep. Only what can offend is pushed: objects and arrays (by depth),
 * numbers that are not finite, and, when `strings`, every value (a key is judged with its value).
 */
function walk(root: unknown, strings: boolean): { issues: BodyIssue[]; fatal: boolean } {
  const issues: BodyIssue[] = [];
  const stack: Node[] = [{ value: root, parent: null, key: '', depth: 0 }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { value, depth } = node;
    if (strings && typeof node.key === 'string' && node.parent) {
      const keyIssue = stringIssue(node.key);
      if (keyIssue !== null) add(issues, node, keyIssue);
    }
    if (typeof value !== 'object' || value === null) {
      const message =
        typeof value === 'string' ? (strings ? stringIssue(value) : null) : typeof value === 'number' && !Number.isFinite(value) ? NOT_FINITE : null;
      if (message !== null) add(issues, node, message);
      continue;
    }
    if (depth >= MAX_BODY_DEPTH) return { issues: [{ field: pathOf(node), message: `is nested too deeply (at most ${MAX_BODY_DEPTH} levels)` }], fatal: true };
    // Children are pushed in reverse so that they are judged in document order.
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) {
        const v: unknown = value[i];
        if (offends(v, strings)) stack.push({ value: v, parent: node, key: i, depth: depth + 1 });
      }
      continue;
    }
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, v] = entries[i];
      if (offends(v, strings)) stack.push({ value: v, parent: node, key: k, depth: depth + 1 });
    }
  }
  return { issues, fatal: false };
}
