// memory_flush (docs/compaction.md): before a compaction folds turns, one journaled model
// call writes lasting facts from them to memory through memory_put. A long conversation
// with it on: facts in memory before each fold, the answers unchanged, one flush per
// compaction; with it off nothing is written. A recorded flush is never asked again (its
// recorded calls run on resume); PUT refuses memory_flush for an agent without memory_put.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ModelRequest, Provider } from '../src/providers/provider.ts';
import { MEMORY_FLUSH_MARKER, SUMMARY_REQUEST_MARKER } from '../src/providers/provider.ts';
import { createFixtureProvider } from '../src/providers/fixture.ts';
import { startFixtureServer } from '../src/providers/fixture-server.ts';
import { EventPrinter } from '../src/cli/event-printer.ts';
import { RunControl } from '../src/runtime/run-control.ts';
import { toolCallEnv, toolDefinitions } from '../src/runtime/tool-step.ts';
import type { MemoryFlushDeps } from '../src/runtime/memory-flush.ts';
import { memoryFlush, memoryFlushProblem } from '../src/runtime/memory-flush.ts';
import { builtinTools } from '../src/tools/builtin/index.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import { createMetrics } from '../src/metrics.ts';
import { MaintenanceScans } from '../src/memory/maintenance.ts';
import { createMemoryService } from '../src/memory/service.ts';
import { createHashEmbedder } from '../src/memory/embedders/hash.ts';
import type { PortScope } from '../src/runtime/tool-ports.ts';
import { createToolPorts } from '../src/runtime/tool-ports.ts';
import type { Agent, EntryBody, Run, RunEntry } from '../src/types.ts';
import type { RunEvent } from '../src/events.ts';
import { startTestKeel } from './helpers/keel-server.ts';
import type { Harness } from './runtime-harness.ts';
import { AGENT_DEFAULTS, TENANT, openHarness } from './runtime-harness.ts';

const WORDS = ['harbour', 'ledger', 'violet', 'quartz', 'meadow', 'copper', 'lantern', 'orbit'];

