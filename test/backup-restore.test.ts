// `keel backup` while `keel serve` runs under load, `keel restore` into a fresh data dir,
// and a keel started on it: every run acknowledged before the backup started is there
// and finishes; the artifacts and memory's vectors came along (they live in keel.db).
// Real processes throughout. Also what backup and restore refuse: an existing file, a
// data dir a server owns, an existing database, a file that is not a keel database or is
// from a newer keel (nothing written either way).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { isKeelError } from '../src/errors.ts';
import type { ErrorCode } from '../src/errors.ts';
import { restoreSqlite } from '../src/store/sqlite/backup.ts';
import { migrateSqlite } from '../src/store/sqlite/index.ts';
import type { RoleProcess } from './helpers/keel-roles.ts';
import { RoleProcesses } from './helpers/keel-roles.ts';
import { sqliteMigratedBefore } from './helpers/sqlite-migrated.ts';
import type { JsonAnswer } from './helpers/json-request.ts';
import { requestJson } from './helpers/json-request.ts';
import { expectRunsSucceeded, startTurnLoad } from './helpers/turn-load.ts';
import { KEEL_CLI } from './helpers/keel-cli.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const TENANT = 'bk';
const SUBMITTERS = 6;
const ARTIFACTS = 8;
const ARTIFACT_BYTES = 512 * 1024;
const dirs: string[] = [];
const servers = new RoleProcesses();

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'keel-backup-'));
  dirs.push(dir);
  return dir;
}

/** `keel <args>` as a child process; its output read until the streams close. */
function keel(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('KEEL_')) env[key] = value;
  }
  const child = spawn(process.execPath, [...KEEL_CLI, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out, err })));
}

// Loose JSON for assertions: keel's /v1 API at `url`.
function call(url: string, method: string, path: string, body?: unknown): Promise<JsonAnswer> {
  return requestJson(url, method, `/v1${path}`, body);
}

async function stop(server: RoleProcess): Promise<void> {
  server.child.kill('SIGTERM');
  await server.exited;
  assert.equal(server.child.exitCode, 0, `serve exited ${server.child.exitCode}`);
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

async function expectCode(promise: Promise<unknown>, code: ErrorCode): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isKeelError(error, code), `expected ${code}, got ${String(error)}`);
    return true;
  });
}

function runIds(path: string): Set<string> {
  const db = new Database(path, { readonly: true });
  try {
    return new Set(
      (db.prepare('SELECT run_id AS id FROM runs').all() as { id: string }[]).map((row) => row.id),
    );
  } finally {
    db.close();
  }
}

function integrity(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return String(db.pragma('integrity_check', { simple: true }));
  } finally {
    db.close();
  }
}

