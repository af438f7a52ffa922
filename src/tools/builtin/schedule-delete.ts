import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { scheduleNameSchema, schedulePort } from './schedule-tools-shared.ts';

export const scheduleDeleteTool = defineTool({
  name: 'schedule_delete',
  family: 'schedule',
  // Deleting twice leaves the same state; the second answer is deleted: false.
  effect: 'idempotent',
  description: "Delete one of this agent's schedules in this conversation.",
  input: z.strictObject({ name: scheduleNameSchema }),
  run: async ({ name }, context) => ({ deleted: await schedulePort(context).delete(name) }),
});
