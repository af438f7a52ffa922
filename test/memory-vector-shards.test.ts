// Memory's exact vector search on SQLite, split over shards and read-pool threads:
// the merged result is the exact top k (checked against a brute-force ranking in the
// test), threads see every committed write at once, a failed read leaves the pool
// usable, an idle pool does not keep a process alive, and vectors stored in the first
// (unsharded) layout are moved at open.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { READER_PRAGMAS } from '../src/store/sqlite/connection.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import { VECTOR_SHARDS } from '../src/store/sqlite/memory.ts';
import { SqliteReadPool } from '../src/store/sqlite/read-pool.ts';
import type { Store } from '../src/store/store.ts';
import { TS_IMPORT } from './helpers/ts-import.ts';

const DIM = 16;
const EMBEDDER = 'test-16';
const dirs: string[] = [];
const stores: Store[] = [];
after(async () => {
  for (const store of stores) await store.close();
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-vector-shards-'));
  dirs.push(dir);
  return dir;
}

function randomSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  };
}

function unitVector(random: () => number): Float32Array {
  const values = Float32Array.from({ length: DIM }, random);
  const norm = Math.hypot(...values);
  return values.map((value) => value / norm);
}

function squaredDistance(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += ((a[i] as number) - (b[i] as number)) ** 2;
  return sum;
}

async function storeWithFacts(
  path: string,
  count: number,
  readThreads: number,
): Promise<{ store: Store; vectors: Map<string, Float32Array> }> {
  const store = await openSqliteStore({ path, durability: 'process', readThreads });
  stores.push(store);
  if (!(await store.getTenant('t1'))) await store.createTenant('t1', {});
  const vectors = new Map<string, Float32Array>();
  const random = randomSource(7);
  for (let i = 0; i < count; i++) {
    const id = `f${String(i).padStart(4, '0')}`;
    const values = unitVector(random);
    vectors.set(id, values);
    await store.putMemory({
      tenant: 't1',
      namespace: 'n',
      id,
      text: `fact ${i}`,
      metadata: {},
      vector: { embedder: EMBEDDER, values },
    });
  }
  return { store, vectors };
}

/** The ids the search must return: every fact, ranked by exact distance. */
function bruteForce(vectors: Map<string, Float32Array>, query: Float32Array) {
  return [...vectors]
    .map(([id, values]) => ({ id, distance: squaredDistance(values, query) }))
    .sort((a, b) => a.distance - b.distance || (a.id < b.id ? -1 : 1));
}