function longText(seed: number, chars: number): string {
  const words: string[] = [`turn ${seed}:`];
  for (let i = 0, length = 0; length < chars; i++) {
    const word = WORDS[(seed * 3 + i * 5 + ((i * i) % 7)) % WORDS.length] as string;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ');
}

const flushing = (request: ModelRequest) => request.system.startsWith(MEMORY_FLUSH_MARKER);
const summarising = (request: ModelRequest) => request.system.startsWith(SUMMARY_REQUEST_MARKER);

async function facts(h: Harness): Promise<string[]> {
  const page = await h.store.listMemory(TENANT, 'default', 100);
  return page.items.map((fact) => fact.text);
}

async function conversation(h: Harness, agent: string, scope: string, turns: number) {
  const first = h.model.requests.length;
  const traces = [];
  for (let turn = 1; turn <= turns; turn++) {
    const text = longText(turn, 500);
    const run = await h.wait(await h.submit(text, { agent, scope }), 20_000);
    assert.equal(run.status, 'succeeded', JSON.stringify(run.error));
    assert.deepEqual(run.output, { reply: `echo: ${text}` }, 'the answer is unaffected');
    traces.push(await h.trace(run.run_id));
  }
  return { traces, requests: h.model.requests.slice(first) };
}

describe('memory_flush', () => {
  let h: Harness;
  const scans = new MaintenanceScans();
  // The memory tools need the memory service (as in main.ts), over the harness's store.
  const ports = (scope: PortScope) => {
    const service = createMemoryService({ store: h.store, embedder: createHashEmbedder() });
    return createToolPorts({ store: h.store, memory: { service, scans } }, scope);
  };
  before(async () => {
    h = await openHarness({ toolPorts: ports });
  });
  after(async () => {
    await h.close();
  });

  it('off: compactions happen, nothing is written to memory', async () => {
    const spec = { context_tokens: 1_500, context_window: 1000, allowed_families: ['memory'] };
    await h.putAgent('off', spec);
    const { traces, requests } = await conversation(h, 'off', 'off', 10);
    const compactions = traces.flat().filter((e) => e.type === 'context.compacted').length;
    assert.ok(compactions >= 1, `${compactions} compactions`);
    assert.equal(requests.filter(flushing).length, 0);
    assert.equal(traces.flat().filter((e) => e.type.startsWith('memory.flush')).length, 0);
    assert.deepEqual(await facts(h), []);
  });

  it('on: one flush before each fold writes the folded turns to memory; answers unchanged', async () => {
    const spec = { context_tokens: 1_500, context_window: 1000, allowed_families: ['memory'] };
    await h.putAgent('on', { ...spec, memory_flush: true });
    const { traces, requests } = await conversation(h, 'on', 'on', 10);
    let compactions = 0;
    for (const events of traces) {
      const compacted = events.filter((e) => e.type === 'context.compacted');
      const flush = events.filter((e) => e.type === 'memory.flush');
      const flushed = events.filter((e) => e.type === 'memory.flushed');
      compactions += compacted.length;
      assert.equal(flush.length, compacted.length, 'one flush call per compaction');
      assert.equal(flushed.length, compacted.length);
      compacted.forEach((event, i) => {
        const call = flush[i];
        const done = flushed[i];
        assert.ok(call && done);
        assert.equal(call.data.step, event.data.step);
        assert.equal(call.data.from_run_id, event.data.from_run_id);
        assert.ok(call.seq < done.seq && done.seq < event.seq, 'flushed before the fold');
        assert.deepEqual(done.data.results, [{ call_id: 'flush_1', name: 'memory_put', ok: true }]);
      });
    }
    assert.ok(compactions >= 1, `${compactions} compactions`);
    const flushRequests = requests.filter(flushing);
    assert.equal(flushRequests.length, compactions, 'the flush call is made once per fold');
    assert.equal(requests.filter(summarising).length, compactions);
    for (const request of flushRequests) {
      assert.deepEqual(
        request.tools.map((tool) => tool.name),
        ['memory_put'],
      );
    }
    // The flush's text never reaches the model's turns: no turn request carries a flush note.
    for (const request of requests.filter((r) => !flushing(r) && !summarising(r))) {
      assert.ok(request.entries.every((entry) => entry.kind !== 'note'));
    }
    const stored = await facts(h);
    const firstFact = `the user said: ${JSON.stringify(longText(1, 500).slice(0, 60))}`;
    assert.ok(stored.includes(firstFact), `facts: ${JSON.stringify(stored)}`);
    assert.equal(stored.length, compactions, 'one fact per flush');
    const thread = await h.store.getThread(TENANT, 'on', 'on');
    assert.equal(thread?.messages[0]?.summary, true);
    console.log(
      `memory_flush 10 turns: compactions=${compactions} flush_calls=${flushRequests.length} facts=${stored.length}`,
    );
  });

  it('a recorded flush is never asked again; recorded calls run on resume (idempotent)', async () => {
    let modelCalls = 0;
    const inner = createFixtureProvider();
    const provider: Provider = {
      name: 'fixture',
      complete: (request) => {
        modelCalls += 1;
        return inner.complete(request);
      },
    };
    const registry = createToolRegistry(builtinTools());
    const agent = { ...AGENT_DEFAULTS, memory_flush: true, tenant: TENANT, name: 'x' } as Agent;
    const control = new RunControl();
    const run = { tenant: TENANT, agent: 'x', scope: 'r', run_id: 'run_resume' } as Run;
    const written: EntryBody[] = [];
    const events: RunEvent[] = [];
    const deps: MemoryFlushDeps = {
      resolved: { provider, model: 'echo' },
      agent,
      tools: toolDefinitions(registry, agent),
      env: () =>
        toolCallEnv({ store: h.store, toolPorts: ports }, run, agent, registry, control, {
          now: Date.now,
          runDeadline: Date.now() + 10_000,
        }),
      control,
      metrics: createMetrics(),
      now: Date.now,
      figures: {
        steps: 0,
        elapsed_ms: 0,
        usage: { input_tokens: 0, output_tokens: 0, model_calls: 0, tool_calls: 0 },
      } as never,
      checkpoint: async (entries, evs) => {
        written.push(...entries);
        events.push(...evs);
      },
    };
    const plan = { step: 3, from_run_id: 'r1', through_run_id: 'r2', transcript: 'user: x' };
    const asEntries = (bodies: EntryBody[]): RunEntry[] =>
      bodies.map((body, seq) => ({ ...body, run_id: run.run_id, seq, attempt: 1, ts: '' }));
    // A `called` record from an earlier attempt: its calls run, no model call.
    const called: EntryBody = {
      kind: 'note',
      body: {
        text: '',
        memory_flush: {
          ...plan,
          phase: 'called',
          calls: [
            {
              call_id: 'flush_1',
              name: 'memory_put',
              arguments: JSON.stringify({ text: 'resumed fact' }),
            },
          ],
        },
      },
    };
    assert.equal(await memoryFlush(deps, asEntries([called]), plan), null);
    assert.equal(modelCalls, 0);
    assert.ok((await facts(h)).includes('resumed fact'));
    assert.deepEqual(
      events.map((e) => e.type),
      ['memory.flushed'],
    );
    // Done: nothing at all.
    const before = written.length;
    assert.equal(await memoryFlush(deps, asEntries([called, ...written]), plan), null);
    assert.equal(modelCalls, 0);
    assert.equal(written.length, before);
    // Another fold (other oldest turn): asked once.
    assert.equal(await memoryFlush(deps, asEntries(written), { ...plan, from_run_id: 'r0' }), null);
    assert.equal(modelCalls, 1);
  });

  it('PUT refuses memory_flush when the agent cannot use memory_put', async () => {
    assert.equal(memoryFlushProblem({ memory_flush: true }), null);
    assert.equal(memoryFlushProblem({ memory_flush: false, allowed_families: [] }), null);
    assert.match(
      memoryFlushProblem({ memory_flush: true, allowed_tools: ['memory_get'] }) ?? '',
      /body\.memory_flush/,
    );
    const keel = await startTestKeel({ toml: '[memory]\nembedder = "hash"\n' });
    try {
      const post = (method: string, path: string, body: unknown) =>
        fetch(`${keel.url}${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      await post('POST', '/v1/tenants', { name: 'mf' });
      const refused = await post('PUT', '/v1/tenants/mf/agents/a', {
        model: 'fixture/echo',
        memory_flush: true,
        allowed_families: [],
      });
      assert.equal(refused.status, 400);
      const body = (await refused.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, 'VALIDATION_FAILED');
      assert.ok(body.error.message.includes('body.memory_flush'), body.error.message);
      assert.equal(await keel.store.getAgent('mf', 'a'), null, 'nothing written');
      const accepted = await post('PUT', '/v1/tenants/mf/agents/a', {
        model: 'fixture/echo',
        memory_flush: true,
      });
      assert.equal(accepted.status, 201);
    } finally {
      await keel.close();
    }
  });

  it('the fixture model over the wire answers a flush request with one memory_put call', async () => {
    const server = await startFixtureServer();
    try {
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'fixture',
          messages: [
            { role: 'system', content: `${MEMORY_FLUSH_MARKER} write facts` },
            { role: 'user', content: 'user: my name is Ada\n\nassistant: hello Ada' },
          ],
        }),
      });
      const body = (await response.json()) as {
        choices: {
          message: { tool_calls?: { function: { name: string; arguments: string } }[] };
        }[];
      };
      const calls = body.choices[0]?.message.tool_calls ?? [];
      assert.equal(calls.length, 1);
      assert.equal(calls[0]?.function.name, 'memory_put');
      assert.deepEqual(JSON.parse(calls[0]?.function.arguments ?? ''), {
        text: 'the user said: "my name is Ada"',
      });
    } finally {
      await server.close();
    }
  });

  it('keel turn --stream / keel chat print a memory flush as one line', () => {
    let out = '';
    const printer = new EventPrinter((text) => (out += text));
    printer.take({
      type: 'memory.flushed',
      data: {
        step: 1,
        results: [
          { call_id: 'c1', name: 'memory_put', ok: true },
          { call_id: 'c2', name: 'memory_put', ok: false, error: 'TOOL_FAILED' },
        ],
      },
      seq: 9,
      ts: '2026-01-01T00:00:00.000Z',
    });
    assert.equal(out, '  (memory flushed before compaction: 1 of 2 facts written)\n');
  });
});
