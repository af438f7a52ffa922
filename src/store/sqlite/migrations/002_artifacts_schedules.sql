-- keel schema v2: artifacts (per-tenant byte blobs addressed by path) and schedules.
-- Both cascade with their tenant, so deleting a tenant removes them in its transaction.

CREATE TABLE artifacts (
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  path TEXT NOT NULL,
  body BLOB NOT NULL,
  content_type TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  metadata TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, path)
) STRICT;

-- spec holds the validated timing (cron + timezone | every_ms | at) as JSON; the store
-- never interprets it, it only compares next_fire_at with its clock. revision changes on
-- every write, so a fire computed from an older read is refused.
CREATE TABLE schedules (
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name TEXT NOT NULL,
  agent TEXT NOT NULL,
  scope TEXT NOT NULL,
  payload TEXT NOT NULL,
  timing TEXT NOT NULL,
  misfire TEXT NOT NULL CHECK (misfire IN ('skip', 'run_once')),
  delivery_destination TEXT,
  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  next_fire_at INTEGER,
  last_fired_at INTEGER,
  last_run_id TEXT,
  last_error TEXT,
  revision INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, name)
) STRICT;
-- The scheduler's due lookup: enabled schedules by next fire time, bounded per tick.
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE enabled = 1 AND next_fire_at IS NOT NULL;
CREATE INDEX schedules_by_agent ON schedules (tenant, agent, scope, name);
