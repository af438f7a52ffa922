-- keel:foreign-keys-off
-- Approval requests through the outbox (docs/approvals.md, Delivery of the request): a
-- run now has its final delivery (`kind = 'result'`) and one delivery per approval it
-- asked for (`kind = 'approval'`, keyed by the call). `run_id` was UNIQUE; SQLite cannot
-- drop a column constraint in place, so `deliveries` is rebuilt (foreign keys off for
-- this migration, checked with foreign_key_check before it commits; see migrations.ts).
-- `payload` holds what an approval delivery hands out (the call); a result delivery
-- keeps reading the run's output.

CREATE TABLE deliveries_rebuilt (
  delivery_id TEXT PRIMARY KEY,
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  destination TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'claimed', 'delivered', 'failed', 'dead')),
  attempt INTEGER NOT NULL DEFAULT 0,
  idempotency_key TEXT NOT NULL UNIQUE,
  next_attempt_at INTEGER NOT NULL,
  claim_token_hash TEXT,
  claim_expires_at INTEGER,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  kind TEXT NOT NULL DEFAULT 'result' CHECK (kind IN ('result', 'approval')),
  call_id TEXT,
  payload TEXT,
  CHECK ((kind = 'result') = (call_id IS NULL))
) STRICT;

INSERT INTO deliveries_rebuilt (delivery_id, tenant, run_id, destination, status, attempt,
    idempotency_key, next_attempt_at, claim_token_hash, claim_expires_at, last_error,
    created_at, updated_at)
  SELECT delivery_id, tenant, run_id, destination, status, attempt, idempotency_key,
    next_attempt_at, claim_token_hash, claim_expires_at, last_error, created_at, updated_at
  FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_rebuilt RENAME TO deliveries;

-- One result delivery per run, one approval delivery per (run, call).
CREATE UNIQUE INDEX deliveries_one_per_kind ON deliveries (run_id, kind, COALESCE(call_id, ''));
CREATE INDEX deliveries_due ON deliveries (tenant, status, next_attempt_at);
CREATE INDEX deliveries_claims ON deliveries (tenant, status, claim_expires_at);
CREATE INDEX deliveries_by_tenant ON deliveries (tenant, delivery_id);
CREATE INDEX deliveries_by_status ON deliveries (status);
