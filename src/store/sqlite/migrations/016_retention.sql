-- Retention (docs/store.md, "Retention"): the pruner walks finished runs oldest first,
-- in (finished_at, run_id) order. A run's finished_at is written once, at its end, with
-- the clock of that moment, so new entries land at the right edge of this index (the
-- same page for consecutive turns).

CREATE INDEX runs_finished ON runs (finished_at, run_id) WHERE finished_at IS NOT NULL;
