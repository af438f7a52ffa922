// Tool names the model sees for MCP tools: `mcp_<server>_<tool>`, lower-case letters,
// digits and "_" only, at most 64 characters (what every provider accepts).

export const MCP_FAMILY = 'mcp';
export const MAX_TOOL_NAME = 64;

export function mcpToolName(server: string, tool: string): string {
  const clean = (text: string) => text.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  return `mcp_${clean(server)}_${clean(tool)}`.slice(0, MAX_TOOL_NAME);
}
