/**
 * Row arrays → row objects, as better-sqlite3 returns them (a repeated column name keeps its last value).
 * better-sqlite3 builds each row object in C++, one named property at a time: on a page of 50 contacts that
 * took ~300 µs against ~220 µs for the same statement in raw (array) mode plus a loop over the columns.
 * Used by the main connection (index.ts) and by the read processes' answers (sqlite-reader.ts).
 */

/** Makes the objects of rows that have one list of columns. */
export type RowMaker = (rows: readonly unknown[][]) => Record<string, unknown>[];

/**
 * The row maker of one list of columns: a function whose object literal names each column, made once per
 * statement (index.ts) or list of columns (`rowMakerOf`).
 * NOTE: generated, not a loop: a loop's `o[columns[j]] = …` is one store site for every column of every
 * statement, which V8 turns megamorphic in a server that runs hundreds of statements (a hashed lookup per
 * value); a literal makes each row in one step with its final shape. 50 rows of 13 columns: 7.6–8.0 µs with
 * the loop, 0.6–0.8 µs with the literal (bench/journal/). Names are written as JSON string
 * literals, so no column name can be read as code; `__proto__` is written as a computed name, which a
 * literal defines as its own property (a plain `"__proto__":` would set the prototype).
 */
export function rowMaker(columns: readonly string[]): RowMaker {
  const literal = columns.map((c, j) => `${c === '__proto__' ? `[${JSON.stringify(c)}]` : JSON.stringify(c)}: r[${j}]`).join(', ');
  return new Function(
    'rows',
    `const out = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) { const r = rows[i]; out[i] = { ${literal} }; }
    return out;`,
  ) as RowMaker;
}

const makers = new Map<string, RowMaker>();
const MAKERS_MAX = 1000;

/** The row maker of these columns, kept for the next rows with the same ones (read processes' answers). */
export function rowMakerOf(columns: readonly string[]): RowMaker {
  const key = JSON.stringify(columns);
  let maker = makers.get(key);
  if (!maker) {
    if (makers.size >= MAKERS_MAX) makers.delete(makers.keys().next().value as string);
    makers.set(key, (maker = rowMaker(columns)));
  }
  return maker;
}
