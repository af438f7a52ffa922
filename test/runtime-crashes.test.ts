// An attempt must not crash for good (issue 12, class 3), in process: whatever a model
// or a tool throws at the loop becomes a tool or run error; an exception that still
// escapes an attempt is retried at once and ends RUN_CRASHED after max_attempts, freeing
// the scope's lane; time between checkpoints is recorded so it counts across resumes.
// The same with a real SIGKILLed `keel serve` is in crash-attempts.test.ts.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { z } from 'zod';
import type { Provider } from '../src/providers/provider.ts';
import { builtinTools } from '../src/tools/builtin/index.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { defineTool } from '../src/tools/tool.ts';
import type { AgentSpec, RunEntry } from '../src/types.ts';
import type { Harness } from './runtime-harness.ts';
import { openHarness, types } from './runtime-harness.ts';

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function codes(entries: RunEntry[]): (string | null)[] {
  return entries.flatMap((entry) =>
    entry.kind === 'tool_result' ? [entry.body.ok ? null : (entry.body.error?.code ?? '?')] : [],
  );
}

const throwingTools = [
  defineTool({
    name: 'throw_null_proto',
    family: 'test',
    effect: 'read_only',
    description: 'throws an object that cannot even be turned into a string',
    input: z.strictObject({}),
    run: async () => {
      throw Object.create(null) as object;
    },
  }),
  defineTool({
    name: 'throw_string',
    family: 'test',
    effect: 'read_only',
    description: 'throws a string, not an Error',
    input: z.strictObject({}),
    run: async () => {
      throw 'not an error object';
    },
  }),
];

/** Answers once without `usage` (a provider bug), which the loop used to choke on. */
const malformedModel: Provider = {
  name: 'malformed',
  async complete() {
    return {
      assistant: { text: 'hi', tool_calls: [], finish_reason: 'stop', model: 'm' },
    } as never;
  },
};

/** Answers well, but with a raw exchange of objects where provider.ts wants JSON texts. */
const oddRawModel: Provider = {
  name: 'oddraw',
  async complete() {
    return {
      assistant: {
        text: 'fine',
        tool_calls: [],
        usage: { input_tokens: 1, output_tokens: 1 },
        finish_reason: 'stop',
        model: 'oddraw/x',
      },
      raw: { request: { model: 'x' } },
    } as never;
  },
};

const VISIBLE: Partial<AgentSpec> = { allowed_families: ['calc', 'schedule', 'test'] };

describe('loop: what a model or a tool throws at it', () => {
  let h: Harness;
  before(async () => {
    h = await openHarness({
      tools: createToolRegistry([...builtinTools(), ...throwingTools]),
      providers: { malformed: malformedModel, oddraw: oddRawModel },
    });
    await h.putAgent('a', VISIBLE);
    await h.putAgent('m', { model: 'malformed/x' });
    await h.putAgent('o', { model: 'oddraw/x' });
  });
  after(async () => {
    await h.close();
  });

  it('deep, huge and throwing tool calls become tool errors; the run goes on', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const script = [
      `@call schedule_put {"name": "n", "every_ms": 60000, "payload": {"x": ${deep}}}`,
      `@call calc_eval {"expression": "${'1+'.repeat(600_000)}1"}`,
      '@call throw_null_proto {}',
      '@call throw_string {}',
      '@call calc_eval {"expression": "6*7"}',
      'done',
    ].join('\n');
    const runId = await h.submit(script, { scope: 'pathological' });
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded');
    assert.equal(run.attempt, 1, 'no attempt crashed');
    const entries = await h.store.loadEntries(runId);
    assert.deepEqual(codes(entries), [
      'INVALID_ARGUMENTS',
      'INVALID_ARGUMENTS',
      'TOOL_FAILED',
      'TOOL_FAILED',
      null,
    ]);
    const messages = entries.flatMap((entry) =>
      entry.kind === 'tool_result' && entry.body.error ? [entry.body.error.message] : [],
    );
    assert.match(messages[0] ?? '', /nested deeper than 64/);
    assert.match(messages[1] ?? '', /at most 1000000/);
    assert.equal(messages[3], 'not an error object');
    console.log(`pathological calls=5 tool_errors=4 attempts=${run.attempt}`);
  });

  it('a malformed provider response fails the run PROVIDER_ERROR at once', async () => {
    const run = await h.wait(await h.submit('hi', { agent: 'm', scope: 'malformed' }));
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'PROVIDER_ERROR');
    assert.match(run.error?.message ?? '', /malformed \(usage: /);
    assert.equal(run.attempt, 1);
  });

  it('a raw exchange that is not JSON texts is left out of the trace; the run goes on', async () => {
    const runId = await h.submit('hi', { agent: 'o', scope: 'oddraw' });
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded');
    const response = (await h.trace(runId)).find((event) => event.type === 'model.response');
    assert.equal(response?.data.step, 1);
    assert.equal(response?.data.raw, undefined);
  });
});

