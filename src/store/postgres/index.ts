// The PostgreSQL backend's entry point: open (and migrate) a store on one schema of a
// database that many keel processes share.

import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { KeelError } from '../../errors.ts';
import type { Failpoints } from '../../failpoints.ts';
import { inertFailpoints } from '../../failpoints.ts';
import { PgContext, quoteIdent } from './context.ts';
import { postgresAddress } from '../../postgres-address.ts';
import { ensureDatabase, isMissingDatabase, missingDatabaseHint } from './create-database.ts';
import { ChangeListenerConnection } from './listener.ts';
import { PgLiveChannel } from './live-channel.ts';
import { CONNECT_TIMEOUT_MS, guardPoolConnections } from './pool-health.ts';
import type { PostgresMigrationReport } from './migrations.ts';
import { applyMigrations, loadMigrations, migrationReport } from './migrations.ts';
import type { PostgresFeatures } from './postgres-store.ts';
import { PostgresStore } from './postgres-store.ts';
import type { EmitRow, TenantExportOptions } from '../rules/tenant-export.ts';
import { readPostgresTenant } from './tenant-export.ts';

export { CLAIM_SQL } from './runs.ts';
export type { PostgresStore, PostgresFeatures } from './postgres-store.ts';
export type { PostgresMigrationReport } from './migrations.ts';

const DEFAULT_SCHEMA = 'keel';
const DEFAULT_POOL_SIZE = 10;
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,47}$/;

interface PostgresStoreOptions {
  /** postgres://user@host:port/db[?schema=NAME]; the password never reaches logs. */
  url: string;
  /** The schema holding keel's tables (default: the URL's ?schema=, else "keel"). */
  schema?: string;
  failpoints?: Failpoints;
  poolSize?: number;
  /**
   * Tests only: a millisecond clock replacing the database's now() (the conformance
   * suite moves time without sleeping). Never set in a deployment: several processes
   * must agree on one clock, the database's.
   */
  now?: () => number;
  /** Called when the LISTEN connection drops or comes back. */
  onListenerState?: (connected: boolean, error?: Error) => void;
}

/** Splits keel's own ?schema= from the URL (pg would send it to the server). */
function parseUrl(
  url: string,
  schema: string | undefined,
): { url: string; schema: string; safe: string } {
  const safe = postgresAddress(url);
  if (safe === null) {
    throw new KeelError(
      'CONFIG_INVALID',
      'store.url: not a PostgreSQL URL keel can read (postgres://user:password@host:port/database; percent-encode "/", "@", ":" in the password)',
    );
  }
  const parsed = new URL(url);
  const fromUrl = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  const chosen = schema ?? fromUrl ?? DEFAULT_SCHEMA;
  if (!SCHEMA_PATTERN.test(chosen)) {
    throw new KeelError(
      'CONFIG_INVALID',
      `store.url: schema "${chosen}" must match ${SCHEMA_PATTERN.source}`,
    );
  }
  return { url: parsed.toString(), schema: chosen, safe };
}

/** bigint (int8) as a JS number: keel's counters and millisecond times stay below 2^53. */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

function clientConfig(url: string, schema: string): pg.ClientConfig {
  return {
    connectionString: url,
    types,
    // Every connection: keel's schema first, durable commits, READ COMMITTED (the claim
    // and fencing statements are written for it).
    options: `-c search_path=${quoteIdent(schema)},public -c synchronous_commit=on -c default_transaction_isolation=read\\ committed`,
    application_name: 'keel',
    // Dead peers (a failover without a FIN) are noticed instead of hanging a query.
    keepAlive: true,
  };
}

async function withAdvisoryLock<T>(
  client: pg.ClientBase,
  key: string,
  body: () => Promise<T>,
): Promise<T> {
  await client.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
  try {
    return await body();
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
  }
}

