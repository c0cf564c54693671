// @ts-check
/**
 * The keys of the duplicate rules (CONTRACT D.3): two live records that share a key are probably the same.
 * The one definition of each rule. SQLite runs these very functions as SQL functions (DUPLICATE_KEY_FUNCTIONS,
 * registered on every connection that opens the file, deterministic so that expression indexes may hold them);
 * PostgreSQL runs SQL translations created by migration 022, and test/domain/duplicate-keys.test.ts checks
 * that both give the same key on the same inputs. A change here needs a later migration that replaces the
 * PostgreSQL functions and rebuilds the indexes (SQLite: REINDEX).
 *
 * Plain JavaScript (checked by tsc through JSDoc), like fold.mjs: the SQLite read processes load it without a
 * TypeScript loader. Every key is null when its source is null, as SQL functions do.
 */
import { foldText } from './fold.mjs';

/** Mail providers that ignore dots in the local part (`a.na@gmail.com` is `ana@gmail.com`); one mailbox under both names. */
const DOTLESS_DOMAINS = new Set(['gmail.com', 'googlemail.com']);

/**
 * `email`: the address without the local part's `+tag`, and for Gmail without its dots (googlemail.com read as
 * gmail.com). `ana+crm@gmail.com` and `a.na@gmail.com` → `ana@gmail.com`. A local part that is only a tag keeps it.
 * @param {string} email
 * @returns {string | null}
 */
export function emailKey(email) {
  const e = email.toLowerCase();
  const at = e.lastIndexOf('@');
  if (at < 0) return null;
  let local = e.slice(0, at);
  let domain = e.slice(at + 1);
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  if (DOTLESS_DOMAINS.has(domain)) {
    local = local.replaceAll('.', '');
    domain = 'gmail.com';
  }
  return `${local}@${domain}`;
}

/**
 * The domain of an e-mail address, lower case (the `name` rule's "same e-mail domain").
 * @param {string} email
 * @returns {string | null}
 */
export function emailDomainKey(email) {
  const at = email.lastIndexOf('@');
  return at < 0 ? null : email.slice(at + 1).toLowerCase();
}

// ASCII white space only, written out: PostgreSQL's `\s` depends on the locale, JavaScript's covers Unicode.
const SPACES = /[ \t\n\r\f\v]+/g;

/**
 * `name` (contacts): first and last name folded (C.5: no case, no accents), white space collapsed; null when
 * both are empty. "Ana  Lúcia" + "SILVA" → `ana lucia silva`.
 * @param {string | null} first
 * @param {string | null} last
 * @returns {string | null}
 */
export function personKey(first, last) {
  const key = stripSpaces(foldText(`${first ?? ''} ${last ?? ''}`).replace(SPACES, ' '));
  return key === '' ? null : key;
}

/** Legal-form suffixes dropped from a company's name (CONTRACT D.3), after dots and slashes go (`S.A.`, `S/A` → `sa`). */
export const LEGAL_SUFFIXES = ['ltda', 'sa', 'me', 'epp', 'eireli', 'inc', 'llc', 'ltd', 'gmbh'];
// ASCII punctuation and controls; letters of other scripts stay (they were folded).
const PUNCTUATION = /[\x01-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]+/g;
const SUFFIXES = new RegExp(`( (${LEGAL_SUFFIXES.join('|')}))+$`);

/**
 * `name` (companies): folded, dots and slashes removed, other ASCII punctuation as spaces, trailing legal
 * suffixes dropped (several: `Acme Ltda ME`). `Acme Ltda`, `ACME S.A.` and `Acme, Inc.` → `acme`. A name that is
 * only a suffix (`S.A.`) keeps it; an empty one is null.
 * @param {string} name
 * @returns {string | null}
 */
export function companyNameKey(name) {
  const words = stripSpaces(foldText(name).replace(/[./]/g, '').replace(PUNCTUATION, ' ').replace(SPACES, ' '));
  const key = words.replace(SUFFIXES, '');
  return key === '' ? null : key;
}

/**
 * Leading and trailing ASCII spaces removed (not String.trim: the SQL twin's btrim(s, ' ') removes only those).
 * @param {string} s
 */
function stripSpaces(s) {
  return s.replace(/^ +| +$/g, '');
}

// A registrable domain under a country's second-level suffix (`acme.com.br`, `acme.co.uk`), else the last two
// labels. NOTE: a heuristic instead of the Public Suffix List (no library for it among our dependencies): it covers
// the usual second levels of country domains and never joins two registrable domains of a generic top level.
const UNDER_SECOND_LEVEL = /[^.]+\.(?:com|net|org|gov|edu|co|ac|or|ne|go|mil|nom|art|ind|adv|eng|med|blog|app|dev)\.[a-z]{2}$/;
const LAST_TWO = /[^.]+\.[^.]+$/;

/**
 * `domain` (companies): the registrable domain. `sales.acme.com` → `acme.com`, `loja.acme.com.br` → `acme.com.br`.
 * @param {string} domain
 * @returns {string | null}
 */
export function registrableDomain(domain) {
  const d = domain.toLowerCase();
  const m = UNDER_SECOND_LEVEL.exec(d) ?? LAST_TWO.exec(d);
  return m ? m[0] : d;
}

/**
 * `cnpj` (companies): its root, the first 8 characters (the branches of one company share it).
 * @param {string} cnpj
 * @returns {string}
 */
export function cnpjRoot(cnpj) {
  return cnpj.slice(0, 8);
}

/** @param {unknown} v */
const text = (v) => (typeof v === 'string' ? v : null);
/**
 * @param {(s: string) => string | null} fn
 * @returns {(v: unknown) => unknown}
 */
const unary = (fn) => (v) => {
  const s = text(v);
  return s === null ? null : fn(s);
};

/**
 * The SQL functions of the keys, by name, each taking as many arguments as its JavaScript function declares
 * (better-sqlite3 reads `length`): SQLite registers each on every connection that may write the tables
 * (`deterministic: true`, which an expression index requires); migration 022 creates their PostgreSQL twins.
 * @type {ReadonlyArray<readonly [string, (...args: unknown[]) => unknown]>}
 */
export const DUPLICATE_KEY_FUNCTIONS = [
  ['crm_dup_email', unary(emailKey)],
  ['crm_dup_email_domain', unary(emailDomainKey)],
  [
    'crm_dup_person',
    (/** @type {unknown} */ first, /** @type {unknown} */ last) => (text(first) === null && text(last) === null ? null : personKey(text(first), text(last))),
  ],
  ['crm_dup_company_name', unary(companyNameKey)],
  ['crm_dup_domain', unary(registrableDomain)],
];

/**
 * Registers DUPLICATE_KEY_FUNCTIONS on a better-sqlite3 connection: every connection that writes contacts or
 * companies must (their expression indexes call them: without, a write fails with "no such function").
 * @param {{ function(name: string, options: { deterministic: boolean }, fn: (...args: any[]) => unknown): unknown }} db
 */
export function registerDuplicateKeyFunctions(db) {
  for (const [name, fn] of DUPLICATE_KEY_FUNCTIONS) db.function(name, { deterministic: true }, fn);
}
