// How run events look in a terminal (`keel turn --stream`, `keel chat`, the demo): the
// answer as it streams, tool calls and their results as they happen, a call that waits
// for a person's approval with the commands that decide it, then the outcome. Typed by
// the one event union (src/events.ts): every type has its case, and a type this keel
// does not know yet (a newer server) is printed under --verbose like the quiet ones.

import type { StreamEvent } from '../events.ts';
import { decidedNotice, waitingNotice } from './approval-notice.ts';

type ApprovalRequested = Extract<StreamEvent, { type: 'approval.requested' }>;

/**
 * A stream event as the printer takes it: an `approval.requested` may carry the call's
 * arguments, read from the approval (its trace event names the call, not the arguments).
 */
export type PrintableEvent =
  Exclude<StreamEvent, ApprovalRequested> | (ApprovalRequested & { data: { arguments?: string } });

/** An event of a type missing from the union: only its type and data are known. */
interface FutureEvent {
  type: string;
  data?: unknown;
}

/** The switch below has a case for every known type, so only a future one gets here. */
function futureEvent(event: never): FutureEvent {
  return event;
}

export interface PrintedOutcome {
  status: 'succeeded' | 'failed' | 'cancelled' | null;
  reply: string | null;
  error: { code: string; message: string } | null;
}

function compact(value: unknown, max = 160): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The reply text of a run output: `reply` when present, else the JSON object. */
export function replyText(output: unknown): string {
  const reply = (output as { reply?: unknown } | null)?.reply;
  return typeof reply === 'string' ? reply : JSON.stringify(output);
}

export class EventPrinter {
  private streamedStep: number | null = null;
  /** Text streamed for the current step: a late subscriber may have missed its start. */
  private streamed = '';
  private midLine = false;
  readonly outcome: PrintedOutcome = { status: null, reply: null, error: null };

  constructor(
    private readonly write: (text: string) => void,
    private readonly options: {
      answerPrefix?: string;
      verbose?: boolean;
      /** The run printed: an approval notice names it in the commands that decide. */
      runId?: string;
      /** The connection flags an approval notice's commands repeat (ClientConfig.given). */
      given?: { url?: string; tenant?: string };
      /** One more line under an approval notice (keel chat: its /approve and /deny). */
      approvalHint?: string;
    } = {},
  ) {}

  private line(text: string): void {
    if (this.midLine) this.write('\n');
    this.midLine = false;
    this.write(`${text}\n`);
  }

  take(event: PrintableEvent): void {
    switch (event.type) {
      case 'model.delta': {
        const { data } = event;
        if (this.streamedStep !== data.step) {
          if (this.midLine) this.write('\n');
          this.write(this.options.answerPrefix ?? '');
          this.streamedStep = data.step;
          this.streamed = '';
        }
        // The printer may follow a server of another version: a field a known type
        // lost or changed is read defensively rather than trusted to the union.
        const text = String(data.text ?? '');
        if (data.whole === true) {
          // The call's whole text (this subscriber missed its deltas, or reconnected
          // mid-call): print what is not on the screen yet.
          if (text.startsWith(this.streamed)) this.write(text.slice(this.streamed.length));
          else this.write(`\n${this.options.answerPrefix ?? ''}${text}`);
          this.streamed = text;
        } else {
          this.streamed += text;
          this.write(text);
        }
        this.midLine = true;
        return;
      }
      case 'tool.call':
        this.line(`  → ${event.data.name}`);
        return;
      case 'tool.result': {
        const { data } = event;
        this.line(
          data.ok
            ? `  ← ${data.name}: ${compact(data.result)}`
            : `  ← ${data.name}: ${data.error?.code ?? 'ERROR'} ${data.error?.message ?? ''}`.trimEnd(),
        );
        return;
      }
      case 'model.retry':
        this.line(
          `  (model call failed, retry ${event.data.attempt} in ${event.data.delay_ms} ms: ${event.data.error?.message ?? 'unknown error'})`,
        );
        return;
      case 'context.compacted':
        this.line(
          `  (context compacted: ${event.data.turns} older turns summarised, ~${event.data.tokens_before} → ~${event.data.tokens_after} tokens)`,
        );
        return;
      case 'memory.flushed': {
        const results = Array.isArray(event.data.results) ? event.data.results : [];
        const written = results.filter((result) => result.ok).length;
        this.line(
          `  (memory flushed before compaction: ${written} of ${results.length} facts written)`,
        );
        return;
      }
      case 'approval.requested':
        this.line(
          waitingNotice(this.options.runId ?? '<run_id>', event.data, {
            ...(this.options.given && { given: this.options.given }),
            ...(this.options.approvalHint && { hint: this.options.approvalHint }),
          }),
        );
        return;
      case 'approval.decided':
        this.line(`  ${decidedNotice(event.data)}`);
        return;
      case 'run.resumed':
        this.line(
          `  (resumed: attempt ${event.data.attempt}, ${event.data.entries_loaded} entries loaded)`,
        );
        return;
      case 'run.succeeded': {
        const reply = replyText(event.data.output);
        this.outcome.status = 'succeeded';
        this.outcome.reply = reply;
        // The answer was not streamed (a non-streaming model), or only its end reached
        // this subscriber (it connected late): print it whole.
        if (this.streamedStep === null || !this.midLine || this.streamed !== reply) {
          this.line(`${this.options.answerPrefix ?? ''}${reply}`);
        } else {
          this.write('\n');
          this.midLine = false;
        }
        return;
      }
      case 'run.failed':
        this.outcome.status = 'failed';
        this.outcome.error = event.data.error;
        this.line(
          `✗ ${event.data.error?.code ?? 'ERROR'}: ${event.data.error?.message ?? '(no message)'}`,
        );
        return;
      case 'run.cancelled':
        this.outcome.status = 'cancelled';
        this.line(`✗ cancelled${event.data.reason ? `: ${event.data.reason}` : ''}`);
        return;
      // Bookkeeping a person following the answer does not need: shown under --verbose.
      case 'run.queued':
      case 'run.claimed':
      case 'run.steered':
      case 'run.released':
      case 'run.note':
      case 'model.request':
      case 'model.response':
      case 'memory.recall':
      case 'memory.flush':
        this.quiet(event);
        return;
      default:
        // A type added to the union after this keel was built: not an error, shown quietly.
        this.quiet(futureEvent(event));
    }
  }

  private quiet(event: FutureEvent): void {
    if (this.options.verbose) this.line(`  · ${event.type} ${compact(event.data ?? {}, 100)}`);
  }
}
