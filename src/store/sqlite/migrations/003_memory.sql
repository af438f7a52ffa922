-- Memory (docs/store.md, "Memory"): facts per (tenant, namespace), a word index and a trigram
-- index (scripts written without spaces) mirrored by triggers, and the embedder id and
-- dimension of each fact's vector. The vectors themselves live in sqlite-vec tables,
-- one per dimension (memory_vec_<dim>), created when an embedder of that dimension is
-- first used; each such table installs its own cleanup trigger on memory_facts.

CREATE TABLE memory_facts (
  fact_id INTEGER PRIMARY KEY,
  tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
  namespace TEXT NOT NULL,
  id TEXT NOT NULL,
  text TEXT NOT NULL,
  metadata TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  -- NULL until a vector is stored; differs from the configured embedder when stale.
  embedder TEXT,
  dim INTEGER,
  UNIQUE (tenant, namespace, id)
) STRICT;
CREATE INDEX memory_facts_by_embedder ON memory_facts (tenant, namespace, embedder);
CREATE INDEX memory_facts_reindex ON memory_facts (embedder, fact_id);

CREATE VIRTUAL TABLE memory_words USING fts5 (
  text, content = 'memory_facts', content_rowid = 'fact_id',
  tokenize = 'unicode61 remove_diacritics 2'
);
CREATE VIRTUAL TABLE memory_trigrams USING fts5 (
  text, content = 'memory_facts', content_rowid = 'fact_id', tokenize = 'trigram'
);

CREATE TRIGGER memory_facts_ai AFTER INSERT ON memory_facts BEGIN
  INSERT INTO memory_words (rowid, text) VALUES (new.fact_id, new.text);
  INSERT INTO memory_trigrams (rowid, text) VALUES (new.fact_id, new.text);
END;
CREATE TRIGGER memory_facts_ad AFTER DELETE ON memory_facts BEGIN
  INSERT INTO memory_words (memory_words, rowid, text) VALUES ('delete', old.fact_id, old.text);
  INSERT INTO memory_trigrams (memory_trigrams, rowid, text) VALUES ('delete', old.fact_id, old.text);
END;
CREATE TRIGGER memory_facts_au AFTER UPDATE OF text ON memory_facts BEGIN
  INSERT INTO memory_words (memory_words, rowid, text) VALUES ('delete', old.fact_id, old.text);
  INSERT INTO memory_trigrams (memory_trigrams, rowid, text) VALUES ('delete', old.fact_id, old.text);
  INSERT INTO memory_words (rowid, text) VALUES (new.fact_id, new.text);
  INSERT INTO memory_trigrams (rowid, text) VALUES (new.fact_id, new.text);
END;