describe('worker: an exception that escapes every attempt', () => {
  let h: Harness;
  let portsBuilt = 0;
  before(async () => {
    h = await openHarness({
      maxAttempts: 3,
      // Lease far beyond the test's waits: only an immediate release can retry in time.
      leaseMs: 60_000,
      toolPorts: () => {
        portsBuilt += 1;
        throw new Error('the tool ports broke');
      },
    });
  });
  after(async () => {
    await h.close();
  });

  it('is retried at once, fails RUN_CRASHED after max_attempts and frees the lane', async () => {
    const poison = await h.submit('@call clock_now {}', { scope: 'lane' });
    const next = await h.submit('after the poison', { scope: 'lane' });
    const run = await h.wait(poison);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'RUN_CRASHED');
    assert.match(run.error?.message ?? '', /crashed on 3 attempts \(max_attempts is 3\)/);
    assert.equal(run.attempt, 4, 'three crashed attempts, the fourth fails the run');
    assert.equal(portsBuilt, 3);
    const trace = types(await h.trace(poison));
    assert.equal(trace.filter((type) => type === 'run.claimed').length, 4);
    assert.equal(trace.filter((type) => type === 'model.request').length, 1, 'response kept');
    const following = await h.wait(next);
    assert.equal(following.status, 'succeeded', 'the next turn of the scope runs');
    console.log(
      `escaping[sqlite] attempts=${run.attempt} crashed=3 code=${run.error?.code} next=${following.status}`,
    );
  });
});

describe('worker: run time between checkpoints', () => {
  it('is recorded with the heartbeat, so a crash mid-call keeps it (timeout_ms spans resumes)', async () => {
    const harness = await openHarness({
      leaseMs: 1000,
      tools: createToolRegistry([
        defineTool({
          name: 'hold',
          family: 'test',
          effect: 'read_only',
          description: 'waits until aborted',
          input: z.strictObject({}),
          run: (_input, context) =>
            new Promise((_resolve, reject) => {
              context.signal.addEventListener('abort', () => reject(new Error('aborted')));
            }),
        }),
      ]),
    });
    try {
      await harness.putAgent('a', { allowed_families: ['test'] });
      const runId = await harness.submit('@call hold {}', { scope: 'held' });
      const db = new Database(join(harness.dir, 'keel.db'), { readonly: true });
      const elapsed = (): number =>
        (
          db.prepare('SELECT elapsed_ms FROM runs WHERE run_id = ?').get(runId) as {
            elapsed_ms: number;
          }
        ).elapsed_ms;
      let intent = -1;
      await until(async () => {
        const trace = types(await harness.trace(runId));
        if (trace.includes('tool.call') && intent < 0) intent = elapsed();
        return intent >= 0;
      });
      // Nothing is checkpointed while the call is held: only the heartbeat can move it.
      await until(() => elapsed() >= intent + 700, 5000);
      const recorded = elapsed();
      db.close();
      console.log(`held_call elapsed_at_intent=${intent} elapsed_recorded=${recorded}`);
      assert.ok(recorded >= intent + 700);
      await harness.store.cancelRun('t1', runId, 'done');
    } finally {
      await harness.close();
    }
  });
});
