// One webhook POST for one claimed delivery: the run's output in a Standard Webhooks
// envelope, signed, to the URL checked against the public-web boundary and pinned.
// Answers the ack the delivery worker gives the outbox; never throws.

import type { Agent as UndiciAgent } from 'undici';
import type { ClaimedDelivery } from '../../types.ts';
import type { WebhookRecord } from '../../store/rules/webhooks.ts';
import { pinnedLookup } from '../../web/pinned-lookup.ts';
import { signWebhook } from './signing.ts';
import { checkWebhookUrl } from './url-check.ts';

export type WebhookAck =
  | { outcome: 'delivered' }
  | { outcome: 'retry'; error: string; retry_after_ms?: number }
  | { outcome: 'failed'; error: string };

export interface SendSettings {
  allow_hosts: readonly string[];
  timeout_ms: number;
}

/**
 * The body keel POSTs: Standard Webhooks' {type, timestamp, data} envelope. A run's
 * result is `run.output` with `output`; an approval request is `run.approval_requested`
 * with `approval` (call_id, tool, arguments, …), decided with POST
 * T/runs/:run_id/approvals/:call_id.
 */
export function webhookBody(delivery: ClaimedDelivery, tenant: string, now: Date): string {
  const approval = delivery.kind === 'approval';
  return JSON.stringify({
    type: approval ? 'run.approval_requested' : 'run.output',
    timestamp: now.toISOString(),
    data: {
      tenant,
      run_id: delivery.run_id,
      delivery_id: delivery.delivery_id,
      destination: delivery.destination,
      attempt: delivery.attempt,
      [approval ? 'approval' : 'output']: delivery.payload,
    },
  });
}

function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 86_400_000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.min(date - Date.now(), 86_400_000));
}

export async function sendWebhook(
  webhook: WebhookRecord,
  delivery: ClaimedDelivery,
  settings: SendSettings,
): Promise<WebhookAck> {
  // Checked again at send time: the host's addresses may have changed since the PUT.
  const verdict = await checkWebhookUrl(webhook.url, settings.allow_hosts);
  if (!verdict.ok) return { outcome: 'failed', error: `webhook URL refused: ${verdict.reason}` };
  const now = new Date();
  const body = webhookBody(delivery, webhook.tenant, now);
  // The delivery id names the message: a receiver deduplicates retries by webhook-id.
  const headers = signWebhook(
    webhook.secret,
    delivery.delivery_id,
    Math.floor(now.getTime() / 1000),
    body,
  );
  // undici on the first POST, not with keel (~0.1 s of CPU at every start).
  const { Agent, fetch: undiciFetch } = await import('undici');
  const dispatcher = verdict.pinned
    ? new Agent({
        connect: {
          lookup: pinnedLookup(verdict.pinned),
        } as unknown as UndiciAgent.Options['connect'],
      })
    : undefined;
  try {
    const response = await undiciFetch(verdict.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'keel-webhooks', ...headers },
      body,
      // A redirect is an answer, not a new destination: it is not followed.
      redirect: 'manual',
      signal: AbortSignal.timeout(settings.timeout_ms),
      ...(dispatcher && { dispatcher }),
    });
    await response.body?.cancel().catch(() => undefined);
    if (response.status >= 200 && response.status < 300) return { outcome: 'delivered' };
    // 410 Gone: the receiver says this endpoint is no more; retrying cannot help.
    if (response.status === 410) return { outcome: 'failed', error: 'the receiver answered 410' };
    const after = retryAfterMs(response.headers.get('retry-after'));
    return {
      outcome: 'retry',
      error: `the receiver answered ${response.status}`,
      ...(after !== undefined && { retry_after_ms: after }),
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { outcome: 'retry', error: `POST failed: ${reason}`.slice(0, 1000) };
  } finally {
    await dispatcher?.close().catch(() => undefined);
  }
}
