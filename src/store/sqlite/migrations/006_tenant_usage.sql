-- Per-tenant storage usage for the [tenant_limits] memory_bytes and artifact_bytes
-- quotas (src/store/rules/tenant-usage.ts). Triggers keep it exact: every statement that
-- writes or deletes a fact or an artifact (a put, a replace, a delete, a tenant's
-- cascade) moves the counter in its own transaction, so the quota check reads one row
-- instead of summing the tenant's data. A fact counts the UTF-8 bytes of its text and
-- its metadata JSON; an artifact its body (size_bytes).

CREATE TABLE tenant_usage (
  tenant TEXT PRIMARY KEY REFERENCES tenants (name) ON DELETE CASCADE,
  memory_bytes INTEGER NOT NULL DEFAULT 0,
  artifact_bytes INTEGER NOT NULL DEFAULT 0
) STRICT;

INSERT INTO tenant_usage (tenant, memory_bytes, artifact_bytes)
SELECT
  name,
  (SELECT COALESCE(SUM(length(CAST(f.text AS BLOB)) + length(CAST(f.metadata AS BLOB))), 0)
     FROM memory_facts f WHERE f.tenant = tenants.name),
  (SELECT COALESCE(SUM(a.size_bytes), 0) FROM artifacts a WHERE a.tenant = tenants.name)
FROM tenants;

CREATE TRIGGER tenant_usage_new_tenant AFTER INSERT ON tenants
BEGIN
  INSERT INTO tenant_usage (tenant) VALUES (new.name);
END;

CREATE TRIGGER tenant_usage_artifact_insert AFTER INSERT ON artifacts
BEGIN
  UPDATE tenant_usage SET artifact_bytes = artifact_bytes + new.size_bytes
  WHERE tenant = new.tenant;
END;

CREATE TRIGGER tenant_usage_artifact_update AFTER UPDATE OF size_bytes ON artifacts
BEGIN
  UPDATE tenant_usage SET artifact_bytes = artifact_bytes - old.size_bytes + new.size_bytes
  WHERE tenant = new.tenant;
END;

CREATE TRIGGER tenant_usage_artifact_delete AFTER DELETE ON artifacts
BEGIN
  UPDATE tenant_usage SET artifact_bytes = artifact_bytes - old.size_bytes
  WHERE tenant = old.tenant;
END;

CREATE TRIGGER tenant_usage_memory_insert AFTER INSERT ON memory_facts
BEGIN
  UPDATE tenant_usage
  SET memory_bytes = memory_bytes + length(CAST(new.text AS BLOB)) + length(CAST(new.metadata AS BLOB))
  WHERE tenant = new.tenant;
END;

CREATE TRIGGER tenant_usage_memory_update AFTER UPDATE OF text, metadata ON memory_facts
BEGIN
  UPDATE tenant_usage
  SET memory_bytes = memory_bytes
    - length(CAST(old.text AS BLOB)) - length(CAST(old.metadata AS BLOB))
    + length(CAST(new.text AS BLOB)) + length(CAST(new.metadata AS BLOB))
  WHERE tenant = new.tenant;
END;

CREATE TRIGGER tenant_usage_memory_delete AFTER DELETE ON memory_facts
BEGIN
  UPDATE tenant_usage
  SET memory_bytes = memory_bytes - length(CAST(old.text AS BLOB)) - length(CAST(old.metadata AS BLOB))
  WHERE tenant = old.tenant;
END;