describe('memory: exact vector search over shards', () => {
  it('returns the exact top k with and without the read pool', async () => {
    const dir = await tempDir();
    const { store, vectors } = await storeWithFacts(join(dir, 'keel.db'), 600, 2);
    const inline = await openSqliteStore({
      path: join(dir, 'keel.db'),
      durability: 'process',
      readThreads: 0,
      exclusiveLock: false,
    });
    stores.push(inline);
    const random = randomSource(99);
    let compared = 0;
    let inShardOfBest = 0;
    for (let q = 0; q < 25; q++) {
      const query = unitVector(random);
      const expected = bruteForce(vectors, query);
      for (const k of [1, 10, 40]) {
        const pooled = await store.searchMemorySemantic(
          't1',
          'n',
          { embedder: EMBEDDER, values: query },
          k,
        );
        const direct = await inline.searchMemorySemantic(
          't1',
          'n',
          { embedder: EMBEDDER, values: query },
          k,
        );
        assert.equal(pooled.length, k);
        assert.deepEqual(
          pooled.map((hit) => hit.id),
          direct.map((hit) => hit.id),
        );
        // float32 in SQLite vs float64 here: a returned fact may only differ from the
        // brute-force list where two distances are equal to ~1e-6.
        const kth = (expected[k - 1] as { distance: number }).distance;
        let previous = -1;
        for (const hit of pooled) {
          const distance = squaredDistance(vectors.get(hit.id) as Float32Array, query);
          assert.ok(distance <= kth + 1e-5, `${hit.id} is not among the ${k} nearest`);
          assert.ok(distance >= previous - 1e-5, 'results are ordered by distance');
          previous = distance;
        }
        compared++;
      }
      // How often the top 40 has more than 10 facts of one shard: a search asking each
      // shard for fewer than k would have been wrong there.
      const shardCounts = new Map<number, number>();
      for (const { id } of expected.slice(0, 40)) {
        const shard = Number(id.slice(1)) % VECTOR_SHARDS;
        shardCounts.set(shard, (shardCounts.get(shard) ?? 0) + 1);
      }
      if ([...shardCounts.values()].some((count) => count > 10)) inShardOfBest++;
    }
    console.log(
      `vector-shards queries=25 comparisons=${compared} exact=${compared} skewed_top40=${inShardOfBest}`,
    );
    assert.ok(inShardOfBest > 0, 'the data must exercise a skewed shard at least once');
  });

  it('a search sees a write the moment it committed (reader threads)', async () => {
    const dir = await tempDir();
    const { store } = await storeWithFacts(join(dir, 'keel.db'), 50, 2);
    const random = randomSource(3);
    for (let i = 0; i < 40; i++) {
      const values = unitVector(random);
      await store.putMemory({
        tenant: 't1',
        namespace: 'n',
        id: `new-${i}`,
        text: `new ${i}`,
        metadata: {},
        vector: { embedder: EMBEDDER, values },
      });
      const [best] = await store.searchMemorySemantic('t1', 'n', { embedder: EMBEDDER, values }, 1);
      assert.equal(best?.id, `new-${i}`);
      await store.deleteMemory('t1', 'n', `new-${i}`);
      const [after] = await store.searchMemorySemantic(
        't1',
        'n',
        { embedder: EMBEDDER, values },
        1,
      );
      assert.notEqual(after?.id, `new-${i}`, 'a deleted fact is gone from the next search');
    }
  });

  it('keeps tenants, namespaces and embedders apart in every shard', async () => {
    const dir = await tempDir();
    const { store } = await storeWithFacts(join(dir, 'keel.db'), 40, 2);
    await store.createTenant('t2', {});
    const values = unitVector(randomSource(5));
    for (const [tenant, namespace, embedder] of [
      ['t2', 'n', EMBEDDER],
      ['t1', 'other', EMBEDDER],
      ['t1', 'n', 'test-16b'],
    ] as const) {
      await store.putMemory({
        tenant,
        namespace,
        id: `x-${tenant}-${namespace}-${embedder}`,
        text: 'x',
        metadata: {},
        vector: { embedder, values },
      });
    }
    const hits = await store.searchMemorySemantic('t1', 'n', { embedder: EMBEDDER, values }, 40);
    assert.equal(hits.length, 40);
    assert.ok(
      hits.every((hit) => /^f\d{4}$/.test(hit.id)),
      JSON.stringify(hits.slice(0, 3)),
    );
  });
});

