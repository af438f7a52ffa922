// The approval gate of a run attempt (docs/approvals.md). A call whose tool matches the
// agent's `require_approval` globs runs only after a person approved it:
//   no approval yet   → one fenced transaction records it and makes the run `waiting`
//                       (no lease, no worker slot; the lane stays held); the attempt ends;
//   approved          → the call runs under the unchanged effect rules (tool-step.ts);
//   denied / timed out → the model gets {ok:false, error:{code:"APPROVAL_DENIED" |
//                       "APPROVAL_TIMEOUT", message}} — the tool never ran.
// The approval rows are the state: a resumed attempt reads them, so a kill -9 anywhere
// (before the request commits, while waiting, after the decision, while the approved
// call runs) leaves exactly one request and at most one execution.

import type { Approval, ApprovalStore, Fence } from '../store/store.ts';
import { globToRegExp } from '../tools/tool-globs.ts';
import type { Agent, ToolCall, ToolResultBody } from '../types.ts';

/** A compiled `require_approval` list: does a tool name need a person's decision? */
export type ApprovalMatcher = (toolName: string) => boolean;

export function approvalMatcher(patterns: readonly string[] | undefined): ApprovalMatcher {
  if (!patterns || patterns.length === 0) return () => false;
  const compiled = patterns.map(globToRegExp);
  return (name) => compiled.some((pattern) => pattern.test(name));
}

export type GateVerdict =
  { kind: 'run' } | { kind: 'refused'; result: ToolResultBody } | { kind: 'waiting' };

type GateStore = Pick<ApprovalStore, 'requestApproval' | 'listRunApprovals'>;

function refusal(call: ToolCall, approval: Approval): ToolResultBody {
  const timedOut = approval.status === 'timed_out';
  const message = timedOut
    ? `nobody approved ${call.name} within approval_timeout_ms; it did not run`
    : (approval.note ?? `a person denied ${call.name}; it did not run`);
  return {
    call_id: call.call_id,
    name: call.name,
    ok: false,
    error: { code: timedOut ? 'APPROVAL_TIMEOUT' : 'APPROVAL_DENIED', message },
    duration_ms: 0,
  };
}

/** One per run attempt: decides, call by call, whether a call may run now. */
export class ApprovalGate {
  private readonly needsApproval: ApprovalMatcher;
  private decided: Map<string, Approval> | null = null;

  constructor(
    private readonly store: GateStore,
    private readonly run: { tenant: string; run_id: string },
    private readonly fence: Fence,
    private readonly agent: Pick<Agent, 'require_approval' | 'approval_timeout_ms'>,
  ) {
    this.needsApproval = approvalMatcher(agent.require_approval);
  }

  /** Called for a call that passed its checks, before its intent record. */
  async check(call: ToolCall, step: number): Promise<GateVerdict> {
    if (!this.needsApproval(call.name)) return { kind: 'run' };
    const approval = (await this.approvals()).get(call.call_id);
    if (!approval) {
      await this.store.requestApproval(this.fence, {
        step,
        call: { call_id: call.call_id, name: call.name, arguments: call.arguments },
        timeout_ms: this.agent.approval_timeout_ms ?? null,
      });
      return { kind: 'waiting' };
    }
    if (approval.status === 'approved') return { kind: 'run' };
    // pending cannot be seen by a running attempt (a pending approval keeps the run
    // waiting); cancelled neither (the run ended). Treat both as not approved.
    return { kind: 'refused', result: refusal(call, approval) };
  }

  private async approvals(): Promise<Map<string, Approval>> {
    if (!this.decided) {
      const listed = (await this.store.listRunApprovals(this.run.tenant, this.run.run_id)) ?? [];
      this.decided = new Map(listed.map((approval) => [approval.call_id, approval]));
    }
    return this.decided;
  }
}

/** How many due approvals one sweep settles; the next sweep takes the rest. */
const SWEEP_BATCH = 100;

/**
 * The approval timeout sweep: every worker runs it on its poll interval, on both
 * backends. Idempotent and safe in parallel (the store settles each due approval once:
 * SQLite has one writer, PostgreSQL locks the rows with SKIP LOCKED). Cheap while nothing
 * is due: one probe of the `approvals_due` index.
 */
export async function sweepApprovalTimeouts(
  store: Pick<ApprovalStore, 'expireApprovals'>,
  onError: (error: unknown) => void,
): Promise<number> {
  let total = 0;
  try {
    for (;;) {
      const settled = await store.expireApprovals(SWEEP_BATCH);
      total += settled;
      if (settled < SWEEP_BATCH) return total;
    }
  } catch (error) {
    onError(error);
    return total;
  }
}
