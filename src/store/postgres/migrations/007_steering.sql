-- Steering (docs/agent-loop.md, "Steering"). A turn submitted with on_busy=steer while
-- its lane has a running run is stored as a queued run that names that run in
-- steer_target: the running run takes it into its journal at a step boundary (one
-- fenced transaction moves it here to run_steers and deletes the queued row), and if the
-- running run ends first, the row is an ordinary queued run of the lane and runs next.
ALTER TABLE runs ADD COLUMN steer_target text COLLATE "C";
CREATE INDEX runs_pending_steers ON runs (steer_target, queue_pos)
  WHERE steer_target IS NOT NULL AND status = 'queued';

-- A steered turn taken into a running run: its journal entry and, for a replayed
-- request_id, the fingerprint of the request.
CREATE TABLE run_steers (
  steer_id text COLLATE "C" PRIMARY KEY,
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  entry_seq integer NOT NULL,
  request_id text COLLATE "C",
  fingerprint text NOT NULL,
  created_at bigint NOT NULL
);
CREATE UNIQUE INDEX run_steers_request_id ON run_steers (tenant, request_id)
  WHERE request_id IS NOT NULL;
CREATE INDEX run_steers_by_run ON run_steers (run_id);
