// Usage totals survive kills and second workers (docs/reliability.md, usage rows): the
// usage ledger grows in the transaction that journals each model response, so after
// SIGKILLs — before a response's commit (it is requested again) and right after one (it
// is never counted twice) — and with two `keel serve` processes on one PostgreSQL
// database, one of them killed mid-run, the totals equal the sum of the journal's
// `model.response` usage exactly.

import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { CrashBackend } from './helpers/crash-backend.ts';
import { postgresCrashBackend, sqliteCrashBackend } from './helpers/crash-backend.ts';
import type { Served } from './helpers/crash-harness.ts';
import {
  TENANT,
  call,
  cleanup,
  serve,
  setupTenant,
  tempDir,
  waitTerminal,
} from './helpers/crash-harness.ts';
import { skipUnlessPostgres } from './helpers/postgres.ts';
import { settledWithin, waitFor } from './helpers/wait-for.ts';

// Three model calls per turn, each answered after 150 ms (time to submit every turn).
const SCRIPT = '@sleep 150\n@call clock_now {}\n@call clock_now {}\nusage under crashes';
const TURNS = 4;

const body = (index: number) => ({
  agent: 'a',
  scope: `u${index}`,
  payload: { text: SCRIPT },
  request_id: `usage-${index}`,
});

/** Submits every turn (the same request ids each time); a dying process may refuse some. */
async function submitAll(url: string): Promise<void> {
  for (let index = 0; index < TURNS; index += 1) {
    try {
      await call(url, 'POST', `/v1/tenants/${TENANT}/turns`, body(index));
    } catch {
      return;
    }
  }
}

/** No turn of the tenant is still queued (or the process answering died: a kill). */
async function noneQueued(url: string): Promise<boolean> {
  try {
    const listed = await call(url, 'GET', `/v1/tenants/${TENANT}/runs?status=queued`);
    return (listed.body.runs as unknown[]).length === 0;
  } catch {
    return true;
  }
}

async function killedWithin(served: Served, ms: number): Promise<void> {
  const exit = await settledWithin(served.exited, ms);
  if (exit?.signal !== 'SIGKILL') {
    await served.kill();
    throw new Error('the fault point never fired');
  }
}

/** Every turn finished through `url`; their run ids. */
async function finishAll(url: string): Promise<string[]> {
  const runIds: string[] = [];
  for (let index = 0; index < TURNS; index += 1) {
    const submitted = await call(url, 'POST', `/v1/tenants/${TENANT}/turns`, body(index));
    runIds.push(submitted.body.run_id as string);
    assert.equal(await waitTerminal(url, submitted.body.run_id as string), 'succeeded');
  }
  return runIds;
}

/** The journal's usage vs the ledger's totals, on the stopped store. */
async function compare(backend: CrashBackend, dataDir: string, runIds: string[]): Promise<void> {
  const store = await backend.open(dataDir);
  try {
    const journal = { input: 0, output: 0, calls: 0 };
    let runsUsage = 0;
    let resumed = 0;
    for (const runId of runIds) {
      const run = await store.getRun(TENANT, runId);
      assert.ok(run);
      runsUsage += run.usage.input_tokens + run.usage.output_tokens;
      if (run.attempt > 1) resumed += 1;
      for (const event of (await store.getTrace(TENANT, runId, 0, 10_000)) ?? []) {
        if (event.type !== 'model.response') continue;
        const usage = event.data.usage as { input_tokens: number; output_tokens: number };
        journal.input += usage.input_tokens;
        journal.output += usage.output_tokens;
        journal.calls += 1;
      }
    }
    const now = Date.now();
    const from = new Date(now - 86_400_000).toISOString().slice(0, 10);
    const to = new Date(now).toISOString().slice(0, 10);
    const { total } = await store.getUsage(TENANT, { from, to, group_by: 'run' });
    console.log(
      `[${backend.name}] journal: ${journal.calls} responses, ${journal.input}+${journal.output} tokens; ledger: ${total.model_calls} responses, ${total.input_tokens}+${total.output_tokens} tokens; ${resumed} of ${runIds.length} runs resumed`,
    );
    assert.equal(journal.calls, TURNS * 3, 'three responses per turn in the journal');
    assert.equal(total.model_calls, journal.calls);
    assert.equal(total.input_tokens, journal.input);
    assert.equal(total.output_tokens, journal.output);
    assert.equal(runsUsage, journal.input + journal.output, "the runs' own usage agrees");
    assert.ok(resumed >= 1, 'a killed attempt was resumed');
  } finally {
    await store.close();
  }
}

// The hash embedder: no word-vector build at start-up (the tests never search memory).
const FAST_MEMORY = '\n[memory]\nembedder = "hash"\n';

const pgSkip = await skipUnlessPostgres('test/usage-crash.test.ts');

describe('usage totals equal the journal across kills', () => {
  after(cleanup);

  it('[sqlite] killed right after a response commits, restarted', async () => {
    const dataDir = tempDir();
    writeFileSync(join(dataDir, 'keel.toml'), FAST_MEMORY);
    const config = { KEEL_CONFIG: join(dataDir, 'keel.toml') };
    // Killed right after a response's commit: the resumed run never counts it twice.
    const doomed = await serve(dataDir, {
      ...config,
      KEEL_TEST_FAILPOINTS: '1',
      KEEL_FAILPOINTS: 'entry.after_commit=9*kill',
    });
    await setupTenant(doomed.url);
    await submitAll(doomed.url);
    await killedWithin(doomed, 90_000);
    const restarted = await serve(dataDir, config);
    try {
      const runIds = await finishAll(restarted.url);
      await restarted.kill();
      await compare(sqliteCrashBackend, dataDir, runIds);
    } finally {
      await restarted.kill();
    }
  });

  it(
    '[postgres] two worker processes, one killed before a response commits',
    { skip: pgSkip },
    async () => {
      const backend = postgresCrashBackend();
      try {
        const dataDir = tempDir();
        const env = backend.env(dataDir);
        appendFileSync(env.KEEL_CONFIG as string, FAST_MEMORY);
        const doomed = await serve(dataDir, {
          ...env,
          KEEL_TEST_FAILPOINTS: '1',
          // Killed with a response received but not committed: it is requested again.
          KEEL_FAILPOINTS: 'model.after_response=5*kill',
        });
        await setupTenant(doomed.url);
        await submitAll(doomed.url);
        // The doomed worker must reach its fifth response: it claims every turn before the
        // other worker starts (a second worker already running took runs from it, and the
        // fault point then sometimes never fired).
        await waitFor('the doomed worker claimed every turn', () => noneQueued(doomed.url), {
          timeoutMs: 30_000,
          everyMs: 50,
        });
        const other = await serve(tempDir(), env);
        try {
          await killedWithin(doomed, 90_000);
          // The killed worker's leases (1 s) expire; the other worker resumes its runs.
          const runIds = await finishAll(other.url);
          await other.kill();
          await compare(backend, dataDir, runIds);
        } finally {
          await other.kill();
        }
      } finally {
        await backend.dropAll();
      }
    },
  );
});
