// What every repository of the PostgreSQL store shares: the pool, the schema, the
// clock, fault points and the one way to write — BEGIN … COMMIT on one
// pooled client, change notifications sent after the commit: to this process's
// listeners at once and to other processes with pg_notify, batched (see publish).

import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import { KeelError } from '../../errors.ts';
import type { Failpoints } from '../../failpoints.ts';
import { ChangeHub } from '../rules/change-hub.ts';
import { isChangedResource, resourceChange } from '../rules/resource-changes.ts';
import type { StoreChange } from '../store.ts';
import { STORE_RETRY_AFTER_S, storeFault, toStoreError } from '../store-errors.ts';
import { WriteHealth } from '../write-health.ts';

export type SqlParam = string | number | boolean | null | Buffer | readonly unknown[];

/** One statement runner: a transaction's client or the pool (single-statement reads). */
export interface Sql {
  rows<T>(text: string, params?: readonly SqlParam[]): Promise<T[]>;
  one<T>(text: string, params?: readonly SqlParam[]): Promise<T | undefined>;
  count(text: string, params?: readonly SqlParam[]): Promise<number>;
}

/** A write transaction: statements on one client, its clock reading, its changes. */
export interface Tx extends Sql {
  /** Milliseconds: the injected test clock, or the database's now() for this transaction. */
  readonly now: number;
  readonly changes: StoreChange[];
}

/**
 * Names for the statements keel sends with parameters, so each connection parses and
 * plans one only once (a named prepared statement) instead of on every call. Bounded:
 * statement texts are fixed in the code, but a text built from values would otherwise
 * grow every connection's set of prepared statements without end.
 */
class StatementNames {
  private readonly names = new Map<string, string>();

  constructor(private readonly limit = 1000) {}

  /** The text's name, or undefined (past the limit: sent unnamed, planned each time). */
  of(text: string): string | undefined {
    let name = this.names.get(text);
    if (name === undefined && this.names.size < this.limit) {
      name = `keel_${this.names.size}`;
      this.names.set(text, name);
    }
    return name;
  }
}

function sqlOn(runner: pg.Pool | pg.PoolClient, names: StatementNames): Sql {
  // A lost connection or a full disk reaches the caller as STORE_UNAVAILABLE.
  const run = (text: string, params?: readonly SqlParam[]) => {
    // Without parameters pg sends a simple query (several statements may share one).
    const name = params ? names.of(text) : undefined;
    const query: pg.QueryConfig = name
      ? { name, text, values: params as unknown[] }
      : { text, ...(params && { values: params as unknown[] }) };
    return runner.query(query).catch((error: unknown) => {
      throw toStoreError(error);
    });
  };
  return {
    async rows<T>(text: string, params?: readonly SqlParam[]): Promise<T[]> {
      return (await run(text, params)).rows as T[];
    },
    async one<T>(text: string, params?: readonly SqlParam[]): Promise<T | undefined> {
      return (await run(text, params)).rows[0] as T | undefined;
    },
    async count(text: string, params?: readonly SqlParam[]): Promise<number> {
      return (await run(text, params)).rowCount ?? 0;
    },
  };
}

/** The database clock in milliseconds; the transaction's start time inside a transaction. */
export const DB_NOW_MS = 'floor(extract(epoch from now()) * 1000)::bigint';

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '23505';
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * The notification payload: small, so it stays far below NOTIFY's 8000-byte limit.
 * `[origin, kind, tenant, run_id, extra]`; a resource change sends its name in the run
 * id's place and the kind of resource as the extra.
 */
function encodeChange(origin: string, change: StoreChange): string {
  if (change.kind === 'resource.changed') {
    return JSON.stringify([origin, change.kind, change.tenant, change.name, change.resource]);
  }
  const extra =
    change.kind === 'run.event'
      ? change.seq
      : change.kind === 'run.terminal'
        ? change.status
        : change.kind === 'delivery.due'
          ? (change.destination ?? null)
          : null;
  return JSON.stringify([origin, change.kind, change.tenant, change.run_id, extra]);
}

