// The tool half of a step, wired to the run: the environment a call runs in (registry,
// ports, signal, deadline) and the journal that checkpoints its `tool.call` intent and
// its result. The call-by-call rules live in tool-calls.ts and tool-execution.ts.

import type { Failpoints } from '../failpoints.ts';
import type { RunStore } from '../store/store.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { AnyToolSpec, ToolPorts } from '../tools/tool.ts';
import type { Agent, EntryBody, JsonObject, Run, ToolCall, Usage } from '../types.ts';
import type { RunEvent } from './events.ts';
import type { RunControl } from './run-control.ts';
import { RunStopped } from './run-control.ts';
import { runToolCalls } from './tool-calls.ts';
import type { ToolCallJournal } from './tool-calls.ts';
import { idempotencyKey } from './tool-execution.ts';
import type { PortScope, ToolPortStore } from './tool-ports.ts';
import { createToolPorts } from './tool-ports.ts';

export interface ToolRoundDeps {
  store: RunStore & ToolPortStore;
  tools: ToolRegistry;
  failpoints: Failpoints;
  toolPorts?: (scope: PortScope) => ToolPorts;
}

export interface ToolRound {
  deps: ToolRoundDeps;
  run: Run;
  agent: Agent;
  control: RunControl;
  /** The step (1-based) of the assistant entry whose calls these are. */
  step: number;
  pending: readonly ToolCall[];
  uncertain: ReadonlySet<string>;
  /** Epoch ms when the run's timeout_ms runs out. */
  runDeadline: number;
  now: () => number;
  /** The run's usage; tool_calls counts executions and is checkpointed with the intent. */
  usage: Usage;
  /** One fenced transaction (run-loop's checkpoint). */
  checkpoint(entries: EntryBody[], events: RunEvent[]): Promise<void>;
}

function journalFor(round: ToolRound): ToolCallJournal {
  const { run, step } = round;
  const callEvent = (call: { call_id: string; name: string }, tool?: AnyToolSpec): RunEvent => ({
    type: 'tool.call',
    data: {
      step,
      call_id: call.call_id,
      name: call.name,
      attempt: run.attempt,
      ...(tool && {
        effect: tool.effect,
        idempotency_key: idempotencyKey(run.run_id, call.call_id),
      }),
    },
  });
  return {
    async recordIntent(call, tool) {
      round.usage.tool_calls += 1;
      await round.checkpoint([], [callEvent(call, tool)]);
    },
    async recordResult(result, intentRecorded) {
      // Aborted at the end of a shutdown grace: the call stays "in flight", so the next
      // attempt applies the resume rules (re-run, or OUTCOME_UNKNOWN) instead.
      if (result.error?.code === 'TOOL_ABORTED' && round.control.cause === 'shutdown') {
        throw new RunStopped('shutdown');
      }
      const resultEvent: RunEvent = { type: 'tool.result', data: result as unknown as JsonObject };
      await round.checkpoint(
        [{ kind: 'tool_result', body: result }],
        intentRecorded ? [resultEvent] : [callEvent(result), resultEvent],
      );
    },
  };
}

/** Answers every pending call of the step in order; stops early when the run stops. */
export async function answerToolCalls(round: ToolRound): Promise<void> {
  const { deps, run, control } = round;
  const scope = { tenant: run.tenant, agent: run.agent, scope: run.scope };
  const ports = deps.toolPorts
    ? deps.toolPorts(scope)
    : createToolPorts({ store: deps.store, now: round.now }, scope);
  await runToolCalls(round.pending, {
    env: {
      registry: deps.tools,
      agent: round.agent,
      run: { ...scope, run_id: run.run_id },
      ports,
      signal: control.toolSignal,
      runDeadline: round.runDeadline,
      now: round.now,
    },
    journal: journalFor(round),
    failpoints: deps.failpoints,
    uncertain: round.uncertain,
    shouldStop: () => control.stopped,
  });
}
