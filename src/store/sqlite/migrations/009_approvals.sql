-- keel:foreign-keys-off
-- Approvals (docs/approvals.md): a run whose tool call needs a person's decision is
-- `waiting` — no lease, no worker, its lane still held. SQLite cannot widen a CHECK in
-- place, so `runs` is rebuilt (the documented 12-step table change: foreign keys off for
-- this migration, checked with foreign_key_check before it commits; see migrations.ts).

CREATE TABLE runs_rebuilt (
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
    CHECK (status IN ('queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled')),
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

INSERT INTO runs_rebuilt SELECT * FROM runs;
DROP TABLE runs;
ALTER TABLE runs_rebuilt RENAME TO runs;

CREATE UNIQUE INDEX runs_request_id ON runs (tenant, request_id) WHERE request_id IS NOT NULL;
CREATE UNIQUE INDEX runs_one_running_per_lane ON runs (tenant, agent, scope)
  WHERE status = 'running';
-- The lane backstop with approvals: a waiting run holds its lane like a running one.
CREATE UNIQUE INDEX runs_one_holder_per_lane ON runs (tenant, agent, scope)
  WHERE status IN ('running', 'waiting');
CREATE INDEX runs_queue ON runs (queue_pos) WHERE status = 'queued';
CREATE INDEX runs_lane ON runs (tenant, agent, scope, status, queue_pos);
CREATE INDEX runs_leases ON runs (lease_expires_at) WHERE status = 'running';
CREATE INDEX runs_by_tenant ON runs (tenant, run_id);
CREATE INDEX runs_by_status ON runs (status);
CREATE INDEX runs_queued_by_tenant ON runs (tenant, queue_pos) WHERE status = 'queued';

-- One row per tool call that needed a decision. `pending` until a person decides, the
-- timeout sweep denies it (`timed_out`), or its run ends otherwise (`cancelled`).
CREATE TABLE approvals (
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  call_id TEXT NOT NULL,
  tenant TEXT NOT NULL,
  agent TEXT NOT NULL,
  scope TEXT NOT NULL,
  step INTEGER NOT NULL,
  tool TEXT NOT NULL,
  arguments TEXT NOT NULL,
  status TEXT NOT NULL
    CHECK (status IN ('pending', 'approved', 'denied', 'timed_out', 'cancelled')),
  note TEXT,
  requested_at INTEGER NOT NULL,
  expires_at INTEGER,
  decided_at INTEGER,
  PRIMARY KEY (run_id, call_id)
) STRICT;

CREATE INDEX approvals_pending ON approvals (tenant, requested_at, run_id, call_id)
  WHERE status = 'pending';
CREATE INDEX approvals_due ON approvals (expires_at)
  WHERE status = 'pending' AND expires_at IS NOT NULL;
