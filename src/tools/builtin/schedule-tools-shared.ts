// What the schedule tools share: the port check, the shape a model sees, and turning
// the port's validation errors into tool errors the model can act on.

import { z } from 'zod';
import { isKeelError } from '../../errors.ts';
import type { JsonObject, Schedule } from '../../types.ts';
import type { ToolContext } from '../tool.ts';
import { ToolError } from '../tool.ts';
import type { SchedulePort } from './schedule-port.ts';

export const scheduleNameSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, { message: 'lower-case letters, digits, ".", "_", "-"' })
  .describe('schedule name, unique per tenant');

export function schedulePort(context: ToolContext): SchedulePort {
  const port = context.ports.schedules;
  if (!port) throw new ToolError('SCHEDULES_UNAVAILABLE', 'schedules are not available here');
  return port;
}

export function describeSchedule(schedule: Schedule): JsonObject {
  return {
    name: schedule.name,
    scope: schedule.scope,
    payload: schedule.payload,
    cron: schedule.cron,
    timezone: schedule.timezone,
    every_ms: schedule.every_ms,
    at: schedule.at,
    enabled: schedule.enabled,
    misfire: schedule.misfire,
    delivery: schedule.delivery ? { destination: schedule.delivery.destination } : null,
    next_fire_at: schedule.next_fire_at,
    last_fired_at: schedule.last_fired_at,
    last_run_id: schedule.last_run_id,
    last_error: schedule.last_error,
  };
}

/** Errors with a catalogue code (validation, not found) reach the model as tool errors. */
export async function asToolErrors<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (
      isKeelError(error, 'VALIDATION_FAILED') ||
      isKeelError(error, 'SCHEDULE_NOT_FOUND') ||
      isKeelError(error, 'AGENT_NOT_FOUND')
    ) {
      throw new ToolError(error.code, error.message);
    }
    throw error;
  }
}
