// PostgreSQL for tests: the server URL (KEEL_TEST_POSTGRES_URL, else the machine's
// local cluster), a reachability probe, and throwaway schemas — one per store the
// tests open, dropped afterwards, so test files never see each other's data.

import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const POSTGRES_URL =
  process.env.KEEL_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * null when a server answers; otherwise why not (the tests skip loudly with it). A server
 * that is down refuses at once; one that is up but slow under the suite's load has 30 s
 * to answer: a 2 s bound once made a file skip on CI with PostgreSQL running.
 */
export async function postgresUnavailable(url: string = POSTGRES_URL): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 30_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Prints the loud skip line once per file; returns the skip reason for node:test. */
export async function skipUnlessPostgres(file: string): Promise<string | false> {
  const reason = await postgresUnavailable();
  if (reason === null) return false;
  const message = `SKIPPED ${file}: no PostgreSQL at ${POSTGRES_URL} (${reason}) — CI always has one (.ci/run starts it)`;
  process.stderr.write(`\n!!! ${message}\n\n`);
  return message;
}

/** A fresh schema name, unique across concurrently running test files. */
export function freshSchemaName(prefix = 'keel_test'): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export async function dropSchemas(
  names: readonly string[],
  url: string = POSTGRES_URL,
): Promise<void> {
  if (names.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // A few schemas per statement: one commit per schema is slow, and all of them in one
    // transaction runs out of lock slots (max_locks_per_transaction).
    for (let index = 0; index < names.length; index += 8) {
      const chunk = names.slice(index, index + 8).map((name) => `"${name}"`);
      await client.query(`DROP SCHEMA IF EXISTS ${chunk.join(', ')} CASCADE`);
    }
  } finally {
    await client.end();
  }
}

/**
 * Empties a migrated schema so it is indistinguishable from a freshly migrated one:
 * every table but schema_migrations emptied (children before the tables they
 * reference, in one transaction), every sequence restarted. DELETE, not TRUNCATE:
 * on tables this small TRUNCATE's new files cost ten times more.
 */
export async function wipeSchema(client: pg.Client, schema: string): Promise<void> {
  const tables = (
    await client.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND tablename <> 'schema_migrations'",
      [schema],
    )
  ).rows.map((row) => row.name);
  const references = (
    await client.query<{ child: string; parent: string }>(
      `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
         FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE c.contype = 'f' AND n.nspname = $1`,
      [schema],
    )
  ).rows.map(({ child, parent }) => ({ child: bareName(child), parent: bareName(parent) }));
  // Children first: repeatedly take a table no remaining table references.
  const order: string[] = [];
  const left = new Set(tables);
  while (left.size > 0) {
    const leaf = [...left].find(
      (table) =>
        !references.some(
          (ref) => ref.parent === table && ref.child !== table && left.has(ref.child),
        ),
    );
    if (leaf === undefined) throw new Error(`wipeSchema ${schema}: foreign-key cycle`);
    order.push(leaf);
    left.delete(leaf);
  }
  const sequences = (
    await client.query<{ name: string }>(
      'SELECT sequencename AS name FROM pg_sequences WHERE schemaname = $1',
      [schema],
    )
  ).rows.map((row) => row.name);
  await client.query('BEGIN');
  try {
    for (const table of order) await client.query(`DELETE FROM "${schema}"."${table}"`);
    for (const sequence of sequences) {
      await client.query(`ALTER SEQUENCE "${schema}"."${sequence}" RESTART`);
    }
    const rows = await client.query<{ name: string }>(
      order
        .map((table) => `SELECT '${table}' AS name FROM "${schema}"."${table}"`)
        .join(' UNION ALL '),
    );
    if (rows.rowCount !== 0)
      throw new Error(`wipeSchema ${schema}: ${rows.rows[0]?.name} not empty`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** regclass text is schema-qualified (and maybe quoted) when off the search path. */
function bareName(regclass: string): string {
  return regclass.split('.').at(-1)!.replace(/^"|"$/g, '');
}

/** The URL with ?schema= set, as keel's config takes it. */
export function urlWithSchema(schema: string, url: string = POSTGRES_URL): string {
  const parsed = new URL(url);
  parsed.searchParams.set('schema', schema);
  return parsed.toString();
}
