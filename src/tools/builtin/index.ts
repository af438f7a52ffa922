// The built-in tools, one per file. Later capabilities (artifacts, memory, schedules,
// web) join this list.

import type { AnyToolSpec } from '../tool.ts';
import { calcEvalTool } from './calc-eval.ts';
import { clockNowTool } from './clock-now.ts';

export function builtinTools(): AnyToolSpec[] {
  return [clockNowTool, calcEvalTool];
}
