// `npm run bench -- store-port`: what the shared repositories' generator driver
// (src/store/sqlite/steps.ts) adds per statement on SQLite, against the same statement
// prepared and run directly on the same connection (how the per-backend code runs it).
// Two cases:
//   read  — the webhook lookup by (tenant, name) outside a write (the read window),
//           the row mapped by toWebhookRecord in both;
//   write — requireTenant's SELECT inside an open write, as the enqueue and the
//           finalization run it (`within`), BATCH statements per write so the
//           transaction itself is spread thin.
// Rounds alternate direct and port; the median round is reported, as µs per statement.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { inertFailpoints } from '../src/failpoints.ts';
import { getWebhook } from '../src/store/repositories/webhooks.ts';
import { requireTenant } from '../src/store/repositories/guards.ts';
import { toWebhookRecord } from '../src/store/rules/webhooks.ts';
import type { WebhookRow } from '../src/store/rules/webhooks.ts';
import { openConnection } from '../src/store/sqlite/connection.ts';
import { StoreContext } from '../src/store/sqlite/context.ts';
import { applyMigrations, loadMigrations } from '../src/store/sqlite/migrations.ts';
import { read, within } from '../src/store/sqlite/steps.ts';
import { formatTable, median, writeResult } from './support.ts';

const N = 100_000;
const ROUNDS = 7;
const BATCH = 1_000;

function timed(work: () => void): number {
  const start = process.hrtime.bigint();
  work();
  return (Number(process.hrtime.bigint() - start) / 1_000 / N) as number;
}

export async function runStorePortBench(): Promise<void> {
  const dir = mkdtempSync(join(os.tmpdir(), 'keel-bench-store-port-'));
  try {
    const path = join(dir, 'keel.db');
    const db = openConnection({ path, durability: 'process' });
    applyMigrations(db, loadMigrations(), path, Date.now);
    const ctx = new StoreContext(db, Date.now, inertFailpoints);
    ctx.write(() => {
      ctx
        .sql("INSERT INTO tenants (name, metadata, created_at, updated_at) VALUES (?, '{}', ?, ?)")
        .run('acme', 1, 1);
      ctx
        .sql(
          'INSERT INTO tenant_webhooks (tenant, name, url, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
        )
        .run('acme', 'hook', 'https://a.example', 's', 1, 1);
    });

    const webhookText = 'SELECT * FROM tenant_webhooks WHERE tenant = ? AND name = ?';
    const tenantText = 'SELECT * FROM tenants WHERE name = ?';
    const cases = {
      read: {
        direct: () => {
          for (let i = 0; i < N; i++) {
            const row = ctx.sql(webhookText).get('acme', 'hook') as WebhookRow | undefined;
            if (!row || !toWebhookRecord(row)) throw new Error('missing');
          }
        },
        port: () => {
          for (let i = 0; i < N; i++) {
            if (!read(ctx, (tx) => getWebhook(tx, 'acme', 'hook'))) throw new Error('missing');
          }
        },
      },
      write: {
        direct: () => {
          for (let i = 0; i < N; i += BATCH) {
            ctx.write(() => {
              for (let j = 0; j < BATCH; j++) {
                if (!ctx.sql(tenantText).get('acme')) throw new Error('missing');
              }
            });
          }
        },
        port: () => {
          for (let i = 0; i < N; i += BATCH) {
            ctx.write((changes) => {
              const now = ctx.now();
              for (let j = 0; j < BATCH; j++) {
                within(ctx, (tx) => requireTenant(tx, 'acme'), { now, changes });
              }
            });
          }
        },
      },
    };

    const rows: (string | number)[][] = [];
    const result: Record<string, { direct_us: number; port_us: number; added_us: number }> = {};
    for (const [name, { direct, port }] of Object.entries(cases)) {
      direct();
      port();
      const directs: number[] = [];
      const ports: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        directs.push(timed(direct));
        ports.push(timed(port));
      }
      const d = median(directs);
      const p = median(ports);
      result[name] = { direct_us: d, port_us: p, added_us: p - d };
      rows.push([name, d.toFixed(2), p.toFixed(2), (p - d).toFixed(2)]);
    }
    ctx.reads.close();
    db.close();
    console.log(
      `store-port: ${N} statements per round, median of ${ROUNDS} rounds (µs per statement)`,
    );
    console.log(formatTable(['case', 'direct', 'port', 'added'], rows));
    console.log(`wrote ${writeResult('store-port', { n: N, rounds: ROUNDS, ...result })}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
