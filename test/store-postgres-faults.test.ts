// PostgreSQL connection loss under load, against a real `keel serve` child process: its
// store connections go through a TCP proxy (helpers/pg-proxy.ts), so the faults hit only
// this keel. Phase 1 terminates its backends (pg_terminate_backend) every few hundred
// ms while turns with an effectful tool call are submitted; phase 2 cuts the proxy
// (the server unreachable): /readyz answers 503, a submit answers 503 STORE_UNAVAILABLE
// with Retry-After; then the proxy is restored and /readyz recovers. Checked: the process
// stayed alive, no request answered 500, every turn succeeded once (one run per
// request_id), no tool call ran twice, no two runs of a scope overlapped.
// KEEL_TEST_PG_FAULT_LONG=1 runs the one-minute variant (backends terminated every 3 s).

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openPostgresStore } from '../src/store/postgres/index.ts';
import type { Run } from '../src/types.ts';
import { TENANT, cleanup, setupTenant, startEffectSink, tempDir } from './helpers/crash-harness.ts';
import {
  checkRequestIds,
  checkScopeEffects,
  emptyFindings,
  runsOfScope,
} from './helpers/crash-checks.ts';
import { RoleProcesses } from './helpers/keel-roles.ts';
import type { PgProxy } from './helpers/pg-proxy.ts';
import { startPgProxy } from './helpers/pg-proxy.ts';
import {
  dropSchemas,
  freshSchemaName,
  skipUnlessPostgres,
  urlWithSchema,
} from './helpers/postgres.ts';

const LONG = process.env.KEEL_TEST_PG_FAULT_LONG === '1';
const FAULT_PHASE_MS = LONG ? 60_000 : 6_000;
const FAULT_EVERY_MS = LONG ? 3_000 : 400;
const TURNS = LONG ? 600 : 90;
const SCOPES = 15;
const LEASE_MS = 2000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Answer {
  status: number;
  retryAfter: string | null;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

async function request(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer: Answer = {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: await response.json().catch(() => null),
  };
  return answer;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `${what}: not reached in ${timeoutMs} ms`);
    await sleep(25);
  }
}

const skip = await skipUnlessPostgres('test/store-postgres-faults.test.ts');

