// One event of every type in the run event union (src/events.ts), as the stream carries
// it: for the tests that show each consumer (the CLI printer, the console) handles every
// type. Keyed by type and typed member by member, so a type added to the union does not
// compile here until it has a sample.

import { EVENT_ENDS_STREAM } from '../../src/events.ts';
import type { StreamEvent, StreamEventType } from '../../src/events.ts';

const TS = '2026-01-01T00:00:00.000Z';
const USAGE = { input_tokens: 120, output_tokens: 30 };

const SAMPLES: { [K in StreamEventType]: Extract<StreamEvent, { type: K }> } = {
  'run.queued': {
    type: 'run.queued',
    data: { source: 'api', request_id: null },
    seq: 1,
    ts: TS,
  },
  'run.claimed': { type: 'run.claimed', data: { attempt: 1, worker: 'w1' }, seq: 2, ts: TS },
  'run.resumed': {
    type: 'run.resumed',
    data: {
      attempt: 2,
      entries_loaded: 3,
      steps: 1,
      rerun_calls: ['c1'],
      uncertain_calls: [],
      crashed_calls: [],
      not_started_calls: [],
    },
    seq: 3,
    ts: TS,
  },
  'run.released': { type: 'run.released', data: { attempt: 1 }, seq: 4, ts: TS },
  'run.steered': { type: 'run.steered', data: { steer_id: 's1', entry_seq: 4 }, seq: 5, ts: TS },
  'approval.requested': {
    type: 'approval.requested',
    data: { call_id: 'c2', name: 'send_mail', step: 2, expires_at: null },
    seq: 6,
    ts: TS,
  },
  'approval.decided': {
    type: 'approval.decided',
    data: { call_id: 'c2', status: 'approved', note: 'fine' },
    seq: 7,
    ts: TS,
  },
  'model.request': {
    type: 'model.request',
    data: { step: 1, model: 'fixture/echo' },
    seq: 8,
    ts: TS,
  },
  'model.delta': { type: 'model.delta', data: { step: 1, text: 'hel' } },
  'model.response': {
    type: 'model.response',
    data: { step: 1, usage: USAGE, latency_ms: 40, finish_reason: 'stop', text: 'hello' },
    seq: 9,
    ts: TS,
  },
  'model.retry': {
    type: 'model.retry',
    data: {
      step: 1,
      attempt: 1,
      delay_ms: 500,
      error: { code: 'PROVIDER_ERROR', message: 'overloaded' },
    },
    seq: 10,
    ts: TS,
  },
  'tool.call': {
    type: 'tool.call',
    data: { step: 1, call_id: 'c1', name: 'clock_now', attempt: 1, effect: 'read_only' },
    seq: 11,
    ts: TS,
  },
  'tool.result': {
    type: 'tool.result',
    data: { call_id: 'c1', name: 'clock_now', ok: true, result: { now: TS }, duration_ms: 3 },
    seq: 12,
    ts: TS,
  },
  'run.note': { type: 'run.note', data: { text: 'a note for the trace' }, seq: 13, ts: TS },
  'memory.recall': {
    type: 'memory.recall',
    data: {
      namespace: 'default',
      k: 3,
      facts: [{ id: 'f1', text: 'likes tea', score: 0.9, lexical_rank: 1, semantic_rank: null }],
    },
    seq: 14,
    ts: TS,
  },
  'memory.flush': {
    type: 'memory.flush',
    data: {
      step: 2,
      from_run_id: 'r1',
      through_run_id: 'r2',
      calls: [{ call_id: 'm1', name: 'memory_put' }],
      usage: USAGE,
      latency_ms: 30,
    },
    seq: 15,
    ts: TS,
  },
  'memory.flushed': {
    type: 'memory.flushed',
    data: { step: 2, results: [{ call_id: 'm1', name: 'memory_put', ok: true }] },
    seq: 16,
    ts: TS,
  },
  'context.compacted': {
    type: 'context.compacted',
    data: {
      step: 2,
      reason: 'budget',
      from_run_id: 'r1',
      through_run_id: 'r2',
      turns: 2,
      messages: 4,
      tokens_before: 3000,
      tokens_after: 900,
      context_tokens: 2000,
      usage: USAGE,
      latency_ms: 25,
    },
    seq: 17,
    ts: TS,
  },
  'run.succeeded': {
    type: 'run.succeeded',
    data: {
      output: { reply: 'hello' },
      usage: { ...USAGE, model_calls: 1, tool_calls: 1 },
      steps: 2,
    },
    seq: 18,
    ts: TS,
  },
  'run.failed': {
    type: 'run.failed',
    data: { error: { code: 'RUN_TIMEOUT', message: 'the run took too long' } },
    seq: 19,
    ts: TS,
  },
  'run.cancelled': { type: 'run.cancelled', data: { reason: 'by a test' }, seq: 20, ts: TS },
};

/** Every type the union has, in EVENT_ENDS_STREAM's order (the list keel itself classifies). */
export function everyEventType(): StreamEventType[] {
  return Object.keys(EVENT_ENDS_STREAM).filter((type): type is StreamEventType =>
    Object.hasOwn(SAMPLES, type),
  );
}

/** A sample event of `type`. */
export function sampleEvent<K extends StreamEventType>(type: K): Extract<StreamEvent, { type: K }> {
  return SAMPLES[type];
}
