-- MCP servers a tenant attached or registered (docs/mcp.md) and the tenant's secrets
-- (header values for its HTTP servers). `spec` is the tenant's PUT body as JSON, `tools`
-- the tools discovered at the last successful connection, `last_error` the last failure.

CREATE TABLE mcp_servers (
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name text COLLATE "C" NOT NULL,
  spec text NOT NULL,
  tools text NOT NULL,
  last_error text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant, name)
);

CREATE TABLE tenant_secrets (
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name text COLLATE "C" NOT NULL,
  value text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant, name)
);
