// A tenant's signed webhooks (docs/channels.md, Webhooks).

import type { WebhookInfo, WebhookRecord, WebhookRow } from '../rules/webhooks.ts';
import { toWebhookInfo, toWebhookRecord } from '../rules/webhooks.ts';
import type { PgContext, Sql } from './context.ts';
import type { Page } from '../store.ts';
import { WEBHOOK_LIST } from '../rules/keyset.ts';
import { listByKey } from './keyset.ts';
import { requireTenant } from './guards.ts';
import { deleteNamedRow, refuseCreatePastQuota } from './named-rows.ts';

/** Creates with `secret`, or changes the URL of an existing webhook (its secret stays). */
export async function putWebhook(
  ctx: PgContext,
  tenant: string,
  name: string,
  url: string,
  secret: string,
  maxWebhooks?: number,
): Promise<{ webhook: WebhookInfo; created: boolean }> {
  return ctx.write(async (tx) => {
    await requireTenant(tx, tenant);
    await refuseCreatePastQuota(tx, 'tenant_webhooks', tenant, name, maxWebhooks);
    const row = await tx.one<WebhookRow & { created: boolean }>(
      `INSERT INTO tenant_webhooks (tenant, name, url, secret, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $5)
       ON CONFLICT (tenant, name) DO UPDATE
         SET url = EXCLUDED.url,
             updated_at = GREATEST(EXCLUDED.updated_at, tenant_webhooks.updated_at + 1)
       RETURNING *, (xmax = 0) AS created`,
      [tenant, name, url, secret, tx.now],
    );
    if (!row) throw new Error('webhook row missing after write');
    return { webhook: toWebhookInfo(row), created: row.created };
  });
}

export async function getWebhook(
  sql: Sql,
  tenant: string,
  name: string,
): Promise<WebhookRecord | null> {
  const row = await sql.one<WebhookRow>(
    'SELECT * FROM tenant_webhooks WHERE tenant = $1 AND name = $2',
    [tenant, name],
  );
  return row ? toWebhookRecord(row) : null;
}

export async function listWebhooks(
  sql: Sql,
  tenant: string,
  limit: number,
  cursor?: string,
): Promise<Page<WebhookInfo>> {
  return listByKey(
    sql,
    { ...WEBHOOK_LIST, tenant, limit, cursor },
    toWebhookInfo,
    (row: WebhookRow) => row.name,
  );
}

export async function rotateWebhookSecret(
  ctx: PgContext,
  tenant: string,
  name: string,
  secret: string,
): Promise<WebhookInfo | null> {
  return ctx.write(async (tx) => {
    const row = await tx.one<WebhookRow>(
      `UPDATE tenant_webhooks
         SET secret = $3, updated_at = GREATEST($4, updated_at + 1)
       WHERE tenant = $1 AND name = $2
       RETURNING *`,
      [tenant, name, secret, tx.now],
    );
    return row ? toWebhookInfo(row) : null;
  });
}

export function deleteWebhook(ctx: PgContext, tenant: string, name: string): Promise<boolean> {
  return deleteNamedRow(ctx, 'tenant_webhooks', tenant, name);
}