describe('keel backup and keel restore (SQLite)', () => {
  after(async () => {
    servers.killAll();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('a backup under load holds every run acknowledged before it; restored, keel serves them', async () => {
    const root = tempDir();
    const config = join(root, 'keel.toml');
    // Short leases: the runs in flight at the backup are taken over soon after restore.
    writeFileSync(
      config,
      [
        '[workers]',
        'lease_ms = 2000',
        '[memory]',
        'embedder = "hash"',
        '[tenant_limits]',
        'requests_per_s = 100000',
        'request_burst = 100000',
      ].join('\n'),
    );
    const liveDb = join(root, 'live', 'keel.db');
    const backupFile = join(root, 'keel-backup.db');
    const source = await servers.start('all', `sqlite:${liveDb}`, { config });
    assert.ok(
      [200, 201].includes((await call(source.url, 'POST', '/tenants', { name: TENANT })).status),
    );
    const agent = await call(source.url, 'PUT', `/tenants/${TENANT}/agents/a`, {
      model: 'fixture/echo',
    });
    assert.ok([200, 201].includes(agent.status));
    // Artifacts and a memory fact: rows of keel.db (the fact's vector in a vec0 shard).
    const artifacts = new Map<string, string>();
    for (let index = 0; index < ARTIFACTS; index += 1) {
      const bytes = randomBytes(ARTIFACT_BYTES);
      const response = await fetch(`${source.url}/v1/tenants/${TENANT}/artifacts/blob-${index}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/octet-stream' },
        body: bytes,
      });
      assert.equal(response.status, 201);
      artifacts.set(`blob-${index}`, sha256(bytes));
    }
    const fact = await call(source.url, 'PUT', `/tenants/${TENANT}/memory/notes/f1`, {
      text: 'the lighthouse keeper feeds seventeen cats',
    });
    assert.equal(fact.status, 201);

    // A read transaction held open over the load keeps checkpoints from moving its
    // commits into keel.db: they stay in the WAL only, so a backup that copied the file
    // instead of reading through SQLite would miss every run below.
    const longReader = new Database(liveDb, { readonly: true });
    longReader.exec('BEGIN');
    longReader.prepare('SELECT count(*) FROM runs').get();

    // Load: each submitter keeps one turn in flight on its own scope.
    const load = startTurnLoad(source.url, { tenant: TENANT, agent: 'a', submitters: SUBMITTERS });
    const acked = load.acked;
    await load.reach(100);
    // Every run in this list was acknowledged, so committed, before the backup began.
    const ackedBefore = acked.map((entry) => entry.runId);
    const backupStarted = Date.now();
    const backup = await keel(['backup', backupFile, '--store-url', `sqlite:${liveDb}`]);
    const backupEnded = Date.now();
    const ackedDuring = acked.length - ackedBefore.length;
    longReader.exec('COMMIT');
    longReader.close();
    // A while more of load after it: runs the backup cannot hold.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await load.stop();
    assert.equal(backup.code, 0, `backup failed: ${backup.err}`);
    assert.match(
      backup.out,
      /^backup written: .*keel-backup\.db \(.* MiB, schema version \d+, 1 tenants, \d+ runs; integrity ok\)/m,
    );
    assert.ok(ackedDuring > 0, 'the server took turns while the backup ran');
    const ackedAfter = acked.filter((entry) => entry.at > backupEnded).map((entry) => entry.runId);
    assert.ok(ackedAfter.length > 0, 'turns were acknowledged after the backup');

    const inBackup = runIds(backupFile);
    const missing = ackedBefore.filter((id) => !inBackup.has(id));
    assert.deepEqual(missing, [], 'every run acknowledged before the backup is in it');
    const later = ackedAfter.filter((id) => inBackup.has(id));
    assert.deepEqual(later, [], 'a run acknowledged after the backup ended is not in it');
    assert.equal(integrity(backupFile), 'ok');
    // One file, no WAL beside it.
    assert.deepEqual(
      readdirSync(root).filter((name) => name.startsWith('keel-backup')),
      ['keel-backup.db'],
    );

    // Refusals while the source server still runs: the file exists; the data dir is owned.
    const backupBytes = readFileSync(backupFile);
    const again = await keel(['backup', backupFile, '--store-url', `sqlite:${liveDb}`]);
    assert.equal(again.code, 1);
    assert.match(again.err, /BACKUP_TARGET_EXISTS: .*--force/);
    assert.ok(readFileSync(backupFile).equals(backupBytes), 'the existing backup is untouched');
    const busy = await keel(['restore', backupFile, '--store-url', `sqlite:${liveDb}`, '--force']);
    assert.equal(busy.code, 1);
    assert.match(busy.err, /DATA_DIR_LOCKED/);
    assert.equal(
      (await call(source.url, 'GET', `/tenants/${TENANT}/runs/${ackedAfter.at(-1)}`)).status,
      200,
      'the served database is still the live one',
    );
    await stop(source);

    // Restore into a fresh data dir and serve it.
    const restoredDb = join(root, 'restored', 'keel.db');
    const restore = await keel(['restore', backupFile, '--store-url', `sqlite:${restoredDb}`]);
    assert.equal(restore.code, 0, `restore failed: ${restore.err}`);
    assert.match(
      restore.out,
      /^restored .* → .*restored\/keel\.db .* 1 tenants, \d+ runs; integrity ok\)/m,
    );
    const restored = await servers.start('all', `sqlite:${restoredDb}`, { config });
    const present = await expectRunsSucceeded(restored.url, TENANT, ackedBefore);
    for (const [path, digest] of artifacts) {
      const response = await fetch(`${restored.url}/v1/tenants/${TENANT}/artifacts/${path}`);
      assert.equal(response.status, 200);
      assert.equal(sha256(new Uint8Array(await response.arrayBuffer())), digest, path);
    }
    const search = await call(
      restored.url,
      'GET',
      `/tenants/${TENANT}/memory/notes/search?q=${encodeURIComponent('lighthouse keeper cats')}&mode=semantic`,
    );
    assert.equal(search.status, 200);
    assert.equal(search.body.results[0]?.id, 'f1', 'the fact is found by its vector');
    // The restored keel takes new turns.
    const fresh = await call(restored.url, 'POST', `/tenants/${TENANT}/turns`, {
      agent: 'a',
      scope: 'after-restore',
      payload: { text: 'hello again' },
    });
    assert.equal(fresh.status, 202);
    const done = await call(
      restored.url,
      'GET',
      `/tenants/${TENANT}/runs/${fresh.body.run_id}/wait?timeout_ms=20000`,
    );
    assert.equal(done.body.run.status, 'succeeded');
    await stop(restored);
    assert.equal(integrity(restoredDb), 'ok');

    console.log(
      `backup under load: acked=${acked.length} acked_before=${ackedBefore.length} acked_during=${ackedDuring} acked_after=${ackedAfter.length} refused=${load.refused()} runs_in_backup=${inBackup.size} present_after_restore=${present} backup_ms=${/ in (\d+) ms$/m.exec(backup.out)?.[1]} backup_process_ms=${backupEnded - backupStarted} bytes=${backupBytes.length}`,
    );
  });

  it('restore refuses what is not a keel database, a newer schema, an existing database; --force keeps it aside', async () => {
    const root = tempDir();
    const target = join(root, 'data', 'keel.db');
    const nothingWritten = (): void =>
      assert.deepEqual(
        existsSync(join(root, 'data'))
          ? readdirSync(join(root, 'data')).filter((name) => name !== 'keel.lock')
          : [],
        [],
        'nothing but the lock file in the data dir',
      );

    const text = join(root, 'notes.txt');
    writeFileSync(text, 'not a database at all, but long enough to have a header');
    await expectCode(restoreSqlite(text, target, { force: true }), 'BACKUP_INVALID');
    nothingWritten();

    const other = join(root, 'other.db');
    const otherDb = new Database(other);
    otherDb.exec('CREATE TABLE things (id INTEGER PRIMARY KEY)');
    otherDb.close();
    await expectCode(restoreSqlite(other, target, { force: true }), 'BACKUP_INVALID');
    nothingWritten();

    // A keel database with a migration this keel does not know: written by a newer keel.
    const newer = join(root, 'newer.db');
    await migrateSqlite(newer, { check: false });
    const newerDb = new Database(newer);
    newerDb
      .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
      .run(999, 'from_the_future', Date.now());
    newerDb.close();
    await expectCode(restoreSqlite(newer, target, { force: true }), 'STORE_SCHEMA_NEWER');
    nothingWritten();

    // A page of the runs table overwritten: SQLite's integrity check catches it.
    const damaged = join(root, 'damaged.db');
    const damagedDb = sqliteMigratedBefore(damaged, 1000);
    const page = Number(damagedDb.pragma('page_size', { simple: true }));
    const rootPage = (
      damagedDb.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'runs'").get() as {
        rootpage: number;
      }
    ).rootpage;
    damagedDb.pragma('journal_mode = DELETE');
    damagedDb.close();
    const bytes = readFileSync(damaged);
    bytes.fill(0xa5, (rootPage - 1) * page, rootPage * page);
    writeFileSync(damaged, bytes);
    await expectCode(restoreSqlite(damaged, target, { force: true }), 'BACKUP_INVALID');
    nothingWritten();

    // An older keel's database restores; the next start migrates it.
    const older = join(root, 'older.db');
    sqliteMigratedBefore(older, 15).close();
    const first = await restoreSqlite(older, target, { force: false });
    assert.equal(first.schemaVersion, 14);
    assert.ok(first.latestVersion > 14);
    assert.equal(first.tenants, 1);
    assert.equal(first.setAside, null);

    // Over an existing database: refused without --force; with it the old one goes aside.
    const current = join(root, 'current.db');
    await migrateSqlite(current, { check: false });
    await expectCode(restoreSqlite(current, target, { force: false }), 'BACKUP_TARGET_EXISTS');
    const olderTenants = (path: string): number => {
      const db = new Database(path, { readonly: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM tenants').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    assert.equal(olderTenants(target), 1, 'refused: the database is unchanged');
    // The database being replaced has a commit only in its WAL, as after a crash: a
    // connection left open keeps the writer's close from checkpointing it.
    const holder = new Database(target);
    holder.pragma('journal_mode = WAL');
    holder.prepare('SELECT count(*) FROM tenants').get();
    const writer = new Database(target);
    writer.pragma('wal_autocheckpoint = 0');
    const now = Date.now();
    writer
      .prepare('INSERT INTO tenants (name, metadata, created_at, updated_at) VALUES (?, ?, ?, ?)')
      .run('wal-only', '{}', now, now);
    writer.close();
    assert.ok(existsSync(`${target}-wal`), 'the commit is in the WAL');
    const second = await restoreSqlite(current, target, {
      force: true,
      now: () => Date.UTC(2026, 0, 2, 3, 4, 5),
    });
    assert.equal(second.setAside, `${target}.before-restore-20260102T030405Z`);
    assert.equal(olderTenants(second.setAside), 2, 'the replaced database is kept whole, WAL too');
    assert.equal(olderTenants(target), 0, 'the restored database is the backup, no old WAL in it');
    assert.equal(integrity(target), 'ok');
    holder.close();
    assert.equal(existsSync(`${target}.restoring-${process.pid}`), false);
    // A second restore in the same second keeps both databases it replaced.
    const third = await restoreSqlite(older, target, {
      force: true,
      now: () => Date.UTC(2026, 0, 2, 3, 4, 5),
    });
    assert.equal(third.setAside, `${target}.before-restore-20260102T030405Z-2`);
    assert.equal(olderTenants(third.setAside), 0, 'the second one aside is the first restore');
    assert.equal(olderTenants(second.setAside), 2, 'the first one aside is untouched');
  });

  it("a restore run as root leaves the database to the data dir's owner (the service user)", async (t) => {
    if (process.getuid?.() !== 0) {
      t.skip('needs root: only root can give files away');
      return;
    }
    const root = tempDir();
    const dataDir = join(root, 'data');
    mkdirSync(dataDir);
    const nobody = 65534;
    chownSync(dataDir, nobody, nobody);
    const source = join(root, 'current.db');
    await migrateSqlite(source, { check: false });
    await restoreSqlite(source, join(dataDir, 'keel.db'), { force: false });
    for (const name of ['keel.db', 'keel.lock']) {
      const { uid, gid } = statSync(join(dataDir, name));
      assert.deepEqual([uid, gid], [nobody, nobody], `${name} belongs to the data dir's owner`);
    }
  });
});
