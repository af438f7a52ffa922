// A tenant's signed webhooks (docs/channels.md, Webhooks).

import type { WebhookInfo, WebhookRecord, WebhookRow } from '../rules/webhooks.ts';
import { toWebhookInfo, toWebhookRecord } from '../rules/webhooks.ts';
import type { StoreContext } from './context.ts';
import type { Page } from '../store.ts';
import { WEBHOOK_LIST } from '../rules/keyset.ts';
import { listByKey } from './keyset.ts';
import { requireTenant } from './guards.ts';
import { deleteNamedRow, refuseCreatePastQuota } from './named-rows.ts';

/** Creates with `secret`, or changes the URL of an existing webhook (its secret stays). */
export function putWebhook(
  ctx: StoreContext,
  tenant: string,
  name: string,
  url: string,
  secret: string,
  maxWebhooks?: number,
): { webhook: WebhookInfo; created: boolean } {
  return ctx.write(() => {
    requireTenant(ctx, tenant);
    refuseCreatePastQuota(ctx, 'tenant_webhooks', tenant, name, maxWebhooks);
    const now = ctx.now();
    const updated = ctx
      .sql(
        `UPDATE tenant_webhooks SET url = ?, updated_at = MAX(?, updated_at + 1)
         WHERE tenant = ? AND name = ?`,
      )
      .run(url, now, tenant, name).changes;
    if (updated === 0) {
      ctx
        .sql(
          `INSERT INTO tenant_webhooks (tenant, name, url, secret, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?)`,
        )
        .run(tenant, name, url, secret, now, now);
    }
    const row = webhookRow(ctx, tenant, name);
    if (!row) throw new Error('webhook row missing after write');
    return { webhook: toWebhookInfo(row), created: updated === 0 };
  });
}

function webhookRow(ctx: StoreContext, tenant: string, name: string): WebhookRow | undefined {
  return ctx
    .sql('SELECT * FROM tenant_webhooks WHERE tenant = ? AND name = ?')
    .get(tenant, name) as WebhookRow | undefined;
}

export function getWebhook(ctx: StoreContext, tenant: string, name: string): WebhookRecord | null {
  const row = webhookRow(ctx, tenant, name);
  return row ? toWebhookRecord(row) : null;
}

export function listWebhooks(
  ctx: StoreContext,
  tenant: string,
  limit: number,
  cursor?: string,
): Page<WebhookInfo> {
  return listByKey(
    ctx,
    { ...WEBHOOK_LIST, tenant, limit, cursor },
    toWebhookInfo,
    (row: WebhookRow) => row.name,
  );
}

export function rotateWebhookSecret(
  ctx: StoreContext,
  tenant: string,
  name: string,
  secret: string,
): WebhookInfo | null {
  return ctx.write(() => {
    const changed = ctx
      .sql(
        `UPDATE tenant_webhooks SET secret = ?, updated_at = MAX(?, updated_at + 1)
         WHERE tenant = ? AND name = ?`,
      )
      .run(secret, ctx.now(), tenant, name).changes;
    const row = changed > 0 ? webhookRow(ctx, tenant, name) : undefined;
    return row ? toWebhookInfo(row) : null;
  });
}

export function deleteWebhook(ctx: StoreContext, tenant: string, name: string): boolean {
  return deleteNamedRow(ctx, 'tenant_webhooks', tenant, name);
}
