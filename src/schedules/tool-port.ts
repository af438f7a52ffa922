// The schedule port of one tool call: every read and write is confined to the calling
// run's agent and scope, in the store's own transaction (ownership is checked where the
// row is written, not before).

import type { ScheduleStore } from '../store/store.ts';
import type { SchedulePort } from '../tools/builtin/schedule-port.ts';
import { scheduleWriteOf } from './schedule-input.ts';

export function createSchedulePort(
  store: ScheduleStore,
  owner: { tenant: string; agent: string; scope: string },
  now: () => number,
  maxSchedules: number | null = null,
): SchedulePort {
  const mine = { agent: owner.agent, scope: owner.scope };
  return {
    async put(name, doc) {
      const write = {
        ...scheduleWriteOf({ ...doc, ...mine }, now(), 'arguments'),
        max_schedules: maxSchedules,
      };
      return store.putSchedule(owner.tenant, name, write, mine);
    },
    async get(name) {
      const schedule = await store.getSchedule(owner.tenant, name);
      return schedule && schedule.agent === mine.agent && schedule.scope === mine.scope
        ? schedule
        : null;
    },
    async list(limit) {
      return (await store.listSchedules(owner.tenant, mine, limit)).items;
    },
    async delete(name) {
      return store.deleteSchedule(owner.tenant, name, mine);
    },
  };
}
