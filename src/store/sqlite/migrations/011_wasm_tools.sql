-- A tenant's WebAssembly tools (docs/wasm-tools.md): `manifest` is the checked PUT body
-- without the module (JSON), `module` the module bytes as keel runs them (its memory
-- maximum already rewritten to the limit), `sha256` their hex digest (the compiled-module
-- cache key).

CREATE TABLE wasm_tools (
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name TEXT NOT NULL,
  manifest TEXT NOT NULL,
  module BLOB NOT NULL,
  sha256 TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, name)
) STRICT;
