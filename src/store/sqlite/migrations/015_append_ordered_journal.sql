-- Fewer pages per commit (docs/store.md, "Pages a turn writes"). A WAL commit appends every
-- page it changed, whole; a turn's writes are small, so what a turn costs on disk is the
-- number of distinct pages its writes land on. Read off the WAL of the turn benchmark
-- (64 turns in flight, ~1 group commit per turn), before this migration:
--
-- * run_events and run_entries were WITHOUT ROWID tables keyed (run_id, seq). The runs in
--   flight append to their own key ranges side by side, so every append split a page in
--   the middle of the tree: half-empty leaves (40 % full) and 14.6 + 7.1 pages per commit.
--   As rowid tables they fill their last pages in commit order; only the narrow
--   (run_id, seq) index is spread over the runs in flight: 10.7 + 6.3 pages.
-- * usage_ledger was a rowid table with its key (run_id, day, model) in a second b-tree;
--   WITHOUT ROWID keeps one.
-- * runs_by_status changed on every status change (2.4 pages per commit) for one reader,
--   the status counts of /metrics and the console overview, which a scan of the runs_lane index
--   (status is in it) answers as well: both read every run.

CREATE TABLE run_events_rebuilt (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  ts INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL
) STRICT;
INSERT INTO run_events_rebuilt (run_id, seq, ts, type, data)
  SELECT run_id, seq, ts, type, data FROM run_events ORDER BY run_id, seq;
DROP TABLE run_events;
ALTER TABLE run_events_rebuilt RENAME TO run_events;
CREATE UNIQUE INDEX run_events_by_run ON run_events (run_id, seq);

CREATE TABLE run_entries_rebuilt (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('user', 'assistant', 'tool_result', 'note')),
  body TEXT NOT NULL,
  ts INTEGER NOT NULL
) STRICT;
INSERT INTO run_entries_rebuilt (run_id, seq, attempt, kind, body, ts)
  SELECT run_id, seq, attempt, kind, body, ts FROM run_entries ORDER BY run_id, seq;
DROP TABLE run_entries;
ALTER TABLE run_entries_rebuilt RENAME TO run_entries;
CREATE UNIQUE INDEX run_entries_by_run ON run_entries (run_id, seq);

CREATE TABLE usage_ledger_rebuilt (
  run_id TEXT NOT NULL,
  day TEXT NOT NULL,
  model TEXT NOT NULL,
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  agent TEXT NOT NULL,
  scope TEXT NOT NULL,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  model_calls INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, day, model)
) STRICT, WITHOUT ROWID;
INSERT INTO usage_ledger_rebuilt (run_id, day, model, tenant, agent, scope, input_tokens,
    output_tokens, model_calls, cost_usd)
  SELECT run_id, day, model, tenant, agent, scope, input_tokens, output_tokens, model_calls,
    cost_usd FROM usage_ledger;
DROP TABLE usage_ledger;
ALTER TABLE usage_ledger_rebuilt RENAME TO usage_ledger;
CREATE INDEX usage_ledger_by_tenant_day ON usage_ledger (tenant, day);

DROP INDEX runs_by_status;