async function detectFeatures(client: pg.ClientBase): Promise<PostgresFeatures> {
  // pg_trgm ships with PostgreSQL's contrib; creating it needs the privilege, so a
  // failure only means phrase search scans the namespace instead of using the index.
  // In public, not keel's schema (first on the search path): an extension created in
  // one keel schema would vanish with it, and other schemas would not see its opclass.
  // IF NOT EXISTS does not make two concurrent creators safe: a database-wide lock does.
  await withAdvisoryLock(client, 'keel-extensions', () =>
    client
      .query('CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public')
      .catch(() => client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm'))
      .catch(() => undefined),
  );
  const setting = async (name: string): Promise<string> =>
    String((await client.query(`SELECT current_setting('${name}') AS v`)).rows[0]?.v);
  const extensions = new Set(
    (await client.query<{ extname: string }>('SELECT extname FROM pg_extension')).rows.map(
      (row) => row.extname,
    ),
  );
  return {
    synchronous_commit: await setting('synchronous_commit'),
    transaction_isolation: await setting('transaction_isolation'),
    pgvector: extensions.has('vector'),
    pg_trgm: extensions.has('pg_trgm'),
    server_version: await setting('server_version'),
  };
}

function assertSettings(features: PostgresFeatures, where: string): void {
  const expected: [keyof PostgresFeatures, string][] = [
    ['synchronous_commit', 'on'],
    ['transaction_isolation', 'read committed'],
  ];
  for (const [name, value] of expected) {
    if (features[name] !== value) {
      throw new KeelError(
        'STORE_SETTINGS_INVALID',
        `PostgreSQL setting ${name} is ${String(features[name])}, keel needs ${value} (${where})`,
      );
    }
  }
}

/** Opens the pool, migrates the schema, asserts settings and starts listening. */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const { url, schema, safe } = parseUrl(options.url, options.schema);
  const config = clientConfig(url, schema);
  const pool = new pg.Pool({
    ...config,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  // A client's connection error (idle or checked out) must not crash the process.
  guardPoolConnections(pool);
  const migrations = loadMigrations();
  let listener: ChangeListenerConnection | null = null;
  try {
    let features: PostgresFeatures;
    const client = await pool.connect().catch((error: Error) => {
      const why = isMissingDatabase(error) ? missingDatabaseHint(url) : error.message;
      throw new KeelError('STORE_UNAVAILABLE', `PostgreSQL ${safe}: ${why}`);
    });
    try {
      await applyMigrations(client, schema, migrations);
      features = await detectFeatures(client);
      assertSettings(features, `${safe} schema ${schema}`);
      if (features.pg_trgm) {
        // Qualified: the extension may live in a schema that is not on the search path.
        const home = await client.query<{ schema: string }>(
          "SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'pg_trgm'",
        );
        // Under the schema's migration lock: two processes opening one schema at once
        // would otherwise race on the index name.
        await withAdvisoryLock(client, `keel-migrate:${schema}`, () =>
          client.query(
            `CREATE INDEX IF NOT EXISTS memory_facts_trigrams ON memory_facts USING gin (text ${home.rows[0]?.schema ?? 'public'}.gin_trgm_ops)`,
          ),
        );
      }
    } finally {
      client.release();
    }
    const ctx = new PgContext(
      pool,
      schema,
      `keel_changes_${schema}`,
      randomUUID(),
      options.now ?? null,
      options.failpoints ?? inertFailpoints,
    );
    const live = new PgLiveChannel(pool, `keel_live_${schema}`, ctx.origin);
    listener = new ChangeListenerConnection(config, ctx, options.onListenerState, [live]);
    await listener.start();
    const description = `postgres ${safe} schema=${schema} (synchronous_commit=on, vectors=${features.pgvector ? 'pgvector' : 'exact scan'}, phrases=${features.pg_trgm ? 'pg_trgm' : 'scan'})`;
    return new PostgresStore(ctx, listener, live, migrations, schema, features, description);
  } catch (error) {
    await listener?.close();
    await pool.end().catch(() => undefined);
    throw error;
  }
}

/** `keel migrate` on PostgreSQL, first: creates the URL's database when it is missing. */
export async function ensurePostgresDatabase(
  url: string,
): Promise<{ database: string; created: boolean }> {
  const parsed = parseUrl(url, undefined);
  const { connectionString: _unused, ...config } = clientConfig(parsed.url, parsed.schema);
  return ensureDatabase(parsed.url, config);
}

/** `keel migrate` on PostgreSQL: reports (check) or applies pending migrations. */
export async function migratePostgres(
  url: string,
  options: { check: boolean; schema?: string },
): Promise<PostgresMigrationReport> {
  const parsed = parseUrl(url, options.schema);
  const client = new pg.Client(clientConfig(parsed.url, parsed.schema));
  await client.connect().catch((error: Error) => {
    const why = isMissingDatabase(error) ? missingDatabaseHint(parsed.url) : error.message;
    throw new KeelError('STORE_UNAVAILABLE', `PostgreSQL ${parsed.safe}: ${why}`);
  });
  try {
    const migrations = loadMigrations();
    return options.check
      ? await migrationReport(client, parsed.schema, migrations)
      : await applyMigrations(client, parsed.schema, migrations);
  } finally {
    await client.end();
  }
}

/**
 * `keel export` from PostgreSQL: one tenant's rows, read in one snapshot on a client of
 * its own (the schema must be current: run keel migrate first).
 */
export async function exportPostgresTenant(
  url: string,
  options: TenantExportOptions,
  emit: EmitRow,
): Promise<number> {
  const parsed = parseUrl(url, undefined);
  const client = new pg.Client(clientConfig(parsed.url, parsed.schema));
  await client.connect().catch((error: Error) => {
    const why = isMissingDatabase(error) ? missingDatabaseHint(parsed.url) : error.message;
    throw new KeelError('STORE_UNAVAILABLE', `PostgreSQL ${parsed.safe}: ${why}`);
  });
  try {
    const report = await migrationReport(client, parsed.schema, loadMigrations());
    if (report.pending.length > 0) {
      throw new KeelError(
        'CONFIG_INVALID',
        `the PostgreSQL store ${parsed.safe} is at schema ${report.current}, this keel exports ${report.latest}: run keel migrate first`,
      );
    }
    return await readPostgresTenant(client, options, emit);
  } finally {
    await client.end();
  }
}
