// Drives a shared repository operation (../sql/steps.ts) on SQLite: synchronously, one
// prepared statement per step, so a write stays inside the caller's synchronous
// transaction (and a batched one inside its group commit).

import type { Op, Step } from '../sql/steps.ts';
import { Reads, Writes } from '../sql/steps.ts';
import type { StoreChange } from '../store.ts';
import type { StoreContext } from './context.ts';
import { sqliteDialect } from './dialect.ts';

const reads = new Reads(sqliteDialect);

/** What driving needs of a connection: its statements (StoreContext, or a bare one). */
type Statements = Pick<StoreContext, 'sql'>;

function runStep(ctx: Statements, step: Step): unknown {
  if (step.kind === 'call') {
    const result = step.work();
    if (result instanceof Promise) throw new Error('a SQLite write cannot await');
    return result;
  }
  const statement = ctx.sql(sqliteDialect.text(step.query));
  const values = step.query.values.map(sqliteDialect.value);
  if (step.kind === 'rows') return statement.all(...values);
  if (step.kind === 'each') return statement.iterate(...values);
  if (step.kind === 'one') return statement.get(...values);
  return statement.run(...values).changes;
}

/** Runs every step of `op` now, on this connection (inside whatever write is open). */
export function drive<T>(ctx: Statements, op: Op<T>): T {
  let next = op.next();
  while (!next.done) {
    let result: unknown;
    try {
      result = runStep(ctx, next.value);
    } catch (error) {
      next = op.throw(error);
      continue;
    }
    next = op.next(result);
  }
  return next.value;
}

/**
 * A step that writes nothing: outside a write (it joins the read window), or inside a
 * group commit before its write (the approval sweep's read-only probe).
 */
export function read<T>(ctx: StoreContext, operation: (db: Reads) => Op<T>): T {
  return drive(ctx, operation(reads));
}

/**
 * A write: one transaction (a savepoint inside an open one), changes sent after commit.
 * `beforeCommit` runs inside it once the operation returned, with its result (a fault
 * point): a callback, not a generator around the operation, through which every
 * statement would pass.
 */
export function write<T>(
  ctx: StoreContext,
  operation: (tx: Writes) => Op<T>,
  beforeCommit?: (result: T) => void,
): T {
  return ctx.write((changes) => {
    const result = drive(ctx, operation(new Writes(sqliteDialect, ctx.now(), changes)));
    beforeCommit?.(result);
    return result;
  });
}

/** A write with the fault points `<point>.before_commit` inside it and `.after_commit`. */
export function writeAround<T>(
  ctx: StoreContext,
  point: string,
  operation: (tx: Writes) => Op<T>,
): T {
  const result = write(ctx, operation, () => ctx.failpoints.hit(`${point}.before_commit`));
  // After the outermost commit (a group commit's, when the write joined one).
  ctx.afterCommit(() => ctx.failpoints.hit(`${point}.after_commit`));
  return result;
}

/**
 * A shared step inside a write this backend's own code already opened, with that
 * write's clock reading and changes. The changes are required: a step's change pushed
 * anywhere but the open write's list would never be sent.
 */
export function within<T>(
  ctx: StoreContext,
  operation: (tx: Writes) => Op<T>,
  opened: { now?: number; changes: StoreChange[] },
): T {
  const tx = new Writes(sqliteDialect, opened.now ?? ctx.now(), opened.changes);
  return drive(ctx, operation(tx));
}
