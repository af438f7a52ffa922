-- Retention (docs/store.md, "Retention"): the pruner walks finished runs oldest first,
-- in (finished_at, run_id) order; a run's finished_at is written once, at its end.

CREATE INDEX runs_finished ON runs (finished_at, run_id) WHERE finished_at IS NOT NULL;
