// `keel schedules list|get|put|rm`: a tenant's schedules (put reads TOML or JSON).

import type { ResourceSpec } from './resource.ts';
import { resourceCommand, resourceUsage } from './resource.ts';

const SCHEDULES: ResourceSpec = {
  noun: 'schedules',
  list: ({ keel, tenant }, _, query) => keel.schedules.list(tenant, query),
  listKey: 'schedules',
  columns: [
    { title: 'NAME', value: (schedule) => schedule.name },
    { title: 'AGENT', value: (schedule) => schedule.agent },
    { title: 'SCOPE', value: (schedule) => schedule.scope },
    { title: 'WHEN', value: (s) => s.cron ?? (s.every_ms ? `every ${s.every_ms} ms` : s.at) },
    { title: 'NEXT', value: (schedule) => schedule.next_fire_at },
    { title: 'ENABLED', value: (schedule) => schedule.enabled },
  ],
  get: ({ keel, tenant }, _, name) => keel.schedules.get(tenant, name),
  itemKey: 'schedule',
  put: ({ keel, tenant }, name, text) => keel.schedules.putText(tenant, name, text),
  putAsJson: true,
  remove: ({ keel, tenant }, _, name) => keel.schedules.delete(tenant, name),
};

export const SCHEDULES_USAGE = resourceUsage(SCHEDULES);
export const schedulesCommand = resourceCommand(SCHEDULES);
