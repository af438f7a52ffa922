// Steering races (docs/agent-loop.md, "Steering"; docs/reliability.md): steer
// submissions fired from inside the run loop and the store at the points around a
// run's end — after the step boundary's read found nothing (`steer.boundary_read`),
// after a model response, after a checkpoint, inside and after the finalize
// transaction, after a claim — at once, on the next tick or a few ms later. Every
// message must be answered exactly once: taken into the running run (a user entry the
// model answered after it) or run as a run of its own, never dropped, never both.
// SQLite with one worker; PostgreSQL with two workers on separate pools.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import type { Failpoints } from '../src/failpoints.ts';
import { createMetrics } from '../src/metrics.ts';
import { createFixtureProvider } from '../src/providers/fixture.ts';
import { createProviderRegistry } from '../src/providers/registry.ts';
import { enqueueTurn } from '../src/runtime/enqueue.ts';
import type { Worker } from '../src/runtime/worker.ts';
import { createWorker } from '../src/runtime/worker.ts';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { EnqueueResult, Store } from '../src/store/store.ts';
import { builtinTools } from '../src/tools/builtin/index.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import type { Run, RunEntry } from '../src/types.ts';
import { agentSpec } from './helpers/agent-spec.ts';
import {
  POSTGRES_URL,
  dropSchemas,
  freshSchemaName,
  skipUnlessPostgres,
} from './helpers/postgres.ts';
import { waitFor } from './helpers/wait-for.ts';

const TENANT = 't1';
const SCOPES = 8;
/** The points around a run's end where submissions are fired. */
const POINTS = new Set([
  'steer.boundary_read',
  'model.after_response',
  'entry.after_commit',
  'finalize.before_commit',
  'finalize.after_commit',
  'claim.after_commit',
]);

interface Submission {
  text: string;
  result?: EnqueueResult;
  error?: unknown;
}

/** Fires steer submissions at the fault points until `total` were made (seeded PRNG). */
class SteerInjector implements Failpoints {
  readonly submissions: Submission[] = [];
  /** Submissions decided on (some fire a tick later). */
  private scheduled = 0;
  readonly pending: Promise<void>[] = [];
  readonly byPoint = new Map<string, number>();
  store: Store | null = null;
  private seed = 0x5eed;

  constructor(private readonly total: number) {}

