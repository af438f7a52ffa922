-- MCP servers a tenant attached or registered (docs/mcp.md) and the tenant's secrets
-- (header values for its HTTP servers). `spec` is the tenant's PUT body as JSON, `tools`
-- the tools discovered at the last successful connection, `last_error` the last failure.

CREATE TABLE mcp_servers (
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name TEXT NOT NULL,
  spec TEXT NOT NULL,
  tools TEXT NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, name)
) STRICT;

CREATE TABLE tenant_secrets (
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, name)
) STRICT;
