-- The fair claim (src/store/rules/tenant-fairness.ts) walks each tenant's queue in FIFO
-- order, and an enqueue counts the tenant's queued runs against its limit.

CREATE INDEX runs_queued_by_tenant ON runs (tenant, queue_pos) WHERE status = 'queued';
