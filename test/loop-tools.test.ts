// The durable loop with tools, in process (real SQLite, fixture model): every error path
// goes back to the model and the run goes on; limits; output schema; usage; idempotency
// keys; @parallel; transcript integrity; the resume rules for calls left in flight.

import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { unansweredCalls } from '../src/runtime/model-input.ts';
import { OUTCOME_UNKNOWN_MESSAGE } from '../src/runtime/resume-plan.ts';
import { executeCall, prepareCall } from '../src/runtime/tool-step.ts';
import type { ToolCallEnv } from '../src/runtime/tool-step.ts';
import { builtinTools } from '../src/tools/builtin/index.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import type { ToolEffect } from '../src/tools/tool.ts';
import { defineTool } from '../src/tools/tool.ts';
import type { AgentSpec, RunEntry, ToolResultBody } from '../src/types.ts';
import type { Harness } from './runtime-harness.ts';
import { AGENT_DEFAULTS, TENANT, openHarness, types } from './runtime-harness.ts';

/** Idempotency keys each test tool ran with, by tool name. */
const executions = new Map<string, string[]>();
const aborts: string[] = [];

function countingTool(name: string, effect: ToolEffect) {
  return defineTool({
    name,
    family: 'test',
    effect,
    description: `test tool (${effect}) that reports its context`,
    input: z.strictObject({}),
    run: async (_input, context) => {
      executions.set(name, [...(executions.get(name) ?? []), context.idempotency_key]);
      return {
        key: context.idempotency_key,
        run_id: context.run_id,
        call_id: context.call_id,
        where: `${context.tenant}/${context.agent}/${context.scope}`,
        deadline_in_ms: context.deadline - Date.now(),
      };
    },
  });
}

const testTools = [
  countingTool('test_read', 'read_only'),
  countingTool('test_put', 'idempotent'),
  countingTool('test_effect', 'effectful'),
  defineTool({
    name: 'test_slow',
    family: 'test',
    effect: 'read_only',
    description: 'sleeps ms, honouring the abort signal',
    input: z.strictObject({ ms: z.number().int().min(0) }),
    run: async ({ ms }, context) => {
      try {
        await delay(ms, undefined, { signal: context.signal });
      } catch (error) {
        aborts.push(context.call_id);
        throw error;
      }
      return { slept: ms };
    },
  }),
  defineTool({
    name: 'test_throw',
    family: 'test',
    effect: 'read_only',
    description: 'always throws',
    input: z.strictObject({}),
    run: async () => {
      throw new Error('boom');
    },
  }),
  defineTool({
    name: 'hidden_tool',
    family: 'hidden',
    effect: 'read_only',
    description: 'exists, but no test agent may see it',
    input: z.strictObject({}),
    run: async () => ({ seen: true }),
  }),
];

const VISIBLE: Partial<AgentSpec> = { allowed_families: ['clock', 'calc', 'test'] };

function results(entries: RunEntry[]): ToolResultBody[] {
  return entries.flatMap((entry) => (entry.kind === 'tool_result' ? [entry.body] : []));
}

function codes(entries: RunEntry[]): (string | null)[] {
  return results(entries).map((result) => (result.ok ? null : (result.error?.code ?? '?')));
}

