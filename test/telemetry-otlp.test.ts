// OpenTelemetry (docs/telemetry.md): spans of runs exported over OTLP/HTTP to a real
// loopback receiver — one trace per run, run → step → model/tool nesting, the GenAI
// `gen_ai.*` attributes, trace and span ids on the run's events; a run resumed after
// kill -9 of a real `keel serve` continues the same trace; without an endpoint no
// exporter runs and the SDK is never imported.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../src/config.ts';
import type { RunEvent } from '../src/events.ts';
import { createOtelTracer } from '../src/telemetry/otel-tracer.ts';
import type { Agent, Run } from '../src/types.ts';
import { agentSpec } from './helpers/agent-spec.ts';
import { loadRunTracer } from '../src/telemetry/load.ts';
import { noopTracer } from '../src/runtime/tracer.ts';
import { runSpanId, runTraceId } from '../src/telemetry/trace-ids.ts';
import type { OtlpReceiver, ReceivedSpan } from './helpers/otlp-receiver.ts';
import { startOtlpReceiver } from './helpers/otlp-receiver.ts';
import {
  TENANT,
  call,
  cleanup,
  serve,
  setupTenant,
  tempDir,
  waitTerminal,
} from './helpers/crash-harness.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import { settledWithin, waitFor } from './helpers/wait-for.ts';

const IMPORT_WATCH = new URL('./helpers/import-watch.mjs', import.meta.url).pathname;

function telemetryToml(receiver: OtlpReceiver): string {
  return [
    '[memory]',
    'embedder = "hash"',
    '[telemetry]',
    `otlp_endpoint = "${receiver.url}/v1/traces"`,
    'service_name = "keel-test"',
    'export_delay_ms = 50',
    'headers = { "x-test" = "1" }',
    '',
  ].join('\n');
}

function byName(spans: ReceivedSpan[], prefix: string): ReceivedSpan[] {
  return spans.filter((span) => span.name.startsWith(prefix));
}

