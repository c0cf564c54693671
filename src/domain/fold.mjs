// @ts-check
/**
 * Text folding for search (CONTRACT C.5): the one definition of "ignores case and accents", used for the
 * needle of every search and for the stored search columns (db/search-text.ts). SQLite runs this very
 * function as the SQL function `crm_fold` (registered on every connection, the read processes included);
 * PostgreSQL runs a SQL translation of it, created by migration 009, and a test checks they agree.
 *
 * Plain JavaScript (checked by tsc through JSDoc) because the SQLite read processes
 * (db/sqlite-reader.process.mjs) load it without a TypeScript loader, from src/ and from dist/ alike.
 *
 * foldText(s):
 *   1. NFKD: accents become separate combining marks, and compatibility forms their plain letters
 *      (ﬁ → fi, full-width Ｊｏａｏ → Joao, ² → 2, ℌ → H).
 *   2. Unicode lower case (full mapping, locale-independent: İ → i̇, Σ → σ/ς, Ж → ж, ẞ → ß).
 *   3. Combining marks of the diacritic blocks removed (FOLD_MARKS): Latin, Greek and Cyrillic accents,
 *      Hebrew points and Arabic harakat. Marks that are letters' vowels or voicing in other scripts
 *      (Devanagari and Thai vowel signs, Japanese dakuten が/か, Hangul is not decomposed) are kept: removing
 *      them would make different words equal, which is not ignoring an accent.
 *   4. Letters that are a base letter with a stroke or a variant form, and have no decomposition, are
 *      mapped to it (FOLD_LETTERS: ł → l, ø → o, đ → d, ħ → h, ŧ → t, ı → i, final ς → σ), and ß → ss
 *      (full case folding), so "lodz" finds "Łódź", "strasse" finds "Straße" and "ΟΔΥΣΣΕΥΣ" finds "Οδυσσεύς".
 *   5. NFC, so what is left (CJK, Hangul, kept marks) is in its usual composed form: CJK is unchanged.
 *
 * ASCII text folds to its lower case (nothing else applies), which the SQL functions use as a fast path.
 */

/** Combining marks removed (step 3), as a regular-expression character class body (code points, BMP). */
export const FOLD_MARKS =
  '\u0300-\u036f' + // Combining Diacritical Marks (Latin, Greek tonos/dialytika, Cyrillic breve…)
  '\u0483-\u0489' + // Cyrillic titlo and other combining marks
  '\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7' + // Hebrew points and cantillation
  '\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed' + // Arabic harakat
  '\u1ab0-\u1aff' + // Combining Diacritical Marks Extended
  '\u1dc0-\u1dff' + // Combining Diacritical Marks Supplement
  '\u20d0-\u20ff' + // Combining Diacritical Marks for Symbols
  '\ufe20-\ufe2f'; // Combining Half Marks

/** Step 4's one-to-one letters: FOLD_LETTERS.from[i] → FOLD_LETTERS.to[i] (after lower-casing). */
export const FOLD_LETTERS = { from: 'ςłøđħŧıƀɨ', to: 'σlodhtibi' };

const MARKS = new RegExp(`[${FOLD_MARKS}]`, 'g');
const LETTERS = new RegExp(`[${FOLD_LETTERS.from}ß]`, 'g');
/** @type {Record<string, string>} */
const LETTER_MAP = { ß: 'ss' };
for (let i = 0; i < FOLD_LETTERS.from.length; i++) LETTER_MAP[FOLD_LETTERS.from[i]] = FOLD_LETTERS.to[i];
// eslint-disable-next-line no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/**
 * `s` without case and accents (see above): `foldText('João')` = `foldText('JOAO')` = 'joao'.
 * @param {string} s
 * @returns {string}
 */
export function foldText(s) {
  if (ASCII.test(s)) return s.toLowerCase();
  return s
    .normalize('NFKD')
    .toLowerCase()
    .replace(MARKS, '')
    .replace(LETTERS, (c) => LETTER_MAP[c])
    .normalize('NFC');
}

/** @type {string | null} */
let lastIn = null;
let lastOut = '';

/**
 * The SQL function `crm_fold(text)` of SQLite: foldText, with NULL (and non-text values) passed through
 * as SQL does. Registered as deterministic so that SQLite may factor it out of a statement.
 * NOTE: SQLite calls it once per condition, so a filter with several `contains` on one field folds the same
 * value several times per row; remembering the last answer made 20 such conditions on 100k contacts 1.6×
 * faster (a pure function, and each connection's process runs one statement at a time).
 * @param {unknown} v
 * @returns {unknown}
 */
export function sqlFold(v) {
  if (typeof v !== 'string') return v;
  if (v !== lastIn) {
    lastOut = foldText(v);
    lastIn = v;
  }
  return lastOut;
}
