-- Per-tenant storage usage for the [tenant_limits] memory_bytes and artifact_bytes
-- quotas (src/store/rules/tenant-usage.ts). Triggers keep it exact: every statement that
-- writes or deletes a fact or an artifact (a put, a replace, a delete, a tenant's
-- cascade) moves the counter in its own transaction, so the quota check reads one row
-- instead of summing the tenant's data. A fact counts the UTF-8 bytes of its text and
-- its metadata JSON; an artifact its body (size_bytes). The functions keep the schema's
-- search_path, so they find this schema's tables whoever calls them.

CREATE TABLE tenant_usage (
  tenant text COLLATE "C" PRIMARY KEY REFERENCES tenants (name) ON DELETE CASCADE,
  memory_bytes bigint NOT NULL DEFAULT 0,
  artifact_bytes bigint NOT NULL DEFAULT 0
);

INSERT INTO tenant_usage (tenant, memory_bytes, artifact_bytes)
SELECT
  t.name,
  (SELECT COALESCE(SUM(octet_length(f.text) + octet_length(f.metadata)), 0)
     FROM memory_facts f WHERE f.tenant = t.name),
  (SELECT COALESCE(SUM(a.size_bytes), 0) FROM artifacts a WHERE a.tenant = t.name)
FROM tenants t;

CREATE FUNCTION tenant_usage_new_tenant() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO tenant_usage (tenant) VALUES (NEW.name);
  RETURN NULL;
END $$;

CREATE TRIGGER tenant_usage_new_tenant AFTER INSERT ON tenants
FOR EACH ROW EXECUTE FUNCTION tenant_usage_new_tenant();

CREATE FUNCTION tenant_usage_artifacts() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE tenant_usage SET artifact_bytes = artifact_bytes - OLD.size_bytes
    WHERE tenant = OLD.tenant;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE tenant_usage SET artifact_bytes = artifact_bytes + NEW.size_bytes
    WHERE tenant = NEW.tenant;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER tenant_usage_artifacts AFTER INSERT OR DELETE OR UPDATE OF size_bytes ON artifacts
FOR EACH ROW EXECUTE FUNCTION tenant_usage_artifacts();

CREATE FUNCTION tenant_usage_memory() RETURNS trigger
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE tenant_usage
    SET memory_bytes = memory_bytes - octet_length(OLD.text) - octet_length(OLD.metadata)
    WHERE tenant = OLD.tenant;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    UPDATE tenant_usage
    SET memory_bytes = memory_bytes + octet_length(NEW.text) + octet_length(NEW.metadata)
    WHERE tenant = NEW.tenant;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER tenant_usage_memory AFTER INSERT OR DELETE OR UPDATE OF text, metadata ON memory_facts
FOR EACH ROW EXECUTE FUNCTION tenant_usage_memory();