export function decodeChange(payload: string): { origin: string; change: StoreChange } | null {
  try {
    const [origin, kind, tenant, runId, extra] = JSON.parse(payload) as unknown[];
    if (typeof origin !== 'string' || typeof tenant !== 'string' || typeof runId !== 'string') {
      return null;
    }
    if (kind === 'run.queued') return { origin, change: { kind, tenant, run_id: runId } };
    if (kind === 'delivery.due') {
      // Without a destination (an older process sent it) every delivery worker wakes.
      const destination = typeof extra === 'string' ? { destination: extra } : {};
      return { origin, change: { kind, tenant, run_id: runId, ...destination } };
    }
    if (kind === 'run.event' && typeof extra === 'number') {
      return { origin, change: { kind, tenant, run_id: runId, seq: extra } };
    }
    if (kind === 'run.terminal' && typeof extra === 'string') {
      return {
        origin,
        change: { kind, tenant, run_id: runId, status: extra as never },
      };
    }
    if (kind === 'resource.changed' && isChangedResource(extra)) {
      return { origin, change: resourceChange(tenant, extra, runId) };
    }
  } catch {
    // A foreign or malformed payload on our channel is ignored.
  }
  return null;
}

export class PgContext {
  /** This process's listeners; they hear only committed changes. */
  readonly hub = new ChangeHub();
  readonly read: Sql;
  /** Whether the last write hit a full disk (readiness). */
  readonly health = new WriteHealth();
  private readonly statementNames = new StatementNames();

  constructor(
    readonly pool: pg.Pool,
    readonly schema: string,
    /** The LISTEN/NOTIFY channel of this schema. */
    readonly channel: string,
    /** Identifies this store instance: its own notifications come back and are skipped. */
    readonly origin: string,
    private readonly clock: (() => number) | null,
    readonly failpoints: Failpoints,
  ) {
    this.read = sqlOn(pool, this.statementNames);
  }

  /** True when tests replaced the database's clock (every reading must come from it). */
  get injectedClock(): boolean {
    return this.clock !== null;
  }

  /** Store-clock milliseconds for a read outside a transaction (due schedules). */
  async now(): Promise<number> {
    if (this.clock) return this.clock();
    const row = await this.read.one<{ now: number }>(`SELECT ${DB_NOW_MS} AS now`);
    return row?.now ?? Date.now();
  }

  /**
   * Runs `body` as one transaction on one pooled client. A thrown error rolls back and
   * notifies nobody; a commit that fails is reported as the error it is.
   */
  async write<T>(body: (tx: Tx) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw new KeelError('STORE_UNAVAILABLE', `PostgreSQL: ${(error as Error).message}`, {
        fault: 'connection',
        retry_after_s: STORE_RETRY_AFTER_S,
      });
    }
    let broken: Error | undefined;
    try {
      const changes: StoreChange[] = [];
      let now: number;
      if (this.clock) {
        await client.query('BEGIN');
        now = this.clock();
      } else {
        // One round trip: the transaction and its clock reading.
        const results = (await client.query(
          `BEGIN; SELECT ${DB_NOW_MS} AS now`,
        )) as unknown as pg.QueryResult[];
        now = Number(results[1]?.rows[0]?.now);
      }
      const tx: Tx = { ...sqlOn(client, this.statementNames), now, changes };
      let result: T;
      try {
        result = await body(tx);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: Error) => {
          broken = rollbackError;
        });
        throw error;
      }
      this.health.record();
      this.notify(changes);
      this.publish(changes);
      return result;
    } catch (error) {
      if (isConnectionError(error)) broken ??= error as Error;
      this.health.record(error);
      throw toStoreError(error);
    } finally {
      // A client whose connection failed is destroyed, not handed to the next caller.
      client.release(broken);
    }
  }

  private outbox: string[] = [];
  private publishing = false;

  /**
   * Sends committed changes to other processes, after the commit and outside the
   * transaction: a NOTIFY inside a transaction takes PostgreSQL's global notify lock
   * through the commit's WAL flush, which serializes every committing writer (measured:
   * 8 claimers fell to ~100 claims/s). Batched, one statement in flight at a time, in
   * order. Best effort: a crash between commit and send loses the hint, which the
   * worker's fallback poll and SSE's replay from its last seq cover (listener.ts).
   */
  private publish(changes: readonly StoreChange[]): void {
    if (changes.length === 0) return;
    for (const change of changes) this.outbox.push(encodeChange(this.origin, change));
    if (this.publishing) return;
    this.publishing = true;
    void this.flush();
  }

  private async flush(): Promise<void> {
    while (this.outbox.length > 0) {
      const batch = this.outbox.splice(0, 500);
      await this.pool
        .query('SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload', [
          this.channel,
          batch,
        ])
        .catch(() => undefined);
    }
    this.publishing = false;
  }

  /** Resolves when every change committed so far has been sent (close waits for it). */
  async drain(): Promise<void> {
    while (this.publishing) await delay(1);
  }

  notify(changes: readonly StoreChange[]): void {
    this.hub.notify(changes);
  }
}

function isConnectionError(error: unknown): boolean {
  // Class 08 (connection exception), 57P01 (admin shutdown) or a socket error.
  return storeFault(error) === 'connection';
}
