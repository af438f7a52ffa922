-- Approval requests through the outbox (docs/approvals.md, Delivery of the request): a
-- run now has its final delivery (`kind = 'result'`) and one delivery per approval it
-- asked for (`kind = 'approval'`, keyed by the call). `payload` holds what an approval
-- delivery hands out (the call); a result delivery keeps reading the run's output.

ALTER TABLE deliveries DROP CONSTRAINT deliveries_run_id_key;
ALTER TABLE deliveries
  ADD COLUMN kind text NOT NULL DEFAULT 'result' CHECK (kind IN ('result', 'approval')),
  ADD COLUMN call_id text COLLATE "C",
  ADD COLUMN payload text,
  ADD CONSTRAINT deliveries_call_for_approval CHECK ((kind = 'result') = (call_id IS NULL));
-- One result delivery per run, one approval delivery per (run, call); also the index the
-- run's ON DELETE CASCADE uses.
CREATE UNIQUE INDEX deliveries_one_per_kind ON deliveries (run_id, kind, COALESCE(call_id, ''));
