// `npm run bench -- compaction`: the CPU a turn that needs NO compaction pays for token
// counting (docs/compaction.md), with a long thread (200 turns in the context). Per turn
// it does what the run loop does: a fresh ContextKeeper (one per attempt) loads the
// thread, checks the input before the model step (`fit`) and, at the final answer,
// adds the turn's token counts to the outcome (`withTurn`); fresh entry objects every
// turn, so nothing of the turn itself is cached. Two regimes:
//   far  — the thread is far below the budget: the byte bound decides; only the turn's
//          own messages are counted for the thread (the worker's tokenizer is loaded —
//          a process that never needed it counts nothing);
//   near — the thread fills ~80 % of the budget: the bound does not fit, so this run's
//          entries are counted exactly (the thread's messages carry stored counts) and
//          the turn's messages are counted for the thread.
// Target (issue 19): ≤ 0.1 ms of CPU per turn.

import { inertFailpoints } from '../src/failpoints.ts';
import { createMetrics } from '../src/metrics.ts';
import { createFixtureProvider } from '../src/providers/fixture.ts';
import { ContextKeeper } from '../src/runtime/compaction.ts';
import { systemPrompt } from '../src/runtime/model-input.ts';
import { RunControl } from '../src/runtime/run-control.ts';
import { TokenCounter } from '../src/runtime/token-count.ts';
import { toolDefinitions } from '../src/runtime/tool-step.ts';
import { builtinTools } from '../src/tools/builtin/index.ts';
import { createToolRegistry } from '../src/tools/registry.ts';
import type { Agent, RunEntry, ThreadMessage } from '../src/types.ts';
import { agentSpec } from '../test/helpers/agent-spec.ts';
import { formatTable, median, percentile, writeResult } from './support.ts';

const THREAD_TURNS = 200;
const TURNS = 2_000;
const WARMUP = 200;
const WORDS = ['harbour', 'ledger', 'violet', 'quartz', 'meadow', 'copper', 'lantern', 'orbit'];

function text(seed: number, words: number): string {
  const out: string[] = [`message ${seed}`];
  for (let i = 0; i < words; i++) out.push(WORDS[(seed * 5 + i * 3 + (i % 7)) % 8] as string);
  return out.join(' ');
}

interface Regime {
  name: string;
  agent: Agent;
  /** Whether the turn's messages get counted (the exact path). */
  counts: boolean;
}

export async function runCompactionBench(): Promise<void> {
  const counter = await new TokenCounter().load();
  const registry = createToolRegistry(builtinTools());
  // The thread as finalization stores it: every message with its count.
  const thread: ThreadMessage[] = [];
  let threadTokens = 0;
  for (let turn = 0; turn < THREAD_TURNS; turn++) {
    for (const role of ['user', 'assistant'] as const) {
      const content = text(turn * 2 + (role === 'user' ? 0 : 1), 60);
      const tokens = counter.count(content);
      threadTokens += tokens + 4;
      thread.push({ role, content, run_id: `run_${turn}`, ts: '2026-01-01T00:00:00.000Z', tokens });
    }
  }
  const base = {
    ...agentSpec({ context_window: 1000 }),
    tenant: 'bench',
    name: 'a',
    created_at: '',
    updated_at: '',
  };
  const regimes: Regime[] = [
    { name: 'far (budget 1M)', agent: { ...base, model: 'openai/gpt-4.1' }, counts: true },
    {
      name: 'near (thread ~80 % of budget)',
      agent: { ...base, context_tokens: Math.round(threadTokens / 0.8) },
      counts: true,
    },
  ];
  const rows: (string | number)[][] = [];
  const results: Record<string, unknown> = {
    thread_turns: THREAD_TURNS,
    thread_tokens: threadTokens,
  };
  for (const regime of regimes) {
    // Built per turn, as the run loop builds them per attempt.
    const tools = () => toolDefinitions(registry, regime.agent);
    const provider = createFixtureProvider();
    const metrics = createMetrics();
    const cpu: number[] = [];
    let compactions = 0;
    for (let i = 0; i < WARMUP + TURNS; i++) {
      const userText = text(100_000 + i, 60);
      const reply = `echo: ${userText}`;
      const user: RunEntry = {
        kind: 'user',
        body: { text: userText, payload: { text: userText } },
        run_id: 'r',
        seq: 1,
        attempt: 1,
        ts: '',
      };
      const defs = tools();
      const started = process.cpuUsage();
      const keeper = new ContextKeeper({
        agent: regime.agent,
        resolved: { provider, model: 'echo' },
        system: systemPrompt(regime.agent),
        tools: defs,
        counter,
        control: new RunControl(),
        metrics,
        failpoints: inertFailpoints,
        now: Date.now,
        figures: {
          steps: 0,
          usage: { input_tokens: 0, output_tokens: 0, model_calls: 0, tool_calls: 0 },
          elapsed_ms: 0,
        },
        checkpoint: () => {
          compactions += 1;
          return Promise.resolve();
        },
      });
      keeper.load(thread, [user]);
      const fit = await keeper.fit([user], 1);
      if (fit !== null) compactions += 1;
      const outcome = await keeper.withTurn(
        { status: 'succeeded', output: { reply }, reply_text: reply, context_window: 1000 },
        [user],
      );
      const used = process.cpuUsage(started);
      if (i >= WARMUP) cpu.push((used.user + used.system) / 1000);
      if (outcome.status !== 'succeeded') throw new Error('unexpected outcome');
      // Both: the turn's messages counted for the thread (the tokenizer is loaded).
      if ((outcome.message_tokens !== undefined) !== regime.counts) {
        throw new Error(`${regime.name}: message_tokens ${JSON.stringify(outcome.message_tokens)}`);
      }
    }
    if (compactions > 0)
      throw new Error(`${regime.name}: ${compactions} compactions, expected none`);
    const p50 = median(cpu);
    const mean = cpu.reduce((sum, value) => sum + value, 0) / cpu.length;
    rows.push([regime.name, p50.toFixed(4), percentile(cpu, 0.95).toFixed(4), mean.toFixed(4)]);
    results[regime.name] = {
      cpu_ms_p50: p50,
      cpu_ms_p95: percentile(cpu, 0.95),
      cpu_ms_mean: mean,
    };
  }
  console.log(
    `compaction: counting CPU per turn that needs no compaction, thread of ${THREAD_TURNS} turns (${threadTokens} tokens), ${TURNS} turns`,
  );
  console.log(formatTable(['regime', 'cpu ms p50', 'cpu ms p95', 'cpu ms mean'], rows));
  console.log(`written ${writeResult('compaction', results)}`);
}
