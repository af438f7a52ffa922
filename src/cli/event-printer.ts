// How run events look in a terminal (`keel turn --stream`, `keel chat`, the demo): the
// answer as it streams, tool calls and their results as they happen, a call that waits
// for a person's approval with the commands that decide it, then the outcome.

import { decidedNotice, waitingNotice } from './approval-notice.ts';

/** A run event as the events route sends it (persisted: seq/ts; live: no seq). */
export interface StreamEvent {
  seq?: number;
  ts?: string;
  type: string;
  // Printed loosely; the server's types are the contract.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
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

  take(event: StreamEvent): void {
    const data = event.data ?? {};
    switch (event.type) {
      case 'model.delta':
        if (this.streamedStep !== data.step) {
          if (this.midLine) this.write('\n');
          this.write(this.options.answerPrefix ?? '');
          this.streamedStep = data.step as number;
          this.streamed = '';
        }
        if (data.whole === true) {
          // The call's whole text (this subscriber missed its deltas, or reconnected
          // mid-call): print what is not on the screen yet.
          const whole = String(data.text);
          if (whole.startsWith(this.streamed)) this.write(whole.slice(this.streamed.length));
          else this.write(`\n${this.options.answerPrefix ?? ''}${whole}`);
          this.streamed = whole;
        } else {
          this.streamed += String(data.text);
          this.write(String(data.text));
        }
        this.midLine = true;
        return;
      case 'tool.call':
        this.line(`  → ${data.name}${data.arguments === undefined ? '' : ` ${data.arguments}`}`);
        return;
      case 'tool.result':
        this.line(
          data.ok
            ? `  ← ${data.name}: ${compact(data.result)}`
            : `  ← ${data.name}: ${data.error?.code ?? 'ERROR'} ${data.error?.message ?? ''}`.trimEnd(),
        );
        return;
      case 'model.retry':
        this.line(
          `  (model call failed, retry ${data.attempt} in ${data.delay_ms} ms: ${data.error?.message ?? ''})`,
        );
        return;
      case 'context.compacted':
        this.line(
          `  (context compacted: ${data.turns} older turns summarised, ~${data.tokens_before} → ~${data.tokens_after} tokens)`,
        );
        return;
      case 'memory.flushed': {
        const results = Array.isArray(data.results) ? (data.results as { ok?: boolean }[]) : [];
        const written = results.filter((result) => result.ok === true).length;
        this.line(
          `  (memory flushed before compaction: ${written} of ${results.length} facts written)`,
        );
        return;
      }
      case 'approval.requested':
        this.line(
          waitingNotice(this.options.runId ?? '<run_id>', data, {
            ...(this.options.given && { given: this.options.given }),
            ...(this.options.approvalHint && { hint: this.options.approvalHint }),
          }),
        );
        return;
      case 'approval.decided':
        this.line(`  ${decidedNotice(data)}`);
        return;
      case 'run.resumed':
        this.line(`  (resumed: attempt ${data.attempt}, ${data.entries_loaded} entries loaded)`);
        return;
      case 'run.succeeded': {
        const reply = replyText(data.output);
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
        this.outcome.error = data.error;
        this.line(`✗ ${data.error?.code}: ${data.error?.message}`);
        return;
      case 'run.cancelled':
        this.outcome.status = 'cancelled';
        this.line(`✗ cancelled${data.reason ? `: ${data.reason}` : ''}`);
        return;
      default:
        if (this.options.verbose) this.line(`  · ${event.type} ${compact(data, 100)}`);
    }
  }
}
