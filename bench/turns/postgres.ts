// PostgreSQL for the turn benchmark: a fresh schema per trial (KEEL_TEST_POSTGRES_URL,
// else the local cluster) and the pids of the PostgreSQL backends serving keel's own
// connections — found by matching the client ports of pg_stat_activity to the TCP
// sockets keel's processes hold (/proc/<pid>/fd → /proc/net/tcp), so backends of other
// clients of the same cluster are never counted.

import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import pg from 'pg';

const SERVER_URL = process.env.KEEL_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export function postgresSchemaUrl(): { url: string; schema: string } {
  const schema = `keel_bench_turns_${process.pid}_${randomBytes(3).toString('hex')}`;
  const url = new URL(SERVER_URL);
  url.searchParams.set('schema', schema);
  return { url: url.toString(), schema };
}

export async function dropPostgresSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match?.[1]) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

/** Local TCP ports of the given processes' sockets (IPv4 and IPv6). */
function localPorts(pids: readonly number[]): Set<number> {
  const inodes = new Set(pids.flatMap((pid) => [...socketInodes(pid)]));
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1];
      const inode = fields[9];
      if (local && inode && inodes.has(inode)) ports.add(parseInt(local.split(':')[1] ?? '0', 16));
    }
  }
  return ports;
}

/** The backends serving connections of `clientPids`. */
export async function postgresBackends(clientPids: readonly number[]): Promise<number[]> {
  const ports = localPorts(clientPids);
  const client = new pg.Client({ connectionString: SERVER_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number; client_port: number }>(
      'SELECT pid, client_port FROM pg_stat_activity WHERE client_port IS NOT NULL',
    );
    return rows.filter((row) => ports.has(row.client_port)).map((row) => row.pid);
  } finally {
    await client.end();
  }
}
