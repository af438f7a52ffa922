// The one typed union of run events (noun.verb), discriminated by `type`: what the loop
// and the store write (RunEvent), what a trace row reads back as (TraceEvent), what the
// SSE route sends and the TypeScript client yields (StreamEvent). Persisted events become
// trace rows; `model.delta` is live only. Every data shape is plain JSON, so a RunEvent
// is a store NewEvent as is. A new type must be classified in EVENT_ENDS_STREAM below —
// until it is, keel does not compile.

import type { ToolEffect } from './tools/tool-effect.ts';
import type { CompactionRecord, JsonObject, RunError, ToolResultBody, Usage } from './types.ts';

export type RunEvent =
  | {
      type: 'run.queued';
      data: {
        source: string;
        request_id: string | null;
        /** A steered turn (on_busy=steer): the running run it waits to join. */
        steer_target?: string;
        /** A fork (POST …/fork): the source run, the step cut and whether input was replaced. */
        forked_from?: string;
        at_step?: number;
        replaced?: boolean;
      };
    }
  /** A steered turn joined this run as the user entry `entry_seq`. */
  | { type: 'run.steered'; data: { steer_id: string; entry_seq: number | null } }
  | { type: 'run.claimed'; data: { attempt: number; worker: string } }
  | {
      type: 'run.resumed';
      data: {
        attempt: number;
        entries_loaded: number;
        steps: number;
        /** Calls in flight at the stop, re-run with the same idempotency key. */
        rerun_calls: string[];
        /** Effectful calls in flight at the stop: OUTCOME_UNKNOWN or a failed run. */
        uncertain_calls: string[];
        /** Repeatable calls in flight on MAX_CALL_CRASHES attempts: TOOL_CRASHED, not run. */
        crashed_calls: string[];
        /** Calls of the last step that had not started: they simply run. */
        not_started_calls: string[];
      };
    }
  /** A graceful stop (shutdown) handed the run back: this attempt did not crash. */
  | { type: 'run.released'; data: { attempt: number; reason?: 'waiting' } }
  /** A call waits for a person's decision (docs/approvals.md); the run is released. */
  | {
      type: 'approval.requested';
      data: { call_id: string; name: string; step: number; expires_at: string | null };
    }
  | {
      type: 'approval.decided';
      data: {
        call_id: string;
        status: 'approved' | 'denied' | 'timed_out' | 'cancelled';
        note: string | null;
      };
    }
  | { type: 'model.request'; data: { step: number; model: string } }
  | {
      type: 'model.response';
      data: {
        step: number;
        usage: { input_tokens: number; output_tokens: number };
        /** The agent's "provider/model" and the call's cost (usage-prices.ts); optional
         *  because events written before usage tracking lack them. */
        model?: string;
        cost_usd?: number;
        latency_ms: number;
        finish_reason: string;
        /**
         * The call's text, when it has any: what its `model.delta` chunks added up to. The
         * SSE route sends it as one delta to a subscriber that got none of the call's
         * (it connected late, or nobody watched and the call was not streamed).
         */
        text?: string;
        /** As stored: the exchange `{request, response}`, written through `raw_json`. */
        raw?: JsonObject;
      };
      /** The raw exchange as JSON text, stored as `data.raw` (model-response-event.ts). */
      raw_json?: string;
    }
  | {
      type: 'model.retry';
      data: { step: number; attempt: number; delay_ms: number; error: RunError };
    }
  | {
      type: 'tool.call';
      data: {
        step: number;
        call_id: string;
        name: string;
        attempt: number;
        /** Present when the tool runs (the intent record); absent for a rejected call. */
        effect?: ToolEffect;
        idempotency_key?: string;
      };
    }
  | { type: 'tool.result'; data: ToolResultBody }
  | { type: 'run.note'; data: { text: string } }
  /** Facts put into the model's context for this turn (agent `recall`, recall.ts). */
  | {
      type: 'memory.recall';
      data: {
        namespace: string;
        k: number;
        facts: {
          id: string;
          text: string;
          score: number;
          lexical_rank: number | null;
          semantic_rank: number | null;
        }[];
        error?: { code: string; message: string };
      };
    }
  | { type: 'run.succeeded'; data: { output: JsonObject; usage: Usage; steps: number } }
  | { type: 'run.failed'; data: { error: RunError } }
  | { type: 'run.cancelled'; data: { reason: string | null } }
  /** Oldest thread turns folded into a summary (docs/compaction.md). */
  | {
      type: 'context.compacted';
      data: CompactionRecord & {
        usage: { input_tokens: number; output_tokens: number };
        /** The summary call's model and cost: the usage ledger counts it (usage.ts). */
        model?: string;
        cost_usd?: number;
        latency_ms: number;
      };
    }
  /** The memory flush call before a compaction, its tool calls recorded (memory-flush.ts). */
  | {
      type: 'memory.flush';
      data: {
        step: number;
        from_run_id: string;
        through_run_id: string;
        calls: { call_id: string; name: string }[];
        usage: { input_tokens: number; output_tokens: number };
        model?: string;
        cost_usd?: number;
        latency_ms: number;
      };
    }
  /** The flush's tool calls ran (or the flush call failed: `error`). */
  | {
      type: 'memory.flushed';
      data: {
        step: number;
        results: { call_id: string; name: string; ok: boolean; error?: string }[];
        error?: { code: string; message: string };
      };
    };

/** Live only (never stored): a model's streamed text. */
export type LiveEvent = {
  type: 'model.delta';
  data: {
    step: number;
    text: string;
    /**
     * The call's whole text, sent by the SSE route to a subscriber whose deltas of the call
     * would not add up to it — it missed some or all of them, or got a failed attempt's
     * (src/api/routes/events.ts): it replaces what the client holds for the step.
     */
    whole?: true;
  };
};

/** `T` without `K`, member by member (a plain Omit would merge the union). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A persisted event as read back: its trace seq and time; `raw_json` is stored as `data.raw`. */
export type TraceEvent = OmitEach<RunEvent, 'raw_json'> & { seq: number; ts: string };

/** What a run's event stream carries: its trace events, then live ones (no seq, no ts). */
export type StreamEvent = TraceEvent | (LiveEvent & { seq?: undefined; ts?: undefined });

export type RunEventType = RunEvent['type'];
export type StreamEventType = StreamEvent['type'];

/**
 * Whether an event type ends a run's event stream (the run's terminal events). Every type
 * is listed: a new one is a compile error here until it is decided.
 */
export const EVENT_ENDS_STREAM: Readonly<Record<StreamEventType, boolean>> = {
  'run.queued': false,
  'run.claimed': false,
  'run.resumed': false,
  'run.released': false,
  'run.steered': false,
  'approval.requested': false,
  'approval.decided': false,
  'model.request': false,
  'model.response': false,
  'model.retry': false,
  'model.delta': false,
  'tool.call': false,
  'tool.result': false,
  'run.note': false,
  'memory.recall': false,
  'memory.flush': false,
  'memory.flushed': false,
  'context.compacted': false,
  'run.succeeded': true,
  'run.failed': true,
  'run.cancelled': true,
};

/** True for run.succeeded, run.failed and run.cancelled (false for a type keel does not know). */
export function endsStream(event: { type: string }): boolean {
  return Object.hasOwn(EVENT_ENDS_STREAM, event.type)
    ? EVENT_ENDS_STREAM[event.type as StreamEventType]
    : false;
}
