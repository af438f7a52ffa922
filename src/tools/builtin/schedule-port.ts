// The schedule capability a tool call receives: bound to the calling agent AND scope.
// Whatever a tool passes, it can neither see nor change another agent's or scope's
// schedule (another's is "not found", so names do not leak).

import type { DeliveryRequest, JsonObject, MisfirePolicy, Schedule } from '../../types.ts';

export interface ScheduleToolDocument {
  payload: JsonObject;
  cron?: string | undefined;
  timezone?: string | undefined;
  every_ms?: number | undefined;
  at?: string | undefined;
  enabled?: boolean | undefined;
  misfire?: MisfirePolicy | undefined;
  delivery?: DeliveryRequest | null | undefined;
}

export interface SchedulePort {
  /** Throws a KeelError VALIDATION_FAILED (bad timing) or SCHEDULE_NOT_FOUND (not ours). */
  put(name: string, doc: ScheduleToolDocument): Promise<{ schedule: Schedule; created: boolean }>;
  get(name: string): Promise<Schedule | null>;
  list(limit: number): Promise<Schedule[]>;
  delete(name: string): Promise<boolean>;
}
