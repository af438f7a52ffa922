// Tables of rows a tenant names itself (MCP servers, secrets, webhooks, WebAssembly tools),
// each keyed by (tenant, name). A closed list: the table name goes into SQL text, never a caller's string.
export type NamedRowTable = 'mcp_servers' | 'tenant_secrets' | 'tenant_webhooks' | 'wasm_tools';
