-- A covering index from a fact's row id to its tenant, namespace and id: lexical memory
-- search ranks the FTS hits of a query through it (memory-search.ts), so a frequent
-- word's thousands of hits are filtered by namespace without reading the fact rows.

CREATE INDEX memory_facts_scope ON memory_facts (fact_id, tenant, namespace, id);
