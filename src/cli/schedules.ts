// `keel schedules list|get|put|rm`: a tenant's schedules (put reads TOML or JSON).

import type { ResourceSpec } from './resource.ts';
import { resourceCommand, resourceUsage } from './resource.ts';

const SCHEDULES: ResourceSpec = {
  noun: 'schedules',
  listPath: () => '/schedules',
  listKey: 'schedules',
  columns: [
    { title: 'NAME', value: (schedule) => schedule.name },
    { title: 'AGENT', value: (schedule) => schedule.agent },
    { title: 'SCOPE', value: (schedule) => schedule.scope },
    { title: 'WHEN', value: (s) => s.cron ?? (s.every_ms ? `every ${s.every_ms} ms` : s.at) },
    { title: 'NEXT', value: (schedule) => schedule.next_fire_at },
    { title: 'ENABLED', value: (schedule) => schedule.enabled },
  ],
  itemPath: (_, name) => `/schedules/${encodeURIComponent(name)}`,
  itemKey: 'schedule',
  put: true,
  putAsJson: true,
};

export const SCHEDULES_USAGE = resourceUsage(SCHEDULES);
export const schedulesCommand = resourceCommand(SCHEDULES);