describe('loop: tool calls', () => {
  let h: Harness;
  before(async () => {
    h = await openHarness({ tools: createToolRegistry([...builtinTools(), ...testTools]) });
    await h.putAgent('a', { ...VISIBLE, tool_timeout_ms: 300 });
  });
  after(async () => {
    // Transcript integrity over every request any test here sent to the model.
    for (const request of h.model.requests) assert.deepEqual(unansweredCalls(request.entries), []);
    await h.close();
  });

  it('every error path becomes an {ok:false} result for the model and the run goes on', async () => {
    const script = [
      '@call no_such_tool {}',
      '@call hidden_tool {}',
      '@call calc_eval {not json',
      '@call calc_eval {"expr": "1+1"}',
      '@call test_throw {}',
      '@call calc_eval {"expression": "1/"}',
      '@call test_slow {"ms": 5000}',
      '@call calc_eval {"expression": "6*7"}',
      'done',
    ].join('\n');
    const runId = await h.submit(script, { scope: 'errors' });
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded');
    const entries = await h.store.loadEntries(runId);
    assert.deepEqual(codes(entries), [
      'TOOL_NOT_FOUND',
      'TOOL_NOT_ALLOWED',
      'INVALID_ARGUMENTS',
      'INVALID_ARGUMENTS',
      'TOOL_FAILED',
      'CALC_INVALID',
      'TOOL_TIMEOUT',
      null,
    ]);
    const [, , badJson, badSchema, threw] = results(entries);
    assert.match(badJson?.error?.message ?? '', /not valid JSON/);
    assert.match(badSchema?.error?.message ?? '', /expression/, 'names the missing field');
    assert.match(badSchema?.error?.message ?? '', /expr/, 'and the unknown one');
    assert.equal(threw?.error?.message, 'boom');
    assert.ok(aborts.includes('call_7_1'), 'the timed-out tool saw its signal abort');
    assert.deepEqual(results(entries)[7]?.result, { expression: '6*7', value: 42 });
    // The model saw each result: the fixture's final text lists them.
    assert.match(String(run.output?.reply), /^echo: done\nno_such_tool: TOOL_NOT_FOUND\n/);
    assert.equal(run.steps, 9);
    assert.equal(run.usage.model_calls, 9);
    // Executions only: throw, CALC_INVALID, timeout, 6*7 — not the rejected calls.
    assert.equal(run.usage.tool_calls, 4);

    const trace = await h.trace(runId);
    const calls = trace.filter((event) => event.type === 'tool.call');
    assert.equal(calls.length, 8);
    // An executed call's intent carries its effect and key; a rejected one does not.
    assert.equal(calls[0]?.data.effect, undefined);
    assert.equal(calls[4]?.data.effect, 'read_only');
    assert.equal(calls[4]?.data.idempotency_key, `${runId}:call_5_1`);
    // Each result is its own transaction, right after its call: call, result, call, …
    const toolEvents = types(trace).filter((type) => type.startsWith('tool.'));
    assert.deepEqual(toolEvents, Array(8).fill(['tool.call', 'tool.result']).flat());
  });

  it('the model is sent the visible tools only, with their JSON Schema', async () => {
    const before = h.model.requests.length;
    await h.wait(await h.submit('hi', { scope: 'tools-sent' }));
    const sent = h.model.requests[before]?.tools ?? [];
    const names = sent.map((tool) => tool.name).sort();
    assert.ok(names.includes('calc_eval') && names.includes('test_effect'));
    assert.ok(!names.includes('hidden_tool'));
    const calc = sent.find((tool) => tool.name === 'calc_eval');
    assert.equal(calc?.input_schema.type, 'object');
    assert.ok(JSON.stringify(calc?.input_schema).includes('expression'));
  });

  it('allowed_tools narrows the visible set: a listed family tool not in it is TOOL_NOT_ALLOWED', async () => {
    await h.putAgent('narrow', { allowed_tools: ['calc_eval'] });
    const runId = await h.submit('@call clock_now {}\n@call calc_eval {"expression":"1+1"}', {
      agent: 'narrow',
    });
    await h.wait(runId);
    assert.deepEqual(codes(await h.store.loadEntries(runId)), ['TOOL_NOT_ALLOWED', null]);
  });

  it('ToolContext: tenant, agent, scope, run id, call id, key = <run_id>:<call_id>, deadline', async () => {
    const runId = await h.submit('@call test_read {}', { scope: 'ctx' });
    const run = await h.wait(runId);
    const [result] = results(await h.store.loadEntries(runId));
    const seen = result?.result as Record<string, unknown>;
    assert.equal(seen.key, `${runId}:call_1_1`);
    assert.equal(seen.run_id, runId);
    assert.equal(seen.call_id, 'call_1_1');
    assert.equal(seen.where, `${TENANT}/a/ctx`);
    // tool_timeout_ms (300) is the nearer deadline here.
    assert.ok((seen.deadline_in_ms as number) > 0 && (seen.deadline_in_ms as number) <= 300);
    assert.equal(run.usage.tool_calls, 1);
  });

  it('@parallel: all calls in one step, run in order, one result each', async () => {
    const script = [
      '@parallel',
      '@call calc_eval {"expression":"1+1"}',
      '@call test_read {}',
      '@call calc_eval {"expression":"2+2"}',
    ].join('\n');
    const runId = await h.submit(script, { scope: 'parallel' });
    const run = await h.wait(runId);
    assert.equal(run.steps, 2);
    assert.equal(run.usage.tool_calls, 3);
    const entries = await h.store.loadEntries(runId);
    assert.deepEqual(
      entries.map((entry) => entry.kind),
      ['user', 'assistant', 'tool_result', 'tool_result', 'tool_result', 'assistant'],
    );
    assert.deepEqual(
      results(entries).map((result) => result.call_id),
      ['call_1_1', 'call_1_2', 'call_1_3'],
    );
  });

  it('cancel while a tool runs: the tool is aborted and nothing more is written', async () => {
    const runId = await h.submit('@call test_slow {"ms": 20000}', { scope: 'cancel' });
    const deadline = Date.now() + 5000;
    while (!(await h.trace(runId)).some((event) => event.type === 'tool.call')) {
      assert.ok(Date.now() < deadline, 'the tool started');
      await delay(10);
    }
    await h.store.cancelRun(TENANT, runId, 'test');
    const run = await h.wait(runId);
    assert.equal(run.status, 'cancelled');
    await delay(50);
    assert.ok(aborts.includes('call_1_1'));
    const entries = await h.store.loadEntries(runId);
    assert.deepEqual(results(entries), [], 'no result recorded after the cancel');
    const trace = types(await h.trace(runId));
    assert.equal(trace[trace.length - 1], 'run.cancelled');
    assert.equal(run.output, null);
  });

  it('the run deadline clamps the tool deadline: the call ends, the run fails RUN_TIMEOUT', async () => {
    await h.putAgent('short', { ...VISIBLE, timeout_ms: 1000, tool_timeout_ms: 60_000 });
    const started = Date.now();
    const runId = await h.submit('@call test_slow {"ms": 20000}', { agent: 'short' });
    const run = await h.wait(runId);
    assert.equal(run.error?.code, 'RUN_TIMEOUT');
    assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
    const [result] = results(await h.store.loadEntries(runId));
    assert.ok(['TOOL_TIMEOUT', 'TOOL_ABORTED'].includes(result?.error?.code ?? ''));
  });

  it('output_schema after tool rounds: a matching @json answer succeeds', async () => {
    await h.putAgent('typed', {
      ...VISIBLE,
      output_schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
    });
    const runId = await h.submit('@call calc_eval {"expression":"2+3"}\n@json {"n": 5}', {
      agent: 'typed',
    });
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded');
    assert.deepEqual(run.output, { n: 5 });
    assert.equal(run.steps, 2);
  });
});

