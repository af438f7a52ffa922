// A run's trace id and the span id of its run span, derived from the run id alone, so
// every attempt of the run — also one that starts after a kill -9, in another process —
// continues the same trace without anything stored (docs/telemetry.md). Pure: no SDK.

import { createHash } from 'node:crypto';

function hexOf(label: string, runId: string, length: number): string {
  const hex = createHash('sha256').update(`keel:${label}:${runId}`).digest('hex').slice(0, length);
  // An all-zero id is invalid in W3C trace context; 2^-128 odds, still handled.
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

/** 32 hex digits: the trace of every span of the run. */
export function runTraceId(runId: string): string {
  return hexOf('trace', runId, 32);
}

/** 16 hex digits: the run span, parent of every step span of every attempt. */
export function runSpanId(runId: string): string {
  return hexOf('run-span', runId, 16);
}
