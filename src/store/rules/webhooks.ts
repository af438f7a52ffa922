// Rows of tenant_webhooks and their store shape, for both backends (docs/channels.md,
// Webhooks). The signing secret leaves the store only through getWebhook, for the
// delivery worker; listings never carry it.

import { iso } from '../rows.ts';

export interface WebhookRow {
  tenant: string;
  name: string;
  url: string;
  secret: string;
  created_at: number;
  updated_at: number;
}

/** A webhook as the API shows it: never the secret. */
export interface WebhookInfo {
  name: string;
  url: string;
  created_at: string;
  updated_at: string;
}

/** A webhook as the delivery worker needs it: with the signing secret. */
export interface WebhookRecord extends WebhookInfo {
  tenant: string;
  secret: string;
}

export function toWebhookInfo(row: WebhookRow): WebhookInfo {
  return {
    name: row.name,
    url: row.url,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

export function toWebhookRecord(row: WebhookRow): WebhookRecord {
  return { ...toWebhookInfo(row), tenant: row.tenant, secret: row.secret };
}
