// What a tool's call does to the world, so the runtime knows what it may repeat after a
// crash (docs/agent-loop.md). A leaf: the event union (src/events.ts) names it, and the
// console's type check reads that union without the tool machinery behind tool.ts.

export const TOOL_EFFECTS = ['read_only', 'idempotent', 'effectful'] as const;
export type ToolEffect = (typeof TOOL_EFFECTS)[number];
