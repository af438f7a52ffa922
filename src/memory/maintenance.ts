// The memory-maintenance preset (docs/memory.md): a memory-only agent and a disabled
// weekly schedule, plus the host-enforced rule that the maintainer pages through
// `memory_list` completely before it may change memory.

import type { AgentSpec, JsonObject } from '../types.ts';

export const MAINTAINER_AGENT = 'memory-maintainer';
export const MAINTENANCE_SCHEDULE = 'memory-maintenance';
export const MAINTENANCE_CRON = '0 3 * * 0';
export const MAINTENANCE_TIMEZONE = 'UTC';

const MAINTAINER_PERSONA = `You maintain the long-term memory of this tenant, nothing else.
Work on the namespace named in the input (default "default") and pass it explicitly on every memory call.
First page through memory_list from no cursor until next_cursor is null; changes are refused until you have.
Then find exact or semantic duplicates, facts that contradict each other, and facts that are clearly expired.
Never invent facts. Leave anything uncertain alone. Merge duplicates by rewriting one fact with memory_put
(keep its id) and deleting the others with memory_delete.
Finish with a JSON report: {"namespace", "scanned", "updated", "merged", "deleted", "unchanged", "notes": []}.`;

export function maintainerSpec(model: string): AgentSpec {
  return {
    model,
    persona: MAINTAINER_PERSONA,
    allowed_families: ['memory'],
    max_steps: 64,
    timeout_ms: 300_000,
    tool_timeout_ms: 30_000,
    temperature: 0.1,
    max_tokens: 4096,
    context_window: 0,
    on_uncertain_effect: 'tell_model',
  };
}

export function maintenancePayload(namespace: string): JsonObject {
  return {
    text: `Maintain the memory namespace "${namespace}": scan it completely, then merge duplicates, resolve explicit conflicts and remove clearly expired facts.`,
    namespace,
  };
}

/**
 * Per-run progress of the maintainer's scan, kept in process memory. A run may change
 * a namespace only after a `memory_list` chain that started without a cursor and
 * followed each returned next_cursor reached next_cursor = null.
 *
 * Kept in memory on purpose: after a crash the resumed run starts with no progress and
 * must list again — stricter, never looser, than the truth, and it needs no trace
 * parsing. Bounded: the oldest runs are forgotten first.
 */
export class MaintenanceScans {
  private readonly runs = new Map<
    string,
    Map<string, { next: string | null; complete: boolean }>
  >();

  constructor(private readonly maxRuns = 1000) {}

  private namespaces(runId: string): Map<string, { next: string | null; complete: boolean }> {
    let entry = this.runs.get(runId);
    if (!entry) {
      entry = new Map();
      this.runs.set(runId, entry);
      while (this.runs.size > this.maxRuns) {
        const oldest = this.runs.keys().next().value as string;
        this.runs.delete(oldest);
      }
    }
    return entry;
  }

  /** Records one memory_list page the run read. */
  listed(runId: string, namespace: string, cursor: string | undefined, next: string | null): void {
    const namespaces = this.namespaces(runId);
    const scan = namespaces.get(namespace);
    if (cursor === undefined) {
      // A fresh scan from the start (a completed scan stays complete).
      namespaces.set(namespace, { next, complete: (scan?.complete ?? false) || next === null });
      return;
    }
    if (!scan || scan.complete || scan.next !== cursor) return; // not the chain's next page
    scan.next = next;
    if (next === null) scan.complete = true;
  }

  isComplete(runId: string, namespace: string): boolean {
    return this.runs.get(runId)?.get(namespace)?.complete ?? false;
  }
}
