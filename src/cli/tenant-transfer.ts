// `keel export TENANT --out FILE` and `keel import FILE`: move one tenant between stores,
// typically from a SQLite data dir to PostgreSQL (docs/operations.md, "Moving a
// tenant"). They open the store themselves, like `keel migrate`; the file format and its
// checks are src/store/rules/tenant-export.ts.
//
// The export file holds the tenant's secret values and webhook signing secrets: it is
// written 0600, under a temporary name linked into place only once complete (never over a
// file that is there).

import {
  closeSync,
  createReadStream,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
} from 'node:fs';
import { rmSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ExportHeader, ExportRow } from '../store/rules/tenant-export.ts';
import { loadServerConfig, parseCommand, SERVER_OPTIONS } from './args.ts';
import { NAME_PATTERN } from '../ids.ts';
import { UsageError } from './errors.ts';
import { publishNewFile } from '../publish-new-file.ts';

export const EXPORT_USAGE = `keel export TENANT --out FILE [--include-active] [--config FILE] [--data-dir DIR] [--store-url URL]`;
export const IMPORT_USAGE = `keel import FILE [--config FILE] [--data-dir DIR] [--store-url URL]`;

export const EXPORT_HELP = `Writes every row of one tenant (agents, threads, runs with their journal, memory facts
with their vectors, artifacts, schedules, secrets, webhooks, MCP servers, WebAssembly
tools, tokens, deliveries, usage) to FILE as JSON Lines, read in one consistent snapshot.
FILE holds the tenant's secret values: it is created with mode 0600; keep it so.
Refuses while the tenant has runs queued, running or waiting for approval; with
--include-active they are exported as they are, to be resumed on the target (only when
no keel process uses the source store any more; on SQLite it takes the data-dir lock,
on PostgreSQL it refuses while a run is leased or the scheduler heartbeat is recent).
See docs/operations.md, "Moving a tenant".`;

export const IMPORT_HELP = `Checks every line of FILE (written by keel export), then writes the tenant into the
store in one transaction: nothing is written when a line is invalid, when the tenant
already exists there, or when the store refuses a row. Creates the PostgreSQL database
and applies migrations first, as keel migrate does.`;

function keelVersion(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  return String((JSON.parse(text) as { version?: unknown }).version ?? 'unknown');
}

function isPostgres(url: string): boolean {
  return url.startsWith('postgres://') || url.startsWith('postgresql://');
}

export async function exportCommand(
  argv: string[],
  print: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  const { values, positionals } = parseCommand(argv, {
    ...SERVER_OPTIONS,
    out: { type: 'string' },
    'include-active': { type: 'boolean' },
  });
  const [tenant, ...rest] = positionals;
  if (tenant === undefined) throw new UsageError('export: expected a TENANT');
  if (!NAME_PATTERN.test(tenant))
    throw new UsageError(`export: TENANT must match ${NAME_PATTERN.source}`);
  if (rest.length > 0) throw new UsageError(`export takes one TENANT: ${rest[0]}`);
  const out = values.out;
  if (out === undefined || out === '') throw new UsageError('export: --out FILE is required');
  if (existsSync(out)) throw outExists(out);
  const config = await loadServerConfig(values);
  // Loaded here, not at the top: every `keel` command imports this file's usage line.
  const rules = await import('../store/rules/tenant-export.ts');
  const { url } = config.store;
  const options = { tenant, includeActive: values['include-active'] === true };
  const partial = `${out}.partial-${process.pid}`;
  const fd = openSync(partial, 'wx', 0o600);
  const counts = new Map<string, number>();
  try {
    const header: ExportHeader = {
      format: rules.EXPORT_FORMAT,
      version: rules.EXPORT_VERSION,
      tenant,
      exported_at: new Date().toISOString(),
      keel_version: keelVersion(),
      source: isPostgres(url) ? 'postgres' : 'sqlite',
      include_active: options.includeActive,
    };
    writeSync(fd, `${JSON.stringify(header)}\n`);
    const emit = (table: string, row: ExportRow) => {
      writeSync(fd, `${rules.encodeRowLine(table, row)}\n`);
      counts.set(table, (counts.get(table) ?? 0) + 1);
    };
    let rows: number;
    if (isPostgres(url)) {
      const { exportPostgresTenant } = await import('../store/postgres/index.ts');
      rows = await exportPostgresTenant(url, options, emit);
    } else {
      const { exportSqliteTenant } = await import('../store/sqlite/tenant-export.ts');
      rows = exportSqliteTenant(url.slice('sqlite:'.length), options, emit);
    }
    writeSync(fd, `${rules.encodeEndLine(rows)}\n`);
    fsyncSync(fd);
    closeSync(fd);
    publishExport(partial, out);
    print(`exported tenant ${tenant}: ${rows} rows (${summary(counts)}) to ${out}`);
    print(
      `${out} holds the tenant's secret values (mode 0600): keep it private, delete it once imported`,
    );
    return 0;
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // already closed: publishing failed
    }
    rmSync(partial, { force: true });
    throw error;
  }
}

function outExists(out: string): UsageError {
  return new UsageError(`--out: ${out} exists; keel export never overwrites`);
}

/**
 * The complete export file under its name `out`; refused as at the start when a file
 * appeared there meanwhile (it is not replaced).
 */
export function publishExport(partial: string, out: string): void {
  publishNewFile(partial, out, () => outExists(out));
}

function summary(counts: ReadonlyMap<string, number>): string {
  return [...counts].map(([table, count]) => `${table} ${count}`).join(', ');
}

/** Every line of the file, without newlines, streamed (no one string of the whole file). */
async function readLines(path: string): Promise<string[]> {
  const lines: string[] = [];
  const input = createReadStream(path, { encoding: 'utf8' });
  for await (const line of createInterface({ input, crlfDelay: Infinity })) lines.push(line);
  return lines;
}

export async function importCommand(
  argv: string[],
  print: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<number> {
  const { values, positionals } = parseCommand(argv, { ...SERVER_OPTIONS });
  const [file, ...rest] = positionals;
  if (file === undefined) throw new UsageError('import: expected a FILE (written by keel export)');
  if (rest.length > 0) throw new UsageError(`import takes one FILE: ${rest[0]}`);
  if (!existsSync(file)) throw new UsageError(`import: ${file} does not exist`);
  const config = await loadServerConfig(values);
  const { decodeDump } = await import('../store/rules/tenant-export.ts');
  // Every line is checked before the store is even opened.
  const dump = decodeDump(await readLines(file));
  if (isPostgres(config.store.url)) {
    const { ensurePostgresDatabase } = await import('../store/postgres/index.ts');
    const { database, created } = await ensurePostgresDatabase(config.store.url);
    if (created) print(`created database ${database}`);
  }
  const { inertFailpoints } = await import('../failpoints.ts');
  const { openStore } = await import('../main.ts');
  const { store } = await openStore(config, inertFailpoints);
  try {
    const rows = await store.importTenant(dump);
    const counts = new Map<string, number>();
    for (const { table } of dump.rows) counts.set(table, (counts.get(table) ?? 0) + 1);
    print(
      `imported tenant ${dump.header.tenant}: ${rows} rows (${summary(counts)}) into ${store.description}`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
