// What the CLI says about a run that waits for a person (docs/approvals.md): the call,
// its arguments and the exact commands that decide it — printed by `keel turn --stream`,
// `keel turn --wait` and `keel chat` where a silent pause would look like a hang — and
// how the decision came out.

import type { ClientConfig } from './client-config.ts';
import { repeatedFlags } from './client-config.ts';
import type { Connection } from './keel.ts';
import type { StreamEvent } from '../events.ts';
import type { PrintableEvent } from './event-printer.ts';

/** Whitespace runs (newlines too) as one space, cut to `max` characters with `…`. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * The commands that decide one call, as `keel approvals` takes them, with the `--tenant`
 * and `--url` this command was given by flag: pasted into another shell they reach the
 * same run (its environment gives KEEL_URL / KEEL_TENANT, not these flags).
 */
export function decideCommands(
  runId: string,
  callId: string,
  given: ClientConfig['given'] = {},
): { approve: string; deny: string } {
  const flags = repeatedFlags(given);
  return {
    approve: `keel approvals approve ${runId} ${callId}${flags}`,
    deny: `keel approvals deny ${runId} ${callId}${flags} [--note "why"]`,
  };
}

/** The data of an `approval.requested` event, with the arguments when they were looked up. */
export interface RequestedCall {
  call_id: string;
  name: string;
  expires_at?: string | null;
  arguments?: string;
}

/**
 * The lines (no trailing newline) announcing a call that waits: what it is and how to
 * decide it. `given`: the connection flags the commands repeat; `hint` is one more line,
 * e.g. keel chat's own commands.
 */
export function waitingNotice(
  runId: string,
  call: RequestedCall,
  { given, hint }: { given?: ClientConfig['given']; hint?: string } = {},
): string {
  const args = call.arguments === undefined ? '' : ` ${oneLine(call.arguments, 160)}`;
  const commands = decideCommands(runId, call.call_id, given);
  const lines = [
    `⏸ waiting for approval: ${call.name}${args}`,
    `  approve: ${commands.approve}`,
    `  deny:    ${commands.deny}`,
  ];
  if (call.expires_at) lines.push(`  (denied as APPROVAL_TIMEOUT at ${call.expires_at})`);
  if (hint) lines.push(`  ${hint}`);
  return lines.join('\n');
}

/** The line for an `approval.decided` event. */
export function decidedNotice(data: { status?: string; note?: string | null }): string {
  switch (data.status) {
    case 'approved':
      return `✓ approved${data.note ? ` (${data.note})` : ''}: the run goes on`;
    case 'denied':
      return `✗ denied${data.note ? `: ${data.note}` : ''}: the call does not run, the model is told`;
    case 'timed_out':
      return '✗ nobody decided in time (APPROVAL_TIMEOUT): the call does not run';
    default:
      return `approval ${data.status ?? 'settled'}`;
  }
}

/**
 * The event with the call's arguments added, for an `approval.requested` (its trace
 * event names the call but not the arguments; the approval holds them). Any other
 * event, or one whose approval cannot be read, is returned as it was.
 */
export async function withApprovalArguments(
  { keel, tenant }: Connection,
  runId: string,
  event: StreamEvent,
): Promise<PrintableEvent> {
  if (event.type !== 'approval.requested') return event;
  try {
    const { approvals } = await keel.approvals.forRun(tenant, runId);
    const approval = approvals.find((a) => a.call_id === event.data.call_id);
    return approval ? { ...event, data: { ...event.data, arguments: approval.arguments } } : event;
  } catch {
    return event; // the notice still names the tool and the commands
  }
}
