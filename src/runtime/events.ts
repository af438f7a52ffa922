// Typed run events (noun.verb). Persisted ones become trace rows; `model.delta` is
// live only.

import type { JsonObject, RunError, Usage } from '../types.ts';

export type RunEvent =
  | { type: 'run.queued'; data: { source: string; request_id: string | null } }
  | { type: 'run.claimed'; data: { attempt: number; worker: string } }
  | {
      type: 'run.resumed';
      data: {
        attempt: number;
        entries_loaded: number;
        steps: number;
        rerun_calls: string[];
        uncertain_calls: string[];
      };
    }
  | { type: 'model.request'; data: { step: number; model: string } }
  | {
      type: 'model.response';
      data: {
        step: number;
        usage: { input_tokens: number; output_tokens: number };
        latency_ms: number;
        finish_reason: string;
        raw?: JsonObject;
      };
    }
  | {
      type: 'model.retry';
      data: { step: number; attempt: number; delay_ms: number; error: RunError };
    }
  | { type: 'tool.call'; data: { step: number; call_id: string; name: string } }
  | { type: 'tool.result'; data: JsonObject }
  | { type: 'run.note'; data: { text: string } }
  | { type: 'run.succeeded'; data: { output: JsonObject; usage: Usage; steps: number } }
  | { type: 'run.failed'; data: { error: RunError } }
  | { type: 'run.cancelled'; data: { reason: string | null } };

export type LiveEvent = { type: 'model.delta'; data: { step: number; text: string } };

export type RunEventType = RunEvent['type'];