describe('PostgreSQL connection loss [postgres, keel serve child]', { skip }, () => {
  const processes = new RoleProcesses();
  const schema = freshSchemaName('keel_pgfault');
  let proxy: PgProxy | null = null;
  after(async () => {
    processes.killAll();
    await proxy?.close();
    cleanup();
    await dropSchemas([schema]);
  });

  it('the LISTEN connection comes back after its backend is terminated and says store.resync', async () => {
    const listenProxy = await startPgProxy(urlWithSchema(schema));
    const store = await openPostgresStore({ url: listenProxy.url, poolSize: 2 });
    try {
      const kinds: string[] = [];
      store.subscribe((change) => kinds.push(change.kind));
      assert.equal(store.listening, true);
      assert.ok((await listenProxy.terminateBackends()) >= 1);
      await until(async () => kinds.includes('store.resync'), 'store.resync after reconnect');
      assert.equal(store.listening, true);
      // The pool replaced its dead clients too: a write goes through.
      await store.createTenant('after-terminate', {});
    } finally {
      await store.close();
      await listenProxy.close();
    }
  });

  it(
    'backends terminated under load, then the server unreachable: process alive, 503 + Retry-After, /readyz flips and recovers, every turn once',
    { timeout: LONG ? 300_000 : 120_000 },
    async () => {
      proxy = await startPgProxy(urlWithSchema(schema));
      const sink = await startEffectSink();
      const dir = tempDir('keel-pgfault-');
      const config = join(dir, 'keel.toml');
      writeFileSync(config, `[workers]\nlease_ms = ${LEASE_MS}\nconcurrency = 8\n`);
      const keel = await processes.start('all', proxy.url, {
        config,
        env: { KEEL_TEST_EFFECT_SINK_URL: sink.url, KEEL_LOG_LEVEL: 'warn' },
      });
      let exited = false;
      void keel.exited.then(() => (exited = true));
      await setupTenant(keel.url);

      const statuses = new Map<number, number>();
      const note = (answer: Answer): void => {
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 503) assert.ok(answer.retryAfter, '503 without Retry-After');
      };
      /** Submits until accepted; a 503 is retried with the same request_id. */
      const submit = async (index: number): Promise<{ requestId: string; runId: string }> => {
        const requestId = `turn-${index}`;
        for (;;) {
          const answer = await request(keel.url, 'POST', `/v1/tenants/${TENANT}/turns`, {
            agent: 'a',
            scope: `scope-${index % SCOPES}`,
            request_id: requestId,
            payload: { text: `@call sink_write {"value":"v${index}","hold_ms":15}\n@sleep 10` },
          });
          note(answer);
          if (answer.status === 202 || answer.status === 200) {
            return { requestId, runId: answer.body.run_id as string };
          }
          assert.equal(answer.status, 503, JSON.stringify(answer.body));
          assert.equal(answer.body.error.code, 'STORE_UNAVAILABLE');
          await sleep(50);
        }
      };

      // Phase 1: terminate this keel's backends every FAULT_EVERY_MS while turns go in.
      const phaseEnds = Date.now() + FAULT_PHASE_MS;
      let terminations = 0;
      let faultRounds = 0;
      const faults = (async () => {
        while (Date.now() < phaseEnds && !exited) {
          await sleep(FAULT_EVERY_MS);
          terminations += await proxy.terminateBackends();
          faultRounds += 1;
        }
      })();
      const turns: { requestId: string; runId: string }[] = [];
      const spread = FAULT_PHASE_MS / TURNS;
      await Promise.all(
        Array.from({ length: 4 }, async (_, lane) => {
          for (let index = lane; index < TURNS; index += 4) {
            turns.push(await submit(index));
            await sleep(spread * 3);
          }
        }),
      );
      await faults;
      assert.equal(exited, false, `keel exited during the terminations:\n${keel.output()}`);

      // Phase 2: the server unreachable.
      proxy.cut();
      await until(
        async () => (await request(keel.url, 'GET', '/readyz')).status === 503,
        '/readyz 503 while the store is unreachable',
      );
      const notReady = await request(keel.url, 'GET', '/readyz');
      assert.equal(notReady.body.error.code, 'STORE_UNAVAILABLE');
      assert.ok(notReady.retryAfter);
      const refused = await request(keel.url, 'POST', `/v1/tenants/${TENANT}/turns`, {
        agent: 'a',
        scope: 'scope-cut',
        payload: { text: 'while cut' },
      });
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.error.code, 'STORE_UNAVAILABLE');
      assert.ok(refused.retryAfter, 'Retry-After on STORE_UNAVAILABLE');
      proxy.restore();
      await until(
        async () => (await request(keel.url, 'GET', '/readyz')).status === 200,
        '/readyz 200 once the store is back',
      );

      // Every turn finishes (runs whose attempt died with a connection resume after
      // their lease); waits that meet a 503 are asked again.
      const finished = await Promise.all(
        turns.map(async (turn) => {
          for (;;) {
            const answer = await request(
              keel.url,
              'GET',
              `/v1/tenants/${TENANT}/runs/${turn.runId}/wait?timeout_ms=30000`,
            );
            note(answer);
            if (answer.status === 200 && answer.body.timed_out === false) {
              return answer.body.run as Run;
            }
            assert.ok([200, 503].includes(answer.status), JSON.stringify(answer.body));
          }
        }),
      );
      const alive = !exited && keel.child.exitCode === null;

      const findings = emptyFindings();
      findings.lost = finished.filter((run) => run.status !== 'succeeded').length;
      const effects = await sink.effects();
      const executions = new Map<string, number>();
      for (const effect of effects) {
        const key = `${effect.run_id}:${effect.call_id}`;
        executions.set(key, (executions.get(key) ?? 0) + 1);
      }
      findings.dup_effects = [...executions.values()].filter((count) => count > 1).length;
      for (let scope = 0; scope < SCOPES; scope++) {
        const name = `${TENANT}/a/scope-${scope}`;
        checkScopeEffects(
          effects.filter((effect) => effect.scope === name),
          findings,
        );
      }
      const store = await openPostgresStore({ url: urlWithSchema(schema), poolSize: 2 });
      try {
        const runs: Run[] = [];
        for (let scope = 0; scope < SCOPES; scope++) {
          runs.push(...(await runsOfScope(store, TENANT, `scope-${scope}`)));
        }
        checkRequestIds(runs, turns, findings);
        assert.equal(runs.length, TURNS, 'one run per turn, no more');
      } finally {
        await store.close();
      }
      const reclaimed = finished.filter((run) => run.attempt > 1).length;
      process.stdout.write(
        `pg-faults turns=${TURNS} fault_rounds=${faultRounds} backends_terminated=${terminations} answers_503=${statuses.get(503) ?? 0} answers_500=${statuses.get(500) ?? 0} reclaimed=${reclaimed} lost=${findings.lost} duplicated=${findings.dup_effects + findings.run_count_errors} overlap=${findings.overlaps} process_alive=${alive}\n`,
      );
      assert.ok(terminations > 0, 'backends were terminated');
      assert.equal(alive, true);
      assert.equal(statuses.get(500) ?? 0, 0, 'no 500 answers');
      assert.deepEqual(findings.problems, []);
      // A store outage is not the attempt's fault: it must not spend the crash budget
      // (before the worker recorded run.released after an outage, runs ended RUN_CRASHED).
      const notSucceeded = finished
        .filter((run) => run.status !== 'succeeded')
        .map((run) => `${run.run_id}:${run.status}:${run.error?.code ?? ''}`);
      assert.equal(findings.lost, 0, notSucceeded.join(', '));
      assert.equal(findings.dup_effects, 0);
      assert.equal(findings.overlaps, 0);
      assert.equal(findings.run_count_errors, 0);
      await processes.stopAll();
    },
  );
});