  private random(): number {
    // mulberry32: deterministic, so a failure reproduces.
    this.seed = (this.seed + 0x6d2b79f5) | 0;
    let t = this.seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  get done(): boolean {
    return this.scheduled >= this.total;
  }

  hit(name: string): void {
    if (!POINTS.has(name) || this.done || this.random() > 0.35) return;
    this.byPoint.set(name, (this.byPoint.get(name) ?? 0) + 1);
    const count = 1 + Math.floor(this.random() * 2);
    for (let i = 0; i < count && !this.done; i += 1) {
      this.scheduled += 1;
      const when = this.random();
      const submit = () => this.submit(Math.floor(this.random() * SCOPES));
      // At once (inside the hook), on the next turn, or a few ms later.
      if (when < 0.4) submit();
      else if (when < 0.7) setImmediate(submit);
      else setTimeout(submit, Math.floor(this.random() * 4));
    }
  }

  submit(scope: number): void {
    const store = this.store as Store;
    const submission: Submission = { text: `m-${this.submissions.length}` };
    this.submissions.push(submission);
    this.pending.push(
      enqueueTurn(store, {
        tenant: TENANT,
        agent: 'a',
        scope: `lane-${scope}`,
        payload: { text: submission.text },
        request_id: submission.text,
        on_busy: 'steer',
      }).then(
        (result) => {
          submission.result = result;
        },
        (error: unknown) => {
          submission.error = error;
        },
      ),
    );
  }
}

async function allRuns(store: Store): Promise<Run[]> {
  const runs: Run[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listRuns(TENANT, {}, 200, cursor);
    runs.push(...page.items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return runs;
}

interface Backend {
  name: string;
  total: number;
  /** One store per worker (PostgreSQL: separate pools, as two processes would have). */
  open(failpoints: Failpoints, workers: number): Promise<Store[]>;
  workers: number;
  cleanup(): Promise<void>;
}

async function race(backend: Backend): Promise<void> {
  const injector = new SteerInjector(backend.total);
  const stores = await backend.open(injector, backend.workers);
  const [store] = stores as [Store];
  injector.store = store;
  const workers: Worker[] = [];
  try {
    await store.createTenant(TENANT, {});
    await store.putAgent(TENANT, 'a', agentSpec());
    for (const workerStore of stores) {
      const worker = createWorker({
        store: workerStore,
        tools: createToolRegistry(builtinTools()),
        providers: createProviderRegistry({ fixture: createFixtureProvider() }),
        logger: pino({ level: 'silent' }),
        metrics: createMetrics(),
        failpoints: injector,
        concurrency: SCOPES,
        leaseMs: 30_000,
        pollMs: 200,
      });
      worker.start();
      workers.push(worker);
    }
    // Base turns with a tool step (two step boundaries each) keep the lanes busy while
    // the injector fires; rounds go on until every submission was made.
    let bases = 0;
    while (!injector.done) {
      const round = await Promise.all(
        Array.from({ length: SCOPES }, (_, scope) =>
          enqueueTurn(store, {
            tenant: TENANT,
            agent: 'a',
            scope: `lane-${scope}`,
            payload: { text: '@call clock_now' },
          }),
        ),
      );
      bases += round.length;
      await Promise.all(round.map(({ run }) => waitTerminal(store, run.run_id)));
    }
    await Promise.all(injector.pending);
    await waitFor(
      'every lane drained',
      async () => {
        const stats = await store.stats();
        return stats.runs_by_status.queued + stats.runs_by_status.running === 0;
      },
      { timeoutMs: 60_000, everyMs: 20 },
    );

    const runs = await allRuns(store);
    const byText = new Map<string, Run[]>();
    for (const run of runs) {
      const text = String(run.input.text);
      byText.set(text, [...(byText.get(text) ?? []), run]);
    }
    const taken = new Map<string, { run: Run; entry: RunEntry; answered: boolean }[]>();
    for (const run of runs) {
      const entries = await store.loadEntries(run.run_id);
      entries.forEach((entry, index) => {
        if (entry.kind !== 'user' || entry.body.steer_id === undefined) return;
        const answered =
          run.status === 'succeeded' &&
          entries.slice(index + 1).some((later) => later.kind === 'assistant');
        const text = entry.body.text;
        taken.set(text, [...(taken.get(text) ?? []), { run, entry, answered }]);
      });
    }

    let intoRunning = 0;
    let asNextRun = 0;
    let plain = 0;
    let lost = 0;
    let doubled = 0;
    let unanswered = 0;
    let wrongAnswer = 0;
    let steeredReplies = 0;
    for (const submission of injector.submissions) {
      assert.equal(submission.error, undefined, `${submission.text}: ${String(submission.error)}`);
      const result = submission.result as EnqueueResult;
      if (result.steer_id) steeredReplies += 1;
      const inRuns = (byText.get(submission.text) ?? []).filter(
        (run) => run.status === 'succeeded',
      );
      const inJournals = taken.get(submission.text) ?? [];
      const answers = inRuns.length + inJournals.length;
      if (answers === 0) {
        lost += 1;
        const own = byText.get(submission.text) ?? [];
        console.log(`lost ${submission.text}`, JSON.stringify(result), JSON.stringify(own));
      }
      if (answers > 1) doubled += 1;
      if (answers !== 1) continue;
      const [journaled] = inJournals;
      if (journaled) {
        intoRunning += 1;
        if (!journaled.answered) {
          unanswered += 1;
          if (unanswered < 3)
            console.log(`unanswered ${submission.text}`, JSON.stringify(journaled.run));
        }
        // Taken by the run the submit named, under the id it answered.
        if (
          journaled.run.run_id !== result.run.run_id ||
          journaled.entry.kind !== 'user' ||
          journaled.entry.body.steer_id !== result.steer_id
        ) {
          wrongAnswer += 1;
        }
      } else {
        const own = inRuns[0] as Run;
        if (result.steer_id) asNextRun += 1;
        else plain += 1;
        if (own.run_id !== (result.steer_id ?? result.run.run_id)) wrongAnswer += 1;
      }
    }
    const points = [...injector.byPoint].map(([name, n]) => `${name}=${n}`).join(' ');
    console.log(
      `steer-race[${backend.name}] submissions=${injector.submissions.length} base_runs=${bases} ` +
        `workers=${workers.length} steered_replies=${steeredReplies} taken_into_running=${intoRunning} ` +
        `ran_as_next_run=${asNextRun} plain_runs=${plain} lost=${lost} doubled=${doubled} ` +
        `unanswered=${unanswered} wrong_answer=${wrongAnswer} fired_at: ${points}`,
    );
    assert.equal(injector.submissions.length, backend.total);
    assert.equal(lost, 0, 'no message dropped');
    assert.equal(doubled, 0, 'no message answered twice');
    assert.equal(unanswered, 0, 'every taken message was followed by a model answer');
    assert.equal(wrongAnswer, 0, 'every message was answered where the submit said');
    // The race was real: both outcomes of a steer occurred.
    assert.ok(intoRunning > 0, 'some messages were taken into the running run');
    assert.ok(asNextRun > 0, 'some steered messages came too late and ran next');
  } finally {
    for (const worker of workers) await worker.stop({ graceMs: 1000 });
    for (const each of stores) await each.close();
    await backend.cleanup();
  }
}

async function waitTerminal(store: Store, runId: string): Promise<void> {
  await waitFor(
    `run ${runId} terminal`,
    async () => {
      const run = await store.getRun(TENANT, runId);
      return run && run.status !== 'queued' && run.status !== 'running';
    },
    { timeoutMs: 30_000, everyMs: 2 },
  );
}

describe('steering races', () => {
  it(
    'sqlite: 1000 steer submissions around runs’ ends, each answered exactly once',
    { timeout: 90_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'keel-steer-race-'));
      await race({
        name: 'sqlite',
        total: 1000,
        workers: 1,
        async open(failpoints) {
          return [
            await openSqliteStore({
              path: join(dir, 'keel.db'),
              durability: 'process',
              failpoints,
            }),
          ];
        },
        async cleanup() {
          rmSync(dir, { recursive: true, force: true });
        },
      });
    },
  );

  const schema = freshSchemaName('keel_steer');
  after(async () => {
    if (!(await skipUnlessPostgres('test/steering-race.test.ts'))) await dropSchemas([schema]);
  });
  it('postgres: 300 steer submissions, two workers, each answered exactly once', async (t) => {
    const skip = await skipUnlessPostgres('test/steering-race.test.ts');
    if (skip) return t.skip(skip);
    await race({
      name: 'postgres',
      total: 300,
      workers: 2,
      async open(failpoints, workers) {
        const stores: Store[] = [];
        for (let i = 0; i < workers; i += 1) {
          stores.push(
            await openPostgresStore({ url: POSTGRES_URL, schema, poolSize: 4, failpoints }),
          );
        }
        return stores;
      },
      async cleanup() {},
    });
  });
});
