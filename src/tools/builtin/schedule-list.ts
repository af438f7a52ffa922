import { z } from 'zod';
import { defineTool } from '../tool.ts';
import { describeSchedule, schedulePort } from './schedule-tools-shared.ts';

export const scheduleListTool = defineTool({
  name: 'schedule_list',
  family: 'schedule',
  effect: 'read_only',
  description: "List this agent's schedules in this conversation.",
  input: z.strictObject({ limit: z.number().int().min(1).max(100).default(50) }),
  run: async ({ limit }, context) => {
    const schedules = await schedulePort(context).list(limit);
    return { schedules: schedules.map(describeSchedule) };
  },
});
