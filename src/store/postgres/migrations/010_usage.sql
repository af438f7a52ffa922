-- Model usage and budgets (docs/http-api.md, Usage; src/store/rules/usage.ts).
-- usage_ledger: tokens and cost per (run, UTC day, model), written by the same
-- transaction as the run's `model.response` event (appendProgress), so a crash, a
-- stale attempt or a second worker never counts a response the journal does not hold.
-- Grouping by agent, thread (agent + scope), model or day is a SUM over it. No foreign
-- key to runs: a deleted run's usage stays billed. usage_tenant_day: the same totals per
-- tenant and day, the one row a daily budget check reads. tenant_budgets: a tenant's
-- daily budget (PATCH /v1/tenants/{tenant} `limits`), absent = none.

CREATE TABLE usage_ledger (
  run_id text COLLATE "C" NOT NULL,
  day text COLLATE "C" NOT NULL,
  model text COLLATE "C" NOT NULL,
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  agent text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  model_calls bigint NOT NULL DEFAULT 0,
  cost_usd double precision NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, day, model)
);

CREATE INDEX usage_ledger_by_tenant_day ON usage_ledger (tenant, day);

CREATE TABLE usage_tenant_day (
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  day text COLLATE "C" NOT NULL,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  model_calls bigint NOT NULL DEFAULT 0,
  cost_usd double precision NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, day)
);

CREATE TABLE tenant_budgets (
  tenant text COLLATE "C" PRIMARY KEY REFERENCES tenants (name) ON DELETE CASCADE,
  daily_tokens bigint,
  daily_cost_usd double precision
);
