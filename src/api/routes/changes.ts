// GET T/changes: Server-Sent Events naming each committed change of one tenant — a run
// queued, a new trace event, a run terminal, and an agent, schedule, delivery, MCP
// server or WebAssembly tool written or removed (`resource.changed`) — so a list (the
// console's views) re-reads when something changed instead of polling. Only ids,
// names and statuses travel here; the content is read through the ordinary routes.

import type { ApiDepsWith, ZodApp } from '../deps.ts';
import { tenantParams } from '../schemas.ts';
import { openSseStream } from '../sse.ts';
import type { StoreChanges } from '../../store/store.ts';

type Deps = ApiDepsWith<StoreChanges>;

const HEARTBEAT_MS = 15_000;

export function changeRoutes(app: ZodApp, deps: Deps): void {
  app.get(
    '/v1/tenants/:tenant/changes',
    {
      config: { auth: 'tenant', long_lived: true },
      schema: {
        tags: ['runs'],
        description:
          'Server-Sent Events: `run.queued`, `run.event`, `run.terminal` ({run_id, seq?, status?}) for every run of the tenant, `resource.changed` ({resource, name}; resource one of agent, schedule, delivery, mcp_server, wasm_tool) when one of those was written or removed, and `resync` when changes may have been missed. Never ends by itself.',
        params: tenantParams,
      },
    },
    async (request, reply) => {
      const { tenant } = request.params;
      void reply.hijack();
      const sse = openSseStream(reply.raw, { 'x-request-id': request.id }, HEARTBEAT_MS);
      const unsubscribe = deps.store.subscribe((change) => {
        if (change.kind === 'store.resync') sse.send({ event: 'resync', data: {} });
        else if (change.kind === 'resource.changed') {
          if (change.tenant === tenant) {
            sse.send({
              event: change.kind,
              data: { resource: change.resource, name: change.name },
            });
          }
        } else if (change.tenant === tenant) {
          const { kind, tenant: _tenant, ...data } = change;
          sse.send({ event: kind, data });
        }
      });
      sse.onClose(unsubscribe);
    },
  );
}
