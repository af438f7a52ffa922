// PostgreSQL for tests: the server URL (KEEL_TEST_POSTGRES_URL, else the machine's
// local cluster), a reachability probe, and throwaway schemas — one per store the
// tests open, dropped afterwards, so test files never see each other's data.

import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const POSTGRES_URL =
  process.env.KEEL_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** null when a server answers; otherwise why not (the tests skip loudly with it). */
export async function postgresUnavailable(url: string = POSTGRES_URL): Promise<string | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
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

/** The URL with ?schema= set, as keel's config takes it. */
export function urlWithSchema(schema: string, url: string = POSTGRES_URL): string {
  const parsed = new URL(url);
  parsed.searchParams.set('schema', schema);
  return parsed.toString();
}
