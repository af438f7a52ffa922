// Drives a shared repository operation (../sql/steps.ts) on PostgreSQL: each step one
// awaited statement, on the pool for a read and on the transaction's client for a write.

import type { Op, Step } from '../sql/steps.ts';
import { Reads, Writes } from '../sql/steps.ts';
import type { PgContext, Sql, SqlParam, Tx } from './context.ts';
import { postgresDialect } from './dialect.ts';

const reads = new Reads(postgresDialect);

async function runStep(runner: Sql, step: Step): Promise<unknown> {
  if (step.kind === 'call') return step.work();
  const text = postgresDialect.text(step.query);
  const values = step.query.values as SqlParam[];
  if (step.kind === 'rows' || step.kind === 'each') return runner.rows(text, values);
  if (step.kind === 'one') return runner.one(text, values);
  return runner.count(text, values);
}

/** Runs every step of `op` on `runner`, one statement at a time. */
export async function drive<T>(runner: Sql, op: Op<T>): Promise<T> {
  let next = op.next();
  while (!next.done) {
    let result: unknown;
    try {
      result = await runStep(runner, next.value);
    } catch (error) {
      next = op.throw(error);
      continue;
    }
    next = op.next(result);
  }
  return next.value;
}

/** A read on the pool, outside a transaction. */
export function read<T>(ctx: PgContext, operation: (db: Reads) => Op<T>): Promise<T> {
  return drive(ctx.read, operation(reads));
}

/**
 * A write: one transaction, changes sent after its commit. `beforeCommit` runs inside it
 * once the operation returned, with its result (a fault point).
 */
export function write<T>(
  ctx: PgContext,
  operation: (tx: Writes) => Op<T>,
  beforeCommit?: (result: T) => void,
): Promise<T> {
  return ctx.write(async (tx) => {
    const result = await drive(tx, operation(new Writes(postgresDialect, tx.now, tx.changes)));
    beforeCommit?.(result);
    return result;
  });
}

/** A write with the fault points `<point>.before_commit` inside it and `.after_commit`. */
export async function writeAround<T>(
  ctx: PgContext,
  point: string,
  operation: (tx: Writes) => Op<T>,
): Promise<T> {
  const result = await write(ctx, operation, () => ctx.failpoints.hit(`${point}.before_commit`));
  ctx.failpoints.hit(`${point}.after_commit`);
  return result;
}

/** A shared step inside a transaction this backend's own code already opened. */
export function within<T>(tx: Tx, operation: (tx: Writes) => Op<T>): Promise<T> {
  return drive(tx, operation(new Writes(postgresDialect, tx.now, tx.changes)));
}