describe('memory: the SQLite read pool', () => {
  it('reports a failed statement and stays usable; refuses after close', async () => {
    const dir = await tempDir();
    const path = join(dir, 'keel.db');
    const store = await openSqliteStore({ path, durability: 'process' });
    stores.push(store);
    const pool = new SqliteReadPool(path, 2, READER_PRAGMAS);
    await assert.rejects(pool.all([{ sql: 'SELECT * FROM no_such_table', params: [] }]), {
      message: /read pool: no such table: no_such_table/,
    });
    const rows = await pool.all([
      { sql: 'SELECT ? AS x', params: [1] },
      { sql: 'SELECT length(?) AS n', params: [Buffer.from([1, 2, 3])] },
    ]);
    assert.deepEqual(rows, [[{ x: 1 }], [{ n: 3 }]]);
    // Reader threads run with query_only: nothing they run can write.
    await assert.rejects(
      pool.all([
        { sql: "INSERT INTO tenants (name) VALUES ('sneaky') RETURNING name", params: [] },
      ]),
      { message: /read pool: attempt to write a readonly database/ },
    );
    assert.equal(await store.getTenant('sneaky'), null);
    await pool.close();
    await assert.rejects(pool.all([{ sql: 'SELECT 1', params: [] }]), { message: /closed/ });
  });

  it('an idle pool does not keep the process alive', async () => {
    const dir = await tempDir();
    const script = join(dir, 'search-and-leave.ts');
    const storeModule = new URL('../src/store/sqlite/index.ts', import.meta.url).href;
    await writeFile(
      script,
      `import { openSqliteStore } from ${JSON.stringify(storeModule)};
       const store = await openSqliteStore({ path: ${JSON.stringify(join(dir, 'keel.db'))}, durability: 'process', readThreads: 2 });
       await store.createTenant('t1', {});
       const values = new Float32Array(4).fill(0.5);
       await store.putMemory({ tenant: 't1', namespace: 'n', id: 'a', text: 'a', metadata: {}, vector: { embedder: 'e', values } });
       const hits = await store.searchMemorySemantic('t1', 'n', { embedder: 'e', values }, 3);
       console.log('hits=' + hits.length);
       // no close(): the process must still end on its own
      `,
    );
    const started = Date.now();
    const child = spawnSync(process.execPath, [...TS_IMPORT, script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(child.signal, null, `killed after ${Date.now() - started} ms: ${child.stderr}`);
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, /hits=1/);
  });
});

describe('memory: vectors of the first, unsharded layout', () => {
  it('are moved into the sharded tables at open and found as before', async () => {
    const dir = await tempDir();
    const path = join(dir, 'keel.db');
    const { store, vectors } = await storeWithFacts(path, 120, 0);
    const query = unitVector(randomSource(11));
    const before = await store.searchMemorySemantic(
      't1',
      'n',
      { embedder: EMBEDDER, values: query },
      10,
    );
    await store.close();
    // Rewrite the vectors the way the first layout stored them.
    const raw = new Database(path);
    sqliteVec.load(raw);
    raw.exec(
      `CREATE VIRTUAL TABLE memory_vec_${DIM} USING vec0(part TEXT PARTITION KEY, embedding float[${DIM}] distance_metric=l2);
       CREATE TRIGGER memory_vec_${DIM}_cleanup AFTER DELETE ON memory_facts WHEN old.dim = ${DIM}
         BEGIN DELETE FROM memory_vec_${DIM} WHERE rowid = old.fact_id; END;`,
    );
    const insert = raw.prepare(
      `INSERT INTO memory_vec_${DIM} (rowid, part, embedding) VALUES (?, ?, ?)`,
    );
    for (const row of raw.prepare(`SELECT rowid, embedding FROM memory_vectors_${DIM}`).all() as {
      rowid: number;
      embedding: Buffer;
    }[]) {
      insert.run(BigInt(row.rowid), JSON.stringify(['t1', 'n', EMBEDDER]), row.embedding);
    }
    raw.exec(`DROP TRIGGER memory_vectors_${DIM}_cleanup; DROP TABLE memory_vectors_${DIM};`);
    raw.close();

    const reopened = await openSqliteStore({ path, durability: 'process', readThreads: 2 });
    stores.push(reopened);
    const after = await reopened.searchMemorySemantic(
      't1',
      'n',
      { embedder: EMBEDDER, values: query },
      10,
    );
    assert.deepEqual(
      after.map((hit) => hit.id),
      before.map((hit) => hit.id),
    );
    const check = new Database(path, { readonly: true });
    sqliteVec.load(check);
    const names = (
      check.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'memory_vec%'").all() as {
        name: string;
      }[]
    ).map((row) => row.name);
    assert.ok(!names.includes(`memory_vec_${DIM}`), names.join(','));
    const moved = check.prepare(`SELECT COUNT(*) AS n FROM memory_vectors_${DIM}`).get() as {
      n: number;
    };
    check.close();
    assert.equal(moved.n, vectors.size);
    // The new table's cleanup trigger is in place: a deleted fact takes its vector along.
    await reopened.deleteMemory('t1', 'n', before[0]?.id as string);
    const again = await reopened.searchMemorySemantic(
      't1',
      'n',
      { embedder: EMBEDDER, values: query },
      10,
    );
    assert.ok(!again.some((hit) => hit.id === before[0]?.id));
  });
});
