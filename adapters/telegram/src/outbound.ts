// keel → Telegram: claims `tg:` deliveries with a long poll (keel wakes the claim when a
// run finalizes: no sleep-polling here), sends the answer as plain text (no parse_mode,
// so nothing needs Markdown escaping) in parts of at most 4096 characters, and acks. An
// approval delivery is one message with Approve/Deny buttons (approvals.ts).
// A 429 is waited out (retry_after) in place so the parts stay in order; a 5xx or a
// network error acks `retry` (keel backs off); any other refusal acks `failed`.
// Parts already sent of a delivery are remembered in this process, so a retry continues
// where it stopped instead of repeating them.

import { GrammyError, HttpError } from 'grammy';
import type { Api } from 'grammy';
import type { AckOutcome, ClaimedDelivery, KeelClient } from './keel-client.ts';
import type { GrammySignal } from './polling.ts';
import { pause } from './polling.ts';
import { splitMessage } from './split.ts';
import { approvalKeyboard, approvalText } from './approvals.ts';

export interface OutboundOptions {
  waitMs: number;
  leaseMs: number;
  log: (line: string) => void;
  /** After keel is unreachable, wait this long before claiming again. */
  backoffMs?: number;
}

/** The text a run's output becomes: its `reply`, else the output as JSON. */
export function answerText(payload: Record<string, unknown>): string {
  if (typeof payload.reply === 'string') return payload.reply;
  return JSON.stringify(payload, null, 2);
}

export class Outbound {
  private readonly sentParts = new Map<string, number>();

  constructor(
    private readonly api: Api,
    private readonly keel: KeelClient,
    private readonly options: OutboundOptions,
  ) {}

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let deliveries: ClaimedDelivery[];
      try {
        deliveries = await this.keel.claim(
          {
            destination_prefix: 'tg:',
            lease_ms: this.options.leaseMs,
            wait_ms: this.options.waitMs,
            limit: 10,
          },
          signal,
        );
      } catch (error) {
        if (signal.aborted) return;
        this.options.log(`claim failed: ${(error as Error).message}`);
        await pause(this.options.backoffMs ?? 1000, signal);
        continue;
      }
      for (const delivery of deliveries) {
        if (signal.aborted) return;
        const outcome = await this.send(delivery, signal);
        try {
          await this.keel.ack(delivery, outcome);
          // A retried delivery keeps its count: the next attempt sends the remaining parts.
          if (outcome.outcome !== 'retry') this.sentParts.delete(delivery.delivery_id);
        } catch (error) {
          // The claim expires and keel hands the delivery out again.
          this.options.log(`ack of ${delivery.delivery_id} failed: ${(error as Error).message}`);
        }
      }
    }
  }

  private async send(delivery: ClaimedDelivery, signal: AbortSignal): Promise<AckOutcome> {
    const chatId = delivery.destination.slice('tg:'.length);
    if (!/^-?\d+$/.test(chatId)) {
      return { outcome: 'failed', error: `not a Telegram chat id: ${delivery.destination}` };
    }
    // An approval is one message with Approve/Deny buttons (approvals.ts).
    const approval = delivery.kind === 'approval' && delivery.call_id !== null;
    const parts = approval
      ? [approvalText(delivery.payload)]
      : splitMessage(answerText(delivery.payload));
    const extra = approval
      ? { reply_markup: approvalKeyboard(delivery.run_id, delivery.call_id ?? '') }
      : undefined;
    let next = this.sentParts.get(delivery.delivery_id) ?? 0;
    while (next < parts.length) {
      try {
        await this.api.sendMessage(chatId, parts[next] ?? '', extra, signal as GrammySignal);
        next += 1;
        this.sentParts.set(delivery.delivery_id, next);
      } catch (error) {
        if (error instanceof GrammyError && error.error_code === 429) {
          const retryAfterMs = (error.parameters.retry_after ?? 1) * 1000;
          if (retryAfterMs < this.options.leaseMs / 2) {
            await pause(retryAfterMs, signal);
            continue;
          }
          return { outcome: 'retry', error: error.description, retry_after_ms: retryAfterMs };
        }
        if (error instanceof GrammyError && error.error_code < 500) {
          return { outcome: 'failed', error: `telegram ${error.error_code}: ${error.description}` };
        }
        const message =
          error instanceof GrammyError
            ? `telegram ${error.error_code}: ${error.description}`
            : error instanceof HttpError
              ? `telegram unreachable: ${error.message}`
              : (error as Error).message;
        return { outcome: 'retry', error: message };
      }
    }
    return { outcome: 'delivered' };
  }
}
