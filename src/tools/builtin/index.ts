// The built-in tools, one per file: clock, calculator, artifacts, memory, schedules and
// the web. Test-only tools live in test/ and are never part of this list.

import type { AnyToolSpec } from '../tool.ts';
import { artifactListTool } from './artifact-list.ts';
import { artifactReadTool } from './artifact-read.ts';
import { artifactWriteTool } from './artifact-write.ts';
import { calcEvalTool } from './calc-eval.ts';
import { createClockNowTool } from './clock-now.ts';
import { memoryDeleteTool } from './memory-delete.ts';
import { memoryGetTool } from './memory-get.ts';
import { memoryListTool } from './memory-list.ts';
import { memoryPutTool } from './memory-put.ts';
import { memorySearchTool } from './memory-search.ts';
import { scheduleDeleteTool } from './schedule-delete.ts';
import { scheduleGetTool } from './schedule-get.ts';
import { scheduleListTool } from './schedule-list.ts';
import { schedulePutTool } from './schedule-put.ts';
import { webFetchTool } from './web-fetch.ts';
import { webSearchTool } from './web-search.ts';

export function builtinTools(): AnyToolSpec[] {
  return [
    createClockNowTool(),
    calcEvalTool,
    artifactReadTool,
    artifactWriteTool,
    artifactListTool,
    memoryPutTool,
    memoryGetTool,
    memorySearchTool,
    memoryListTool,
    memoryDeleteTool,
    schedulePutTool,
    scheduleGetTool,
    scheduleListTool,
    scheduleDeleteTool,
    webFetchTool,
    webSearchTool,
  ];
}