describe('loop: tool execution unit', () => {
  const registry = createToolRegistry([...builtinTools(), ...testTools]);
  function env(signal: AbortSignal): ToolCallEnv {
    return {
      registry,
      agent: {
        ...AGENT_DEFAULTS,
        ...VISIBLE,
        tenant: 't',
        name: 'a',
        created_at: '',
        updated_at: '',
      },
      run: { tenant: 't', agent: 'a', scope: 's', run_id: 'r1' },
      ports: { now: () => new Date() },
      signal,
      runDeadline: Date.now() + 60_000,
      now: Date.now,
    };
  }

  it('the run signal aborting mid-call gives TOOL_ABORTED', async () => {
    const controller = new AbortController();
    const call = { call_id: 'c1', name: 'test_slow', arguments: '{"ms": 10000}' };
    const prepared = prepareCall(call, env(controller.signal));
    assert.equal(prepared.kind, 'ready');
    if (prepared.kind !== 'ready') return;
    setTimeout(() => controller.abort('cancelled'), 30);
    const result = await executeCall(call, prepared.tool, prepared.input, env(controller.signal));
    assert.equal(result.error?.code, 'TOOL_ABORTED');
  });

  it('empty argument text counts as {}', () => {
    const call = { call_id: 'c2', name: 'clock_now', arguments: '' };
    assert.equal(prepareCall(call, env(new AbortController().signal)).kind, 'ready');
  });

  it('unansweredCalls finds a call without a result before the next assistant entry', () => {
    const base = { run_id: 'r', attempt: 1, ts: '' };
    const assistant = (seq: number, ids: string[]): RunEntry => ({
      ...base,
      seq,
      kind: 'assistant',
      body: {
        text: '',
        tool_calls: ids.map((id) => ({ call_id: id, name: 'x', arguments: '{}' })),
        usage: { input_tokens: 0, output_tokens: 0 },
        finish_reason: 'tool_calls',
        model: 'm',
      },
    });
    const result = (seq: number, id: string): RunEntry => ({
      ...base,
      seq,
      kind: 'tool_result',
      body: { call_id: id, name: 'x', ok: true, result: null, duration_ms: 0 },
    });
    assert.deepEqual(unansweredCalls([assistant(1, ['a', 'b']), result(2, 'a')]), ['b']);
    assert.deepEqual(unansweredCalls([assistant(1, ['a']), assistant(2, ['c']), result(3, 'c')]), [
      'a',
    ]);
    assert.deepEqual(unansweredCalls([assistant(1, ['a']), result(2, 'a')]), []);
  });
});

