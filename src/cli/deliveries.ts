// `keel deliveries list [--status S]`: a tenant's outbox (adapters claim and ack over HTTP).

import type { ResourceSpec } from './resource.ts';
import { resourceCommand, resourceUsage } from './resource.ts';

const DELIVERIES: ResourceSpec = {
  noun: 'deliveries',
  list: ({ keel, tenant }, _, query) => keel.deliveries.list(tenant, query),
  listKey: 'deliveries',
  filters: ['status'],
  columns: [
    { title: 'ID', value: (delivery) => delivery.delivery_id },
    { title: 'STATUS', value: (delivery) => delivery.status },
    { title: 'DESTINATION', value: (delivery) => delivery.destination },
    { title: 'RUN', value: (delivery) => delivery.run_id },
    { title: 'ATTEMPT', value: (delivery) => delivery.attempt },
  ],
};

export const DELIVERIES_USAGE = resourceUsage(DELIVERIES);
export const deliveriesCommand = resourceCommand(DELIVERIES);