async function turn(url: string, scope: string, text: string): Promise<string> {
  const submitted = await call(url, 'POST', `/v1/tenants/${TENANT}/turns`, {
    agent: 'a',
    scope,
    payload: { text },
  });
  assert.equal(submitted.status, 202, JSON.stringify(submitted.body));
  return submitted.body.run_id as string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function traceEvents(url: string, runId: string): Promise<any[]> {
  const trace = await call(url, 'GET', `/v1/tenants/${TENANT}/runs/${runId}/trace`);
  return trace.body.events;
}

describe('telemetry: OTLP export', () => {
  let receiver: OtlpReceiver;
  before(async () => {
    receiver = await startOtlpReceiver();
  });
  after(async () => {
    await receiver.close();
    cleanup();
  });

  test('no endpoint: the SDK is not imported (the importer is never called)', async () => {
    let imports = 0;
    const importer = () => {
      imports += 1;
      return Promise.reject(new Error('must not be imported'));
    };
    const settings = { headers: {}, service_name: 'keel', export_delay_ms: 1000 };
    const tracer = await loadRunTracer({ ...settings, otlp_endpoint: null }, importer);
    assert.equal(tracer, noopTracer);
    assert.equal(imports, 0);
    await assert.rejects(
      loadRunTracer({ ...settings, otlp_endpoint: 'http://127.0.0.1:1/v1/traces' }, importer),
    );
    assert.equal(imports, 1);
  });

  test('[telemetry] config: headers_env read from the env, a missing variable or a bad URL refused', () => {
    const dir = tempDir('keel-otel-config-');
    const configPath = join(dir, 'keel.toml');
    const load = (toml: string, env: NodeJS.ProcessEnv = {}) => {
      writeFileSync(configPath, toml);
      return loadConfig({ config: configPath, data_dir: dir }, env, dir).telemetry;
    };
    assert.deepEqual(load(''), {
      otlp_endpoint: null,
      headers: {},
      service_name: 'keel',
      export_delay_ms: 1000,
    });
    const toml = [
      '[telemetry]',
      'otlp_endpoint = "https://otel.example/v1/traces"',
      'headers = { "x-a" = "1" }',
      'headers_env = { authorization = "OTLP_AUTH" }',
    ].join('\n');
    const settings = load(toml, { OTLP_AUTH: 'Bearer s3cret' });
    assert.equal(settings.otlp_endpoint, 'https://otel.example/v1/traces');
    assert.deepEqual(settings.headers, { 'x-a': '1', authorization: 'Bearer s3cret' });
    assert.throws(() => load(toml), /telemetry\.headers_env\.authorization: .*OTLP_AUTH/);
    assert.throws(
      () => load('[telemetry]\notlp_endpoint = "ftp://otel.example/v1/traces"'),
      /telemetry\.otlp_endpoint/,
    );
    assert.throws(() => load('[telemetry]\nendpoint = "x"'), /unknown key "telemetry\.endpoint"/);
  });

  test('tracer: a crashed and a waiting attempt leave the run span open; the final one ends it', async () => {
    const tracer = createOtelTracer({
      otlp_endpoint: `${receiver.url}/v1/traces`,
      headers: {},
      service_name: 'unit',
      export_delay_ms: 10,
    });
    const runId = 'run-unit-1';
    const now = new Date().toISOString();
    const agent: Agent = {
      ...agentSpec(),
      tenant: 't',
      name: 'a',
      created_at: now,
      updated_at: now,
    };
    const usage = { input_tokens: 7, output_tokens: 3, model_calls: 1, tool_calls: 1 };
    const run = {
      run_id: runId,
      tenant: 't',
      agent: 'a',
      scope: 's',
      created_at: now,
      usage,
    } as Run;
    const figures = { steps: 1, usage, elapsed_ms: 5 };
    const assistant = {
      text: '',
      tool_calls: [{ call_id: 'c1', name: 'clock_now', arguments: '{}' }],
      usage: { input_tokens: 7, output_tokens: 3 },
      finish_reason: 'tool_calls',
      model: 'echo-1',
    };
    const events: RunEvent[] = [
      {
        type: 'model.response',
        data: { step: 1, usage: assistant.usage, latency_ms: 1, finish_reason: 'tool_calls' },
      },
      { type: 'tool.call', data: { step: 1, call_id: 'c1', name: 'clock_now', attempt: 1 } },
      { type: 'run.note', data: { text: 'n' } },
    ];
    // Attempt 1 crashes after its tool call; attempt 2 waits for an approval.
    const first = tracer.attempt({ ...run, attempt: 1 }, agent);
    first.modelStarted(1, { provider: 'fixture', model: 'echo', agent });
    first.modelEnded({ kind: 'response', assistant });
    first.toolStarted(1, { call_id: 'c1', name: 'clock_now', effect: 'read_only' });
    const stamped = first.stamp(events);
    first.toolEnded({
      call_id: 'c1',
      name: 'clock_now',
      ok: false,
      error: { code: 'TOOL_TIMEOUT', message: 'secret text' },
      duration_ms: 1,
    });
    first.ended({ status: 'stopped', cause: 'crashed' }, figures);
    tracer
      .attempt({ ...run, attempt: 2 }, agent)
      .ended({ status: 'stopped', cause: 'waiting' }, figures);
    await waitFor(
      "the first attempt's spans",
      () => receiver.spans.filter((span) => span.traceId === runTraceId(runId)).length >= 3,
    );
    const spanOf = (name: string) =>
      receiver.spans.find((s) => s.traceId === runTraceId(runId) && s.name === name);
    assert.equal(spanOf('invoke_agent a'), undefined, 'no run span while the run goes on');
    const step = spanOf('step 1');
    const chat = spanOf('chat echo');
    const tool = spanOf('execute_tool clock_now');
    assert.equal(step?.parentSpanId, runSpanId(runId));
    assert.equal(chat?.parentSpanId, step?.spanId);
    assert.equal(tool?.parentSpanId, step?.spanId);
    assert.equal(chat?.attributes['gen_ai.response.model'], 'echo-1');
    assert.equal(tool?.attributes['error.type'], 'TOOL_TIMEOUT');
    assert.equal(tool?.status.message, 'TOOL_TIMEOUT', 'the code, never the message');
    // Copies with ids: the model call's span, the tool call's span, the step's span.
    assert.deepEqual(
      stamped.map((event) => (event.data as { span_id?: string }).span_id),
      [chat?.spanId, tool?.spanId, step?.spanId],
    );
    assert.ok(
      stamped.every(
        (event) => (event.data as { trace_id?: string }).trace_id === runTraceId(runId),
      ),
    );
    assert.ok(
      events.every((event) => !('trace_id' in event.data)),
      'the originals untouched',
    );

    // Attempt 3 ends the run: the run span, with the derived ids, in the same trace.
    tracer.attempt({ ...run, attempt: 3 }, agent).ended({ status: 'succeeded' }, figures);
    await tracer.shutdown();
    const root = spanOf('invoke_agent a');
    assert.equal(root?.spanId, runSpanId(runId));
    assert.equal(root?.parentSpanId, '');
    assert.equal(root?.attributes['keel.attempts'], 3);
    assert.equal(root?.service, 'unit');
  });

  test('one trace per run: run → step → chat/execute_tool, gen_ai.* attributes, ids on events', async () => {
    const keel = await startTestKeel({ toml: telemetryToml(receiver) });
    let runId: string;
    let otherId: string;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let run: any;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let events: any[];
    try {
      await setupTenant(keel.url);
      const text = '@call clock_now {}\n@call calc_eval {"expression":"6*7"}\ntraced';
      runId = await turn(keel.url, 'otel-1', text);
      assert.equal(await waitTerminal(keel.url, runId), 'succeeded');
      // A provider error that is not retried: the run fails PROVIDER_ERROR.
      otherId = await turn(keel.url, 'otel-2', '@fail 1 400\na failing run');
      assert.equal(await waitTerminal(keel.url, otherId), 'failed');
      const got = (await call(keel.url, 'GET', `/v1/tenants/${TENANT}/runs/${runId}`)).body;
      run = got.run ?? got;
      events = await traceEvents(keel.url, runId);
    } finally {
      await keel.close(); // flushes the exporter
    }
    const traceId = runTraceId(runId);
    const spans = receiver.spans.filter((span) => span.traceId === traceId);
    console.log(`received ${receiver.spans.length} spans; run ${runId}: ${spans.length}`);
    // One trace per run: every span naming the run is in its trace, the other run has its own.
    const ofRun = receiver.spans.filter((span) => span.attributes['keel.run_id'] === runId);
    assert.ok(ofRun.length > 0 && ofRun.every((span) => span.traceId === traceId));
    assert.notEqual(runTraceId(otherId), traceId);
    assert.ok(receiver.spans.some((span) => span.traceId === runTraceId(otherId)));

    // The failed run: its run span and its model call say so, by error code only.
    const failed = receiver.spans.filter((span) => span.traceId === runTraceId(otherId));
    const failedRoot = byName(failed, 'invoke_agent')[0];
    assert.equal(failedRoot?.status.code, 2); // ERROR
    assert.equal(failedRoot?.attributes['error.type'], 'PROVIDER_ERROR');
    assert.equal(failedRoot?.attributes['keel.run.status'], 'failed');
    assert.equal(byName(failed, 'chat ')[0]?.attributes['error.type'], 'PROVIDER_ERROR');

    const roots = byName(spans, 'invoke_agent');
    assert.equal(roots.length, 1);
    const root = roots[0] as ReceivedSpan;
    assert.equal(root.name, 'invoke_agent a');
    assert.equal(root.parentSpanId, '');
    assert.equal(root.spanId, runSpanId(runId));
    assert.equal(root.service, 'keel-test');
    assert.equal(root.attributes['gen_ai.operation.name'], 'invoke_agent');
    assert.equal(root.attributes['gen_ai.agent.name'], 'a');
    assert.equal(root.attributes['gen_ai.request.model'], 'fixture/echo');
    assert.equal(root.attributes['keel.run.status'], 'succeeded');
    assert.equal(root.attributes['gen_ai.usage.input_tokens'], run.usage.input_tokens);
    assert.equal(root.attributes['gen_ai.usage.output_tokens'], run.usage.output_tokens);

    const steps = byName(spans, 'step ');
    assert.deepEqual(steps.map((span) => span.attributes['keel.step']).sort(), [1, 2, 3]);
    for (const step of steps) assert.equal(step.parentSpanId, root.spanId);
    const stepOf = (span: ReceivedSpan) => steps.find((step) => step.spanId === span.parentSpanId);

    const chats = byName(spans, 'chat ');
    assert.equal(chats.length, 3);
    let inputTokens = 0;
    for (const chat of chats) {
      assert.equal(chat.name, 'chat echo');
      assert.equal(stepOf(chat)?.attributes['keel.step'], chat.attributes['keel.step']);
      assert.equal(chat.kind, 3); // CLIENT
      assert.equal(chat.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(chat.attributes['gen_ai.system'], 'fixture');
      assert.equal(chat.attributes['gen_ai.request.model'], 'echo');
      assert.equal(typeof chat.attributes['gen_ai.response.model'], 'string');
      assert.equal(typeof chat.attributes['gen_ai.usage.output_tokens'], 'number');
      assert.ok(Array.isArray(chat.attributes['gen_ai.response.finish_reasons']));
      inputTokens += chat.attributes['gen_ai.usage.input_tokens'] as number;
    }
    assert.equal(inputTokens, run.usage.input_tokens);

    const tools = byName(spans, 'execute_tool ');
    assert.deepEqual(
      tools
        .map((span) => [span.attributes['gen_ai.tool.name'], stepOf(span)?.attributes['keel.step']])
        .sort(),
      [
        ['calc_eval', 2],
        ['clock_now', 1],
      ],
    );
    for (const tool of tools) {
      assert.equal(tool.attributes['gen_ai.operation.name'], 'execute_tool');
      assert.equal(typeof tool.attributes['gen_ai.tool.call.id'], 'string');
      assert.equal(tool.status.code, 0);
    }
    // No message content leaves the process: no attribute holds the turn's text.
    for (const span of spans) {
      assert.ok(!JSON.stringify(span.attributes).includes('traced'), span.name);
    }

    // Trace and span ids on the run's events name the spans received.
    const spanIds = new Set(spans.map((span) => span.spanId));
    const stamped = events.filter((event) => event.data.trace_id !== undefined);
    assert.ok(stamped.length >= 8, `stamped ${stamped.length} of ${events.length}`);
    for (const event of stamped) {
      assert.equal(event.data.trace_id, traceId);
      assert.ok(spanIds.has(event.data.span_id), `${event.type} ${event.data.span_id}`);
    }
    for (const event of events.filter((e) => e.type === 'model.response')) {
      const chat = chats.find((span) => span.spanId === event.data.span_id);
      assert.equal(chat?.attributes['keel.step'], event.data.step);
    }
    for (const event of events.filter((e) => e.type === 'tool.result')) {
      const tool = tools.find((span) => span.spanId === event.data.span_id);
      assert.equal(tool?.attributes['gen_ai.tool.call.id'], event.data.call_id);
    }
  });

  test('a run resumed after kill -9 of keel serve continues the same trace', async () => {
    const dataDir = tempDir('keel-otel-');
    const configPath = join(dataDir, 'keel.toml');
    writeFileSync(configPath, telemetryToml(receiver));
    const importLog = join(dataDir, 'imports.log');
    const env = {
      KEEL_CONFIG: configPath,
      NODE_OPTIONS: `--import ${IMPORT_WATCH}`,
      IMPORT_WATCH_LOG: importLog,
    };
    // Killed right after the second model response, before it is journaled: step 2's
    // model call runs again in the second attempt. @sleep gives step 1's spans time to go.
    const doomed = await serve(dataDir, {
      ...env,
      KEEL_TEST_FAILPOINTS: '1',
      KEEL_FAILPOINTS: 'model.after_response=2*kill',
    });
    await setupTenant(doomed.url);
    const runId = await turn(doomed.url, 'otel-crash', '@call clock_now {}\n@sleep 1500\nresumed');
    const traceId = runTraceId(runId);
    const killed = await settledWithin(doomed.exited, 30_000);
    if (killed?.signal !== 'SIGKILL') await doomed.kill();
    assert.equal(killed?.signal, 'SIGKILL', 'the fault point killed keel serve');
    const beforeKill = receiver.spans.filter((span) => span.traceId === traceId);
    console.log(`spans of attempt 1 exported before the kill: ${beforeKill.length}`);

    const restarted = await serve(dataDir, env);
    let events;
    try {
      assert.equal(await waitTerminal(restarted.url, runId), 'succeeded');
      events = await traceEvents(restarted.url, runId);
    } finally {
      await restarted.terminate(); // SIGTERM: flushes the exporter
    }
    await waitFor('the run span is received', () =>
      receiver.spans.some((span) => span.spanId === runSpanId(runId)),
    );
    const spans = receiver.spans.filter((span) => span.traceId === traceId);
    const summary = spans.map((s) => `${s.name}@${String(s.attributes['keel.attempt'] ?? '-')}`);
    console.log(`run ${runId}: ${spans.length} spans in its trace: ${summary.join(', ')}`);

    const roots = byName(spans, 'invoke_agent');
    assert.equal(roots.length, 1);
    const root = roots[0] as ReceivedSpan;
    assert.equal(root.attributes['keel.attempts'], 2);
    assert.equal(root.attributes['keel.run.status'], 'succeeded');
    const steps = byName(spans, 'step ');
    for (const step of steps) assert.equal(step.parentSpanId, root.spanId);
    const attempts = new Set(steps.map((step) => step.attributes['keel.attempt']));
    assert.deepEqual([...attempts].sort(), [1, 2], 'steps of both attempts in one trace');
    const stepOne = steps.find(
      (s) => s.attributes['keel.attempt'] === 1 && s.attributes['keel.step'] === 1,
    );
    assert.ok(stepOne, 'step 1 of the killed attempt was exported');
    const tool = byName(spans, 'execute_tool clock_now')[0];
    assert.equal(tool?.parentSpanId, stepOne.spanId);
    const resumedChats = byName(spans, 'chat ').filter((chat) => {
      const parent = steps.find((step) => step.spanId === chat.parentSpanId);
      return parent?.attributes['keel.attempt'] === 2;
    });
    assert.ok(resumedChats.length >= 1, "the resumed attempt's model calls are in the trace");
    for (const span of spans.filter((s) => s !== root)) assert.notEqual(span.parentSpanId, '');

    const resumed = events.find((event: { type: string }) => event.type === 'run.resumed');
    assert.equal(resumed?.data.trace_id, traceId);
    assert.equal(resumed?.data.span_id, root.spanId);
    // The positive control of the import watch: with an endpoint the SDK was imported.
    assert.match(readFileSync(importLog, 'utf8'), /@opentelemetry\/sdk-trace-base/);
  });

  test('no endpoint: keel serve never imports the SDK and exports nothing, OTEL_* env or not', async () => {
    const dataDir = tempDir('keel-otel-off-');
    const configPath = join(dataDir, 'keel.toml');
    writeFileSync(configPath, '[memory]\nembedder = "hash"\n');
    const importLog = join(dataDir, 'imports.log');
    const before = receiver.requests;
    const served = await serve(dataDir, {
      KEEL_CONFIG: configPath,
      NODE_OPTIONS: `--import ${IMPORT_WATCH}`,
      IMPORT_WATCH_LOG: importLog,
      // The SDK's own env variables point at the receiver: keel must not act on them.
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
      OTEL_BSP_SCHEDULE_DELAY: '10',
    });
    try {
      await setupTenant(served.url);
      const runId = await turn(served.url, 'otel-off', '@call clock_now {}\nuntraced');
      assert.equal(await waitTerminal(served.url, runId), 'succeeded');
      const events = await traceEvents(served.url, runId);
      assert.ok(events.every((event: { data: object }) => !('trace_id' in event.data)));
    } finally {
      await served.terminate();
    }
    assert.equal(receiver.requests, before, 'no export request');
    const imported = existsSync(importLog) ? readFileSync(importLog, 'utf8') : '';
    assert.equal(imported, '', 'no @opentelemetry module was imported');
  });
});
