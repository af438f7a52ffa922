-- Approvals (docs/approvals.md): a run whose tool call needs a person's decision is
-- `waiting` — no lease, no worker, its lane still held.

ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check
  CHECK (status IN ('queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'));

-- The lane backstop with approvals: a waiting run holds its lane like a running one.
CREATE UNIQUE INDEX runs_one_holder_per_lane ON runs (tenant, agent, scope)
  WHERE status IN ('running', 'waiting');
DROP INDEX runs_active_by_agent;
CREATE INDEX runs_active_by_agent ON runs (tenant, agent)
  WHERE status IN ('queued', 'running', 'waiting');

-- One row per tool call that needed a decision. `pending` until a person decides, the
-- timeout sweep denies it (`timed_out`), or its run ends otherwise (`cancelled`).
CREATE TABLE approvals (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  call_id text COLLATE "C" NOT NULL,
  tenant text COLLATE "C" NOT NULL,
  agent text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  step integer NOT NULL,
  tool text NOT NULL,
  arguments text NOT NULL,
  status text NOT NULL
    CHECK (status IN ('pending', 'approved', 'denied', 'timed_out', 'cancelled')),
  note text,
  requested_at bigint NOT NULL,
  expires_at bigint,
  decided_at bigint,
  PRIMARY KEY (run_id, call_id)
);

CREATE INDEX approvals_pending ON approvals (tenant, requested_at, run_id, call_id)
  WHERE status = 'pending';
CREATE INDEX approvals_due ON approvals (expires_at)
  WHERE status = 'pending' AND expires_at IS NOT NULL;
