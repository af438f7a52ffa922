-- Model usage and budgets (docs/http-api.md, Usage; src/store/rules/usage.ts).
-- usage_ledger: tokens and cost per (run, UTC day, model), written by the same
-- transaction as the run's `model.response` event (appendProgress), so a crash or a
-- stale attempt never counts a response the journal does not hold. Grouping by agent,
-- thread (agent + scope), model or day is a SUM over it. No foreign key to runs: a
-- deleted run's usage stays billed. usage_tenant_day: the same totals per tenant and
-- day, the one row a daily budget check reads. tenant_budgets: a tenant's daily budget
-- (PATCH /v1/tenants/{tenant} `limits`), absent = none.

CREATE TABLE usage_ledger (
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
) STRICT;

CREATE INDEX usage_ledger_by_tenant_day ON usage_ledger (tenant, day);

CREATE TABLE usage_tenant_day (
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  day TEXT NOT NULL,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  model_calls INTEGER NOT NULL DEFAULT 0,
  cost_usd REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, day)
) STRICT;

CREATE TABLE tenant_budgets (
  tenant TEXT PRIMARY KEY REFERENCES tenants (name) ON DELETE CASCADE,
  daily_tokens INTEGER,
  daily_cost_usd REAL
) STRICT;
