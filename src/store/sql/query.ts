// A statement as text parts and the values between them, built with the `sql` tag:
// sql`SELECT * FROM t WHERE tenant = ${tenant}` keeps `tenant` a bound value, never
// text. The backend's dialect writes the placeholders (`?` on SQLite, `$n` on
// PostgreSQL) when it runs the statement, so a repository names no parameter by
// position.

/**
 * A bound value. A list of texts binds as one value: a text[] on PostgreSQL, its JSON text
 * on SQLite (read back with json_each); only the dialect's list helpers take one.
 */
export type SqlValue = string | number | boolean | null | Buffer | readonly string[];

export interface Query {
  /** One more part than values: text before each value, and the text after the last. */
  readonly parts: readonly string[];
  readonly values: readonly SqlValue[];
}

function isQuery(value: unknown): value is Query {
  return typeof value === 'object' && value !== null && 'parts' in value && 'values' in value;
}

/** The tag: a Query interpolated into another is spliced in (a fragment), anything else bound. */
export function sql(strings: TemplateStringsArray, ...values: (SqlValue | Query)[]): Query {
  // Without a fragment the parts are the template's own strings: one array per place in
  // the code, the same at every call, so a dialect can keep the statement's text for it
  // (textOf) instead of joining and hashing a new string per statement on the turn's path.
  if (!values.some(isQuery)) return { parts: strings, values: values as SqlValue[] };
  const parts: string[] = [strings[0] ?? ''];
  const bound: SqlValue[] = [];
  values.forEach((value, index) => {
    const after = strings[index + 1] ?? '';
    if (isQuery(value)) {
      parts[parts.length - 1] += value.parts[0] ?? '';
      for (let i = 0; i < value.values.length; i++) {
        bound.push(value.values[i] as SqlValue);
        parts.push(value.parts[i + 1] ?? '');
      }
      parts[parts.length - 1] += after;
    } else {
      bound.push(value);
      parts.push(after);
    }
  });
  return { parts, values: bound };
}

/**
 * Text spliced in as it is: only for names fixed in the code (a table, a column list),
 * never for a value that came from a caller.
 */
export function raw(text: string): Query {
  return { parts: [text], values: [] };
}

/** Fragments joined by `separator` (conditions by ' AND ', columns by ', '). */
export function join(fragments: readonly Query[], separator: string): Query {
  const parts: string[] = [''];
  const values: SqlValue[] = [];
  fragments.forEach((fragment, index) => {
    const piece = index === 0 ? fragment : sql`${raw(separator)}${fragment}`;
    parts[parts.length - 1] += piece.parts[0] ?? '';
    piece.values.forEach((value, i) => {
      values.push(value);
      parts.push(piece.parts[i + 1] ?? '');
    });
  });
  return { parts, values };
}

/**
 * A Query from SQL text that a shared builder writes with a `bind` callback (the keyset
 * lists of ../rules/keyset.ts): each bound value becomes a value of the Query.
 */
export function fromBoundText<V extends SqlValue>(
  build: (bind: (value: V) => () => string) => string,
): Query {
  const values: SqlValue[] = [];
  // A marker no statement text contains: NUL never appears in keel's SQL.
  const text = build((value) => {
    values.push(value);
    const marker = `\u0000${values.length - 1}\u0000`;
    return () => marker;
  });
  const parts: string[] = [];
  const ordered: SqlValue[] = [];
  const pieces = text.split(/\u0000(\d+)\u0000/);
  for (let i = 0; i < pieces.length; i += 2) {
    parts.push(pieces[i] ?? '');
    if (i + 1 < pieces.length) ordered.push(values[Number(pieces[i + 1])] as SqlValue);
  }
  return { parts, values: ordered };
}

/**
 * A bound LIMIT, written as an expression: `LIMIT CAST(? AS INTEGER)`, never `LIMIT ?`.
 * SQLite's planner reads the value bound to a bare LIMIT parameter, so it marks the
 * statement expired at every new binding and compiles it again at its next run
 * (better-sqlite3 binds at every call): 5–100 µs a call on keel's schema, measured, where
 * the run itself takes about 1 µs. A LIMIT that is an expression keeps the compiled plan.
 * PostgreSQL takes either. The memory searches (sqlite/memory-search.ts) still bind a bare
 * LIMIT and are compiled again per call (not on a turn's path; the keyword search with
 * short words would be anyway, its bound LIKE patterns are read by the planner too);
 * test/store-sqlite-statements.test.ts holds every other statement to it.
 */
export function limitOf(value: number): Query {
  return sql`CAST(${value} AS INTEGER)`;
}

/**
 * `write(parts)` once per parts array that cannot change: a template's own strings (frozen
 * by the language, one array per place in the code) or a dialect's frozen cached parts. The
 * text is then found by the array's identity, so the driver's statement cache is keyed by
 * the same string object each time. Parts spliced from fragments are a new array per
 * statement: their text is written each time rather than filling the cache.
 */
export function textCache(write: (parts: readonly string[]) => string): (query: Query) => string {
  const texts = new WeakMap<readonly string[], string>();
  return (query) => {
    if (!Object.isFrozen(query.parts)) return write(query.parts);
    let text = texts.get(query.parts);
    if (text === undefined) {
      text = write(query.parts);
      texts.set(query.parts, text);
    }
    return text;
  };
}
