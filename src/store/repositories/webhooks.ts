// A tenant's signed webhooks (docs/channels.md, Webhooks), for both backends.

import type { WebhookInfo, WebhookRecord, WebhookRow } from '../rules/webhooks.ts';
import { toWebhookInfo, toWebhookRecord } from '../rules/webhooks.ts';
import { WEBHOOK_LIST } from '../rules/keyset.ts';
import { sql } from '../sql/query.ts';
import type { Op, Reads, Writes } from '../sql/steps.ts';
import { requireTenant } from './guards.ts';
import { listByName } from './keyset.ts';
import { deleteNamedRow, refuseCreatePastQuota } from './named-rows.ts';
import { bumpedUpdatedAt, wasCreated } from './upsert.ts';

/** Creates with `secret`, or changes the URL of an existing webhook (its secret stays). */
export function* putWebhook(
  tx: Writes,
  tenant: string,
  name: string,
  url: string,
  secret: string,
  maxWebhooks?: number,
): Op<{ webhook: WebhookInfo; created: boolean }> {
  yield* requireTenant(tx, tenant);
  yield* refuseCreatePastQuota(tx, 'tenant_webhooks', tenant, name, maxWebhooks);
  const row = yield* tx.one<WebhookRow>(
    sql`INSERT INTO tenant_webhooks (tenant, name, url, secret, created_at, updated_at)
        VALUES (${tenant}, ${name}, ${url}, ${secret}, ${tx.now}, ${tx.now})
        ON CONFLICT (tenant, name) DO UPDATE
          SET url = excluded.url, updated_at = ${bumpedUpdatedAt(tx, 'tenant_webhooks')}
        RETURNING *`,
  );
  if (!row) throw new Error('webhook row missing after write');
  return { webhook: toWebhookInfo(row), created: wasCreated(row) };
}

export function* getWebhook(db: Reads, tenant: string, name: string): Op<WebhookRecord | null> {
  const row = yield* db.one<WebhookRow>(
    sql`SELECT * FROM tenant_webhooks WHERE tenant = ${tenant} AND name = ${name}`,
  );
  return row ? toWebhookRecord(row) : null;
}

export function listWebhooks(db: Reads, tenant: string, limit: number, cursor?: string) {
  return listByName(db, WEBHOOK_LIST, toWebhookInfo, { tenant, limit, cursor });
}

export function* rotateWebhookSecret(
  tx: Writes,
  tenant: string,
  name: string,
  secret: string,
): Op<WebhookInfo | null> {
  const row = yield* tx.one<WebhookRow>(
    sql`UPDATE tenant_webhooks
          SET secret = ${secret}, updated_at = ${tx.dialect.greatest(sql`${tx.now}`, sql`updated_at + 1`)}
        WHERE tenant = ${tenant} AND name = ${name}
        RETURNING *`,
  );
  return row ? toWebhookInfo(row) : null;
}

export function deleteWebhook(tx: Writes, tenant: string, name: string): Op<boolean> {
  return deleteNamedRow(tx, 'tenant_webhooks', tenant, name);
}
