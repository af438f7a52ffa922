-- keel PostgreSQL schema v1: the same tables and rules as SQLite's 001–003 (one file,
-- since this backend starts here). Times are bigint milliseconds since the epoch, taken
-- from the database clock (`now()`) unless a test injects one; text sorts by bytes
-- (COLLATE "C"), as SQLite's BINARY collation does, so keyset cursors agree.

CREATE TABLE tenants (
  name text COLLATE "C" PRIMARY KEY,
  metadata text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);

CREATE TABLE tokens (
  id text COLLATE "C" PRIMARY KEY,
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name text NOT NULL,
  hash text NOT NULL,
  created_at bigint NOT NULL
);
CREATE INDEX tokens_by_tenant ON tokens (tenant, created_at);

CREATE TABLE agents (
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name text COLLATE "C" NOT NULL,
  spec text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant, name)
);

-- queue_pos comes from a sequence: increasing on insert, so it is the FIFO order.
-- agent has no foreign key on purpose: a run outlives its agent (as a failed run).
CREATE TABLE runs (
  queue_pos bigserial PRIMARY KEY,
  run_id text COLLATE "C" NOT NULL UNIQUE,
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  agent text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  source text NOT NULL CHECK (source IN ('api', 'schedule')),
  input text NOT NULL,
  request_id text COLLATE "C",
  fingerprint text NOT NULL,
  delivery_destination text,
  status text NOT NULL
    CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  output text,
  error text,
  attempt integer NOT NULL DEFAULT 0,
  steps integer NOT NULL DEFAULT 0,
  usage text NOT NULL,
  elapsed_ms bigint NOT NULL DEFAULT 0,
  lease_owner text,
  lease_expires_at bigint,
  created_at bigint NOT NULL,
  started_at bigint,
  finished_at bigint
);

CREATE UNIQUE INDEX runs_request_id ON runs (tenant, request_id) WHERE request_id IS NOT NULL;
-- The lane backstop: at most one running run per (tenant, agent, scope), whatever the
-- claim statement does; a claim that trips it claims nothing.
CREATE UNIQUE INDEX runs_one_running_per_lane ON runs (tenant, agent, scope)
  WHERE status = 'running';
-- Claim: the queue in FIFO order, the lane probes (head of lane, running in lane), and
-- expired leases.
CREATE INDEX runs_queue ON runs (queue_pos) WHERE status = 'queued';
CREATE INDEX runs_lane_queued ON runs (tenant, agent, scope, queue_pos) WHERE status = 'queued';
CREATE INDEX runs_leases ON runs (lease_expires_at) WHERE status = 'running';
CREATE INDEX runs_by_tenant ON runs (tenant, run_id);
CREATE INDEX runs_active_by_agent ON runs (tenant, agent) WHERE status IN ('queued', 'running');
CREATE INDEX runs_by_status ON runs (status);

CREATE TABLE run_entries (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq integer NOT NULL,
  attempt integer NOT NULL,
  kind text NOT NULL CHECK (kind IN ('user', 'assistant', 'tool_result', 'note')),
  body text NOT NULL,
  ts bigint NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE run_events (
  run_id text COLLATE "C" NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
  seq integer NOT NULL,
  ts bigint NOT NULL,
  type text NOT NULL,
  data text NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE threads (
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  agent text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  revision integer NOT NULL,
  turns integer NOT NULL,
  messages text NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant, agent, scope)
);
CREATE INDEX threads_newest ON threads (tenant, agent, updated_at, scope);

CREATE TABLE deliveries (
  delivery_id text COLLATE "C" PRIMARY KEY,
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  run_id text COLLATE "C" NOT NULL UNIQUE REFERENCES runs (run_id) ON DELETE CASCADE,
  destination text COLLATE "C" NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'claimed', 'delivered', 'failed', 'dead')),
  attempt integer NOT NULL DEFAULT 0,
  idempotency_key text NOT NULL UNIQUE,
  next_attempt_at bigint NOT NULL,
  claim_token_hash text,
  claim_expires_at bigint,
  last_error text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE INDEX deliveries_due ON deliveries (tenant, status, next_attempt_at);
CREATE INDEX deliveries_by_tenant ON deliveries (tenant, delivery_id);
CREATE INDEX deliveries_by_status ON deliveries (status);

CREATE TABLE artifacts (
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  path text COLLATE "C" NOT NULL,
  body bytea NOT NULL,
  content_type text NOT NULL,
  size_bytes integer NOT NULL,
  sha256 text NOT NULL,
  metadata text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant, path)
);

CREATE TABLE schedules (
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  name text COLLATE "C" NOT NULL,
  agent text COLLATE "C" NOT NULL,
  scope text COLLATE "C" NOT NULL,
  payload text NOT NULL,
  timing text NOT NULL,
  misfire text NOT NULL CHECK (misfire IN ('skip', 'run_once')),
  delivery_destination text,
  enabled boolean NOT NULL,
  next_fire_at bigint,
  last_fired_at bigint,
  last_run_id text,
  last_error text,
  revision integer NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant, name)
);
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE enabled AND next_fire_at IS NOT NULL;
CREATE INDEX schedules_by_agent ON schedules (tenant, agent, scope, name);

-- Memory: words through a generated tsvector ('simple': no stemming, no stop words,
-- like SQLite's unicode61); phrases of unspaced scripts by substring (a pg_trgm index
-- is added at open when the extension exists); the vector as real[] for an exact scan.
CREATE TABLE memory_facts (
  fact_id bigserial PRIMARY KEY,
  tenant text COLLATE "C" NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  namespace text COLLATE "C" NOT NULL,
  id text COLLATE "C" NOT NULL,
  text text NOT NULL,
  words tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED,
  metadata text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  embedder text COLLATE "C",
  dim integer,
  vector real[],
  UNIQUE (tenant, namespace, id)
);
CREATE INDEX memory_facts_words ON memory_facts USING gin (words);
CREATE INDEX memory_facts_by_embedder ON memory_facts (tenant, namespace, embedder);
CREATE INDEX memory_facts_reindex ON memory_facts (embedder, fact_id);
