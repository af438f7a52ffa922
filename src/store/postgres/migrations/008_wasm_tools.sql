-- A tenant's WebAssembly tools (docs/wasm-tools.md): `manifest` is the checked PUT body
-- without the module (JSON), `module` the module bytes as keel runs them (its memory
-- maximum already rewritten to the limit), `sha256` their hex digest (the compiled-module
-- cache key).

CREATE TABLE wasm_tools (
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name text COLLATE "C" NOT NULL,
  manifest text NOT NULL,
  module bytea NOT NULL,
  sha256 text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant, name)
);