describe('loop: resume rules for calls left in flight', () => {
  let h: Harness;
  before(async () => {
    h = await openHarness({
      idle: true,
      leaseMs: 60_000,
      tools: createToolRegistry([...builtinTools(), ...testTools]),
    });
    await h.putAgent('tell', { ...VISIBLE, on_uncertain_effect: 'tell_model' });
    await h.putAgent('fail', { ...VISIBLE, on_uncertain_effect: 'fail' });
  });
  after(async () => {
    await h.close();
  });

  interface Staged {
    runId: string;
    attempt: number;
  }

  /**
   * A crashed attempt 1: the user entry, the assistant entry with one call and — when
   * `started` — that call's `tool.call` event (the intent record), optionally its result;
   * the lease stays held until release() so the stages do not claim each other's runs.
   */
  async function stage(
    agent: string,
    tool: string,
    options: { started: boolean; recorded?: boolean; elapsedMs?: number },
  ): Promise<Staged> {
    const text = `@call ${tool} {}`;
    const runId = await h.submit(text, { agent, scope: `${agent}-${tool}-${Math.random()}` });
    const claimed = await h.store.claimNextRun({ owner: 'crashed', lease_ms: 60_000 });
    assert.equal(claimed?.run.run_id, runId);
    const fence = { run_id: runId, attempt: 1 };
    await h.store.appendProgress(fence, {
      entries: [
        { kind: 'user', body: { text, payload: { text } } },
        {
          kind: 'assistant',
          body: {
            text: '',
            tool_calls: [{ call_id: 'call_1_1', name: tool, arguments: '{}' }],
            usage: { input_tokens: 1, output_tokens: 1 },
            finish_reason: 'tool_calls',
            model: 'fixture/echo',
          },
        },
      ],
      steps: 1,
      usage: { input_tokens: 1, output_tokens: 1, model_calls: 1, tool_calls: 0 },
      ...(options.elapsedMs !== undefined && { elapsed_ms: options.elapsedMs }),
    });
    if (options.started) {
      await h.store.appendProgress(fence, {
        events: [
          {
            type: 'tool.call',
            data: { step: 1, call_id: 'call_1_1', name: tool, attempt: 1 },
          },
        ],
      });
    }
    if (options.recorded) {
      await h.store.appendProgress(fence, {
        entries: [
          {
            kind: 'tool_result',
            body: { call_id: 'call_1_1', name: tool, ok: true, result: { old: 1 }, duration_ms: 1 },
          },
        ],
      });
    }
    return { runId, attempt: 1 };
  }

  let staged: Record<string, Staged>;

  before(async () => {
    executions.clear();
    staged = {
      readOnly: await stage('tell', 'test_read', { started: true }),
      idempotent: await stage('tell', 'test_put', { started: true }),
      effectfulTell: await stage('tell', 'test_effect', { started: true }),
      effectfulFail: await stage('fail', 'test_effect', { started: true }),
      notStarted: await stage('fail', 'test_put', { started: false }),
      recorded: await stage('fail', 'test_read', { started: true, recorded: true }),
    };
    // The crashed worker's leases end; a new worker claims and resumes each run.
    for (const { runId, attempt } of Object.values(staged)) {
      assert.ok(await h.store.heartbeat({ run_id: runId, attempt }, 0));
    }
    h.worker.start();
  });

  async function resumed(runId: string): Promise<Record<string, unknown>> {
    const event = (await h.trace(runId)).find((e) => e.type === 'run.resumed');
    assert.ok(event, 'run.resumed recorded');
    return event.data;
  }

  it('read_only in flight: re-run with the same key, listed as rerun', async () => {
    const { runId } = staged.readOnly as Staged;
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded');
    assert.equal(run.attempt, 2);
    const data = await resumed(runId);
    assert.deepEqual(data.rerun_calls, ['call_1_1']);
    assert.deepEqual(data.uncertain_calls, []);
    assert.equal(data.entries_loaded, 2);
    const [result] = results(await h.store.loadEntries(runId));
    assert.equal((result?.result as Record<string, unknown>).key, `${runId}:call_1_1`);
  });

  it('idempotent in flight: re-run once, with the same idempotency key', async () => {
    const { runId } = staged.idempotent as Staged;
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded');
    assert.deepEqual((await resumed(runId)).rerun_calls, ['call_1_1']);
    const keys = (executions.get('test_put') ?? []).filter((key) => key.startsWith(runId));
    assert.deepEqual(keys, [`${runId}:call_1_1`]);
    // The re-run wrote a second intent: the trace shows the call ran twice in all.
    const calls = (await h.trace(runId)).filter((e) => e.type === 'tool.call');
    assert.deepEqual(
      calls.map((e) => e.data.attempt),
      [1, 2],
    );
  });

  it('effectful in flight + tell_model: OUTCOME_UNKNOWN for the model, never re-run', async () => {
    const { runId } = staged.effectfulTell as Staged;
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded');
    assert.deepEqual((await resumed(runId)).uncertain_calls, ['call_1_1']);
    const [result] = results(await h.store.loadEntries(runId));
    assert.deepEqual(result?.error, { code: 'OUTCOME_UNKNOWN', message: OUTCOME_UNKNOWN_MESSAGE });
    assert.equal(
      (executions.get('test_effect') ?? []).filter((key) => key.startsWith(runId)).length,
      0,
    );
    assert.match(String(run.output?.reply), /test_effect: OUTCOME_UNKNOWN/);
    assert.equal(run.usage.tool_calls, 0);
  });

  it('effectful in flight + fail: the run fails EFFECT_OUTCOME_UNKNOWN, never re-run', async () => {
    const { runId } = staged.effectfulFail as Staged;
    const run = await h.wait(runId);
    assert.equal(run.status, 'failed');
    assert.equal(run.error?.code, 'EFFECT_OUTCOME_UNKNOWN');
    assert.deepEqual((await resumed(runId)).uncertain_calls, ['call_1_1']);
    assert.equal(
      (executions.get('test_effect') ?? []).filter((key) => key.startsWith(runId)).length,
      0,
    );
  });

  it('a call with no tool.call event never started: it simply runs (even under "fail")', async () => {
    const { runId } = staged.notStarted as Staged;
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded');
    const data = await resumed(runId);
    assert.deepEqual(data.not_started_calls, ['call_1_1']);
    assert.deepEqual(data.rerun_calls, []);
    assert.equal(
      (executions.get('test_put') ?? []).filter((key) => key.startsWith(runId)).length,
      1,
    );
  });

  it('a recorded call is never run again and its response never requested again', async () => {
    const { runId } = staged.recorded as Staged;
    const run = await h.wait(runId);
    assert.equal(run.status, 'succeeded');
    assert.equal(
      (executions.get('test_read') ?? []).filter((key) => key.startsWith(runId)).length,
      0,
    );
    const requests = h.model.requests.filter((r) => r.entries[0]?.run_id === runId);
    // One request after the resume (step 2), none for the recorded step 1.
    assert.equal(requests.length, 1);
    assert.equal(run.steps, 2);
    assert.match(String(run.output?.reply), /test_read: \{"old":1\}/);
  });
});

describe('loop: timeout_ms spans resumes', () => {
  it('a resumed run whose earlier attempts used up timeout_ms fails RUN_TIMEOUT at once', async () => {
    const h = await openHarness({ idle: true });
    try {
      await h.putAgent('a', { timeout_ms: 5000 });
      const runId = await h.submit('hello');
      const claimed = await h.store.claimNextRun({ owner: 'crashed', lease_ms: 60_000 });
      assert.equal(claimed?.run.run_id, runId);
      await h.store.appendProgress({ run_id: runId, attempt: 1 }, { elapsed_ms: 5200 });
      await h.store.heartbeat({ run_id: runId, attempt: 1 }, 0);
      h.worker.start();
      const run = await h.wait(runId);
      assert.equal(run.error?.code, 'RUN_TIMEOUT');
      assert.equal(run.usage.model_calls, 0, 'no model call after the deadline');
    } finally {
      await h.close();
    }
  });
});
