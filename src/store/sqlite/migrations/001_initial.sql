-- keel schema v1. Times are integer milliseconds since the epoch (compared as numbers);
-- JSON documents are TEXT. STRICT tables so a wrong type is an error, not a coercion.

CREATE TABLE tenants (
  name TEXT PRIMARY KEY,
  metadata TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE tokens (
  id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name TEXT NOT NULL,
  hash TEXT NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX tokens_by_tenant ON tokens (tenant, created_at);

CREATE TABLE agents (
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name TEXT NOT NULL,
  spec TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, name)
) STRICT;

-- queue_pos is the rowid: strictly increasing on insert, so it is the FIFO order.
-- agent has no foreign key on purpose: a run outlives its agent (as a failed run).
CREATE TABLE runs (
  queue_pos INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  agent TEXT NOT NULL,
  scope TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('api', 'schedule')),
  input TEXT NOT NULL,
  request_id TEXT,
  fingerprint TEXT NOT NULL,
  delivery_destination TEXT,
  status TEXT NOT NULL
    CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  output TEXT,
  error TEXT,
  attempt INTEGER NOT NULL DEFAULT 0,
  steps INTEGER NOT NULL DEFAULT 0,
  usage TEXT NOT NULL,
  elapsed_ms INTEGER NOT NULL DEFAULT 0,
  lease_owner TEXT,
  lease_expires_at INTEGER,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER
) STRICT;

-- Tenant-scoped idempotency key.
CREATE UNIQUE INDEX runs_request_id ON runs (tenant, request_id) WHERE request_id IS NOT NULL;
-- The lane backstop: at most one running run per (tenant, agent, scope), whatever the
-- claim query does.
CREATE UNIQUE INDEX runs_one_running_per_lane ON runs (tenant, agent, scope)
  WHERE status = 'running';
-- Claim: the queue in FIFO order, the lane probes, expired leases.
CREATE INDEX runs_queue ON runs (queue_pos) WHERE status = 'queued';
CREATE INDEX runs_lane ON runs (tenant, agent, scope, status, queue_pos);
CREATE INDEX runs_leases ON runs (lease_expires_at) WHERE status = 'running';
-- Keyset paging, newest first (run ids are UUIDv7, time-ordered).
CREATE INDEX runs_by_tenant ON runs (tenant, run_id);
CREATE INDEX runs_by_status ON runs (status);

CREATE TABLE run_entries (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('user', 'assistant', 'tool_result', 'note')),
  body TEXT NOT NULL,
  ts INTEGER NOT NULL,
  PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE run_events (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  ts INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE threads (
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  agent TEXT NOT NULL,
  scope TEXT NOT NULL,
  revision INTEGER NOT NULL,
  turns INTEGER NOT NULL,
  messages TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, agent, scope)
) STRICT;
CREATE INDEX threads_newest ON threads (tenant, agent, updated_at, scope);

-- claim_token_hash holds sha256(token): a leaked database does not hand out claims.
CREATE TABLE deliveries (
  delivery_id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  run_id TEXT NOT NULL UNIQUE REFERENCES runs (run_id) ON DELETE CASCADE,
  destination TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'claimed', 'delivered', 'failed', 'dead')),
  attempt INTEGER NOT NULL DEFAULT 0,
  idempotency_key TEXT NOT NULL UNIQUE,
  next_attempt_at INTEGER NOT NULL,
  claim_token_hash TEXT,
  claim_expires_at INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE INDEX deliveries_due ON deliveries (tenant, status, next_attempt_at);
CREATE INDEX deliveries_claims ON deliveries (tenant, status, claim_expires_at);
CREATE INDEX deliveries_by_tenant ON deliveries (tenant, delivery_id);
CREATE INDEX deliveries_by_status ON deliveries (status);
