// Forking a run (docs/agent-loop.md, "Fork"): a new queued run, in a new scope or the
// one given, whose journal starts as a copy of the source run's entries up to step n
// (optionally with its user message replaced). The loop then resumes it like any run:
// a recorded model response is never requested again and a recorded tool result never
// produced again, so no call before the fork point runs again.

import { createHash } from 'node:crypto';
import { newRunId } from '../ids.ts';
import type { RunBranchStore } from '../store/store.ts';
import type { JsonObject, Run } from '../types.ts';
import { canonicalJson } from './enqueue.ts';
import { userText } from './model-input.ts';

export interface ForkRequest {
  tenant: string;
  source_run_id: string;
  at_step: number;
  /** Replaces the run's user message; absent: the source's. */
  payload?: JsonObject | null;
  /** Absent: a new scope `fork:<new run id>` (an empty thread). */
  scope?: string | null;
  /** As for turns: a replay of the same fork answers its run, a different one is a 409. */
  request_id?: string | null;
  /** The tenant's queued-run quota (`tenant_limits.queued_runs`); a fork counts like a turn. */
  max_queued?: number | null;
}

export async function forkRun(
  store: Pick<RunBranchStore, 'forkRun'>,
  request: ForkRequest,
): Promise<{ run: Run; deduplicated: boolean }> {
  const runId = newRunId();
  const payload = request.payload ?? null;
  const scope = request.scope ?? `fork:${runId}`;
  // The scope as asked for (not the generated default), so a replay fingerprints the same.
  const material = canonicalJson({
    fork_of: request.source_run_id,
    at_step: request.at_step,
    scope: request.scope ?? null,
    payload,
  });
  const run = await store.forkRun({
    tenant: request.tenant,
    source_run_id: request.source_run_id,
    run_id: runId,
    at_step: request.at_step,
    payload,
    scope,
    user_entry: payload ? { kind: 'user', body: { text: userText(payload), payload } } : null,
    fingerprint: createHash('sha256').update(material).digest('hex'),
    request_id: request.request_id ?? null,
    max_queued: request.max_queued ?? null,
  });
  // A replay answers the run made the first time, not the id drawn here.
  return { run, deduplicated: run.run_id !== runId };
}
