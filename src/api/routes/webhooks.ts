// T/webhooks: a tenant's signed webhooks (docs/channels.md, Webhooks). A delivery to
// `webhook:<name>` is POSTed to the webhook's URL by keel's delivery worker. keel makes
// the signing secret and shows it exactly twice in the webhook's life: in the answer
// that creates it and in the answer of a rotation. No listing ever carries it.

import { z } from 'zod';
import { KeelError } from '../../errors.ts';
import { newWebhookSecret } from '../../channels/webhooks/signing.ts';
import { checkWebhookUrl, parseWebhookUrl } from '../../channels/webhooks/url-check.ts';
import type { WebhookStore } from '../../store/store.ts';
import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { namedListQuery, nameSchema, tenantParams } from '../schemas.ts';
import { listPager } from '../page-budget.ts';

type Deps = ApiDepsWith<WebhookStore>;

const webhookParams = z.strictObject({ tenant: nameSchema, name: nameSchema });
const putBody = z.strictObject({
  url: z
    .string()
    .min(1)
    .max(2048)
    .describe('http(s) URL; a private address only when the operator allows the host'),
});

function notFound(name: string): KeelError {
  return new KeelError('WEBHOOK_NOT_FOUND', `webhook ${name} not found`);
}

export function webhookRoutes(app: ZodApp, deps: Deps): void {
  const { store } = deps;
  const tags = ['webhooks'];
  const allowHosts = deps.config.webhooks.allow_hosts;

  const listPage = listPager(deps.config.tenant_limits.list_page_bytes);

  app.get(
    '/v1/tenants/:tenant/webhooks',
    {
      config: { auth: 'tenant' },
      schema: { tags, params: tenantParams, querystring: namedListQuery },
    },
    async (request) => {
      const page = await listPage(request.query, (size, after) =>
        store.listWebhooks(request.params.tenant, size, after),
      );
      return { webhooks: page.items, next_cursor: page.next_cursor };
    },
  );

  app.put(
    '/v1/tenants/:tenant/webhooks/:name',
    { config: { auth: 'tenant' }, schema: { tags, params: webhookParams, body: putBody } },
    async (request, reply) => {
      const { tenant, name } = request.params;
      const parsed = parseWebhookUrl(request.body.url);
      if (typeof parsed === 'string') {
        throw new KeelError('VALIDATION_FAILED', `body.url: ${parsed}`, { field: 'body.url' });
      }
      const verdict = await checkWebhookUrl(request.body.url, allowHosts);
      if (!verdict.ok) {
        throw new KeelError('VALIDATION_FAILED', `body.url: ${verdict.reason}`, {
          field: 'body.url',
        });
      }
      const secret = newWebhookSecret();
      const { webhook, created } = await store.putWebhook(
        tenant,
        name,
        request.body.url,
        secret,
        deps.config.tenant_limits.webhooks,
      );
      // Only the creating answer carries the secret; a URL change keeps the old one.
      if (created) return reply.code(201).send({ webhook, secret });
      return reply.code(200).send({ webhook });
    },
  );

  app.get(
    '/v1/tenants/:tenant/webhooks/:name',
    { config: { auth: 'tenant' }, schema: { tags, params: webhookParams } },
    async (request) => {
      const found = await store.getWebhook(request.params.tenant, request.params.name);
      if (!found) throw notFound(request.params.name);
      const { name, url, created_at, updated_at } = found;
      return { webhook: { name, url, created_at, updated_at } };
    },
  );

  app.post(
    '/v1/tenants/:tenant/webhooks/:name/rotate',
    { config: { auth: 'tenant' }, schema: { tags, params: webhookParams } },
    async (request) => {
      const secret = newWebhookSecret();
      const webhook = await store.rotateWebhookSecret(
        request.params.tenant,
        request.params.name,
        secret,
      );
      if (!webhook) throw notFound(request.params.name);
      return { webhook, secret };
    },
  );

  app.delete(
    '/v1/tenants/:tenant/webhooks/:name',
    { config: { auth: 'tenant' }, schema: { tags, params: webhookParams } },
    async (request) => {
      if (!(await store.deleteWebhook(request.params.tenant, request.params.name))) {
        throw notFound(request.params.name);
      }
      return { deleted: true };
    },
  );
}
