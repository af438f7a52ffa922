// The database keel's URL names may not exist yet (a fresh server, a new environment):
// `keel migrate` creates it — connected to the server's maintenance database with the
// same credentials — and when that is not allowed, says the exact command that does it.
// `keel serve` never creates databases; it names the missing one and the way out.

import pg from 'pg';
import { KeelError } from '../../errors.ts';
import { quoteIdent } from './context.ts';
import { shellWord } from '../../shell-word.ts';

/** PostgreSQL's invalid_catalog_name: the database in the URL does not exist. */
export function isMissingDatabase(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '3D000';
}

/** The database a libpq URL names: its path, else the user name (libpq's default). */
export function databaseOf(url: string): string {
  const parsed = new URL(url);
  const path = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  return path || decodeURIComponent(parsed.username) || 'postgres';
}

/** The command an operator runs to create the database (never with the password). */
export function createDatabaseCommand(url: string): string {
  const parsed = new URL(url);
  const parts = [
    'createdb',
    `--host=${shellWord(decodeURIComponent(parsed.hostname) || 'localhost')}`,
  ];
  parts.push(`--port=${parsed.port || '5432'}`);
  if (parsed.username) parts.push(`--username=${shellWord(decodeURIComponent(parsed.username))}`);
  parts.push(shellWord(databaseOf(url)));
  return parts.join(' ');
}

/** The message keel serve (and anything opening the store) gives for a missing database. */
export function missingDatabaseHint(url: string): string {
  return `database "${databaseOf(url)}" does not exist: run keel migrate with the same --store-url (it creates the database), or create it yourself: ${createDatabaseCommand(url)}`;
}

async function canConnect(config: pg.ClientConfig): Promise<'yes' | 'missing'> {
  const client = new pg.Client(config);
  try {
    await client.connect();
    return 'yes';
  } catch (error) {
    if (isMissingDatabase(error)) return 'missing';
    throw new KeelError('STORE_UNAVAILABLE', `PostgreSQL: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Creates the URL's database when it is missing. `url` is what pg is given (keel's own
 * ?schema= already removed). Throws STORE_UNAVAILABLE with the exact command when the
 * database is missing and cannot be created here.
 */
export async function ensureDatabase(
  url: string,
  config: Omit<pg.ClientConfig, 'connectionString'> = {},
): Promise<{ database: string; created: boolean }> {
  const database = databaseOf(url);
  if ((await canConnect({ ...config, connectionString: url })) === 'yes') {
    return { database, created: false };
  }
  const maintenance = new URL(url);
  maintenance.pathname = database === 'postgres' ? '/template1' : '/postgres';
  const client = new pg.Client({ ...config, connectionString: maintenance.toString() });
  try {
    await client.connect();
    await client.query(`CREATE DATABASE ${quoteIdent(database)}`);
    return { database, created: true };
  } catch (error) {
    // 42P04: another process created it meanwhile.
    if ((error as { code?: unknown }).code === '42P04') return { database, created: false };
    throw new KeelError(
      'STORE_UNAVAILABLE',
      `database "${database}" does not exist and keel could not create it (${(error as Error).message}); create it with: ${createDatabaseCommand(url)}`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
