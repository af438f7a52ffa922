// A run whose attempt is SIGKILLed at the same point every time (issue 12, class 3),
// with a real `keel serve` restarted on the same data dir: after workers.max_attempts
// crashed attempts the next claim fails it RUN_CRASHED instead of running it again, and
// the next turn of its scope runs. Before, the run was resumed (and killed) forever and
// its scope never moved on.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  TENANT,
  call,
  effectSinkForSuite,
  serve,
  setupTenant,
  tempDir,
} from './helpers/crash-harness.ts';

const TURNS = `/v1/tenants/${TENANT}/turns`;
/**
 * 2: the run's cap binds before the call's (a read_only call in flight at two crashes is
 * answered TOOL_CRASHED instead, resume-plan.ts), so the kill point can stay in a call.
 */
const MAX_ATTEMPTS = 2;
/** Far more lives than the fix needs; without it every life ends in the same kill. */
const MAX_LIVES = MAX_ATTEMPTS + 4;

describe('crash loop: an attempt killed at the same point every time', () => {
  effectSinkForSuite(); // cleanup of children and temp dirs after the suite

  it(`fails RUN_CRASHED after max_attempts=${MAX_ATTEMPTS} and the scope's next turn runs`, async () => {
    const dataDir = tempDir();
    const config = join(dataDir, 'keel.toml');
    writeFileSync(config, `[workers]\nmax_attempts = ${MAX_ATTEMPTS}\n`);
    // clock_now is read_only: each resumed attempt runs the call again and dies again.
    const env = {
      KEEL_CONFIG: config,
      KEEL_TEST_FAILPOINTS: '1',
      KEEL_FAILPOINTS: 'tool.before_call=kill',
    };
    let poison = '';
    let next = '';
    let kills = 0;
    let final: { status: string; attempt: number; error: { code: string } | null } | null = null;
    for (let life = 1; life <= MAX_LIVES && !final; life++) {
      const served = await serve(dataDir, env);
      if (life === 1) {
        await setupTenant(served.url);
        const body = (text: string) => ({ agent: 'a', scope: 'poison', payload: { text } });
        poison = (await call(served.url, 'POST', TURNS, body('@call clock_now {}'))).body.run_id;
        next = (await call(served.url, 'POST', TURNS, body('the next turn'))).body.run_id;
      }
      const waited = call(
        served.url,
        'GET',
        `/v1/tenants/${TENANT}/runs/${poison}/wait?timeout_ms=20000`,
      )
        .then((result) => result.body)
        .catch(() => null);
      // The wait is cut off by the kill (no answer), or answers with the ended run.
      const body = await waited;
      if (body === null) {
        const exit = await served.exited;
        assert.equal(exit.signal, 'SIGKILL', `life ${life} ended by the fault point`);
        kills += 1;
        continue;
      }
      assert.equal(body.timed_out, false, `life ${life}: the run neither ended nor died`);
      final = body.run;
      const following = await call(
        served.url,
        'GET',
        `/v1/tenants/${TENANT}/runs/${next}/wait?timeout_ms=20000`,
      );
      assert.equal(following.body.run.status, 'succeeded', 'the next turn of the scope ran');
      await served.terminate();
      console.log(
        `crashed[sqlite] max_attempts=${MAX_ATTEMPTS} kills=${kills} lives=${life} attempt=${final?.attempt} status=${final?.status} code=${final?.error?.code} next=${following.body.run.status}`,
      );
    }
    assert.ok(final, `the run was still being resumed after ${MAX_LIVES} lives (${kills} kills)`);
    assert.equal(final.status, 'failed');
    assert.equal(final.error?.code, 'RUN_CRASHED');
    assert.equal(kills, MAX_ATTEMPTS, 'every crashed attempt was one kill');
    assert.equal(final.attempt, MAX_ATTEMPTS + 1);
  });
});
