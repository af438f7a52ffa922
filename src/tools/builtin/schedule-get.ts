import { z } from 'zod';
import { defineTool, ToolError } from '../tool.ts';
import { describeSchedule, scheduleNameSchema, schedulePort } from './schedule-tools-shared.ts';

export const scheduleGetTool = defineTool({
  name: 'schedule_get',
  family: 'schedule',
  effect: 'read_only',
  description: "Read one of this agent's schedules in this conversation by name.",
  input: z.strictObject({ name: scheduleNameSchema }),
  run: async ({ name }, context) => {
    const schedule = await schedulePort(context).get(name);
    if (!schedule) throw new ToolError('SCHEDULE_NOT_FOUND', `schedule ${name} not found`);
    return { schedule: describeSchedule(schedule) };
  },
});
