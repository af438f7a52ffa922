// The `onnx:<dir>` embedder through the real onnxruntime-node and
// @huggingface/tokenizers, on a tiny model the tests write themselves
// (test/helpers/onnx-model.ts): vector shape and determinism, batching and padding,
// query/passage prefixes, the token limit, both Hugging Face layouts, memory search
// on SQLite with paraphrases, a corrupt model, and switching embedders with reindex.

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { createEmbedder } from '../src/memory/embedders/create.ts';
import type { Embedder } from '../src/memory/embedders/embedder.ts';
import { cosine } from '../src/memory/embedders/embedder.ts';
import { createHashEmbedder } from '../src/memory/embedders/hash.ts';
import { createOnnxEmbedder } from '../src/memory/embedders/onnx.ts';
import { createMemoryService } from '../src/memory/service.ts';
import { openSqliteStore } from '../src/store/sqlite/index.ts';
import type { Store } from '../src/store/store.ts';
import type { Axis } from './helpers/onnx-model.ts';
import { TINY_DIMENSION, axisIndex, writeTinyModelDirectory } from './helpers/onnx-model.ts';

// After `npm install --omit=optional` the runtime is absent by choice: with
// KEEL_TEST_SKIP_ONNX=1 these tests are then reported as skipped (memory-embedders.test.ts
// covers the error keel gives). Without it they run and fail, so an install that lost the
// optional packages (e.g. a failed CUDA download without ONNXRUNTIME_NODE_INSTALL=skip) cannot pass unnoticed.
function missingRuntime(): string | false {
  for (const name of ['onnxruntime-node', '@huggingface/tokenizers']) {
    try {
      import.meta.resolve(name);
    } catch {
      return `the optional package ${name} is not installed`;
    }
  }
  return false;
}
const skip = process.env.KEEL_TEST_SKIP_ONNX === '1' ? missingRuntime() : false;

let dir: string;
let plainDir: string;
let e5Dir: string;
const embedders: Embedder[] = [];
const stores: Store[] = [];

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keel-onnx-'));
  plainDir = await writeTinyModelDirectory(join(dir, 'tiny'));
  e5Dir = await writeTinyModelDirectory(join(dir, 'tiny-e5-small'));
});
after(async () => {
  for (const embedder of embedders) await embedder.close?.();
  for (const store of stores) await store.close();
  await rm(dir, { recursive: true, force: true });
});

function onnx(modelDir: string): Embedder {
  const embedder = createOnnxEmbedder(modelDir);
  embedders.push(embedder);
  return embedder;
}

async function embedOne(embedder: Embedder, text: string, kind: 'query' | 'passage') {
  const [vector] = await embedder.embed([text], kind);
  assert.ok(vector);
  return vector;
}

function along(vector: Float32Array, axis: Axis): number {
  return vector[axisIndex(axis)] as number;
}

function assertClose(actual: Float32Array, expected: Float32Array, message?: string): void {
  assert.equal(actual.length, expected.length);
  actual.forEach((value, index) =>
    assert.ok(Math.abs(value - (expected[index] as number)) < 1e-6, message),
  );
}

async function openStore(name: string): Promise<Store> {
  // One data dir per store: a SQLite data dir is locked by the store that owns it.
  await mkdir(join(dir, name));
  const store = await openSqliteStore({ path: join(dir, name, 'keel.db'), durability: 'process' });
  stores.push(store);
  await store.createTenant('t1', {});
  return store;
}

// Each question shares no word with its fact (nor with any other fact), so only the
// meaning carried by the embedding table can connect them.
const FACTS: Record<string, string> = {
  pet: 'My dog Rex is a golden retriever',
  car: 'I drive a small red truck',
  food: 'Pizza is her favourite dinner',
  home: 'My sister lives in Lisbon',
  job: 'Ana works as a nurse at the hospital',
  music: 'Tom plays guitar on weekends',
};
const QUESTIONS: [string, string][] = [
  ['Which pet do I own?', 'pet'],
  ['What vehicle is mine?', 'car'],
  ['What meal does she like to eat?', 'food'],
  ['Where does she reside?', 'home'],
  ['What is her job?', 'job'],
  ['Which instrument?', 'music'],
];

describe('onnx embedder on a tiny real model', { skip }, () => {
  it('returns deterministic unit vectors of the model dimension that carry meaning', async () => {
    const embedder = onnx(plainDir);
    assert.equal(embedder.id, `onnx:${plainDir}`);
    const texts = ['My dog Rex is a golden retriever', 'a puppy', 'the car', 'Pizza!'];
    const vectors = await embedder.embed(texts, 'passage');
    assert.equal(vectors.length, texts.length);
    for (const vector of vectors) {
      assert.equal(vector.length, TINY_DIMENSION);
      assert.ok(Math.abs(Math.hypot(...vector) - 1) < 1e-5);
    }
    const [dog, puppy, car, pizza] = vectors as [
      Float32Array,
      Float32Array,
      Float32Array,
      Float32Array,
    ];
    assert.ok(along(dog, 'animal') > 0.8, 'the content word dominates the mean');
    assert.ok(along(pizza, 'food') > 0.8, 'the normalizer lower-cased "Pizza"');
    assert.ok(cosine(dog, puppy) > 0.8);
    assert.ok(cosine(dog, car) < 0.3);
    assert.deepEqual(await embedder.embed(texts, 'passage'), vectors);
    // Without prefixes (not an e5 directory, no keel-embedder.json) both kinds agree.
    assert.deepEqual(await embedder.embed(texts, 'query'), vectors);
  });

  it('pads a batch without changing any vector, across more texts than one run takes', async () => {
    const embedder = onnx(plainDir);
    const texts = Array.from(
      { length: 37 },
      (_, index) => Object.values(FACTS)[index % 6] + ' and a cat'.repeat(index % 4),
    );
    const batched = await embedder.embed(texts, 'passage');
    assert.equal(batched.length, texts.length);
    for (const [index, text] of texts.entries()) {
      const vector = batched[index] as Float32Array;
      assertClose(vector, await embedOne(embedder, text, 'passage'), `text ${index}`);
      // [PAD] has a heavy row of its own: any padding that leaked would show here.
      assert.equal(along(vector, 'padding'), 0);
    }
    assert.deepEqual(await embedder.embed([], 'passage'), []);
  });

  it('prefixes queries and passages: "query: "/"passage: " for e5 directories, or keel-embedder.json', async () => {
    const e5 = onnx(e5Dir);
    const query = await embedOne(e5, 'dog', 'query');
    const passage = await embedOne(e5, 'dog', 'passage');
    assert.ok(along(query, 'query') > 0.2, 'the tokenizer saw "query:"');
    assert.equal(along(query, 'passage'), 0);
    assert.ok(along(passage, 'passage') > 0.2, 'the tokenizer saw "passage:"');
    assert.equal(along(passage, 'query'), 0);
    assert.ok(along(query, 'animal') > 0.5 && along(passage, 'animal') > 0.5);

    const custom = onnx(
      await writeTinyModelDirectory(join(dir, 'custom'), {
        settings: { query_prefix: 'Question: ', passage_prefix: 'statement: ' },
      }),
    );
    assert.ok(along(await embedOne(custom, 'dog', 'query'), 'question') > 0.2);
    assert.ok(along(await embedOne(custom, 'dog', 'passage'), 'statement') > 0.2);

    // keel-embedder.json wins over the e5 default, one prefix at a time.
    const overridden = onnx(
      await writeTinyModelDirectory(join(dir, 'override-e5'), { settings: { query_prefix: '' } }),
    );
    const bare = await embedOne(overridden, 'dog', 'query');
    assert.equal(along(bare, 'query'), 0);
    assertClose(bare, await embedOne(onnx(plainDir), 'dog', 'query'));
    assert.ok(along(await embedOne(overridden, 'dog', 'passage'), 'passage') > 0.2);
  });

  it('cuts a text over max_tokens to its first tokens and keeps the closing [SEP]', async () => {
    const limited = onnx(
      await writeTinyModelDirectory(join(dir, 'limited'), {
        settings: { max_tokens: 8, passage_prefix: 'passage: ' },
      }),
    );
    const roomy = onnx(
      await writeTinyModelDirectory(join(dir, 'roomy'), {
        settings: { passage_prefix: 'passage: ' },
      }),
    );
    // [CLS] passage : dog [SEP] = 5 tokens: untouched.
    assertClose(await embedOne(limited, 'dog', 'passage'), await embedOne(roomy, 'dog', 'passage'));
    // [CLS] passage : my dog is a pizza [SEP] = 9 tokens → [CLS] passage : my dog is a [SEP]
    const cut = await embedOne(limited, 'my dog is a pizza', 'passage');
    assertClose(cut, await embedOne(roomy, 'my dog is a', 'passage'));
    assert.ok(along(await embedOne(roomy, 'my dog is a pizza', 'passage'), 'food') > 0.1);
    assert.ok(Math.abs(along(cut, 'food')) < 1e-6, 'the cut token is gone');
    // The query has no prefix, so the same text fits: [CLS] my dog is a pizza [SEP].
    assertClose(
      await embedOne(limited, 'my dog is a pizza', 'query'),
      await embedOne(roomy, 'my dog is a pizza', 'query'),
    );
    // Without keel-embedder.json the limit is 512: [CLS] + 510 words + [SEP].
    const plain = onnx(plainDir);
    assertClose(
      await embedOne(plain, `${'dog '.repeat(510)}${'pizza '.repeat(90)}`, 'passage'),
      await embedOne(plain, 'dog '.repeat(510), 'passage'),
    );
    // A limit that leaves no room for a text is refused when the directory is read.
    await writeTinyModelDirectory(join(dir, 'no-room'), { settings: { max_tokens: 1 } });
    assert.throws(() => onnx(join(dir, 'no-room')), /max_tokens must be an integer ≥ 2/);
  });

  it('feeds token_type_ids and finds onnx/model.onnx (the Hugging Face layout)', async () => {
    const bert = onnx(
      await writeTinyModelDirectory(join(dir, 'bert-layout'), { nested: true, tokenTypeIds: true }),
    );
    const texts = ['My dog Rex is a golden retriever', 'pizza'];
    const vectors = await bert.embed(texts, 'passage');
    // Type 1 would add a padding component; zeros leave the vectors as without the input.
    const plain = await onnx(plainDir).embed(texts, 'passage');
    vectors.forEach((vector, index) => assertClose(vector, plain[index] as Float32Array));
  });

  it('refuses a model that wants an input keel cannot feed, naming it', async () => {
    const positional = onnx(
      await writeTinyModelDirectory(join(dir, 'positional'), { extraInput: 'position_ids' }),
    );
    await assert.rejects(
      positional.embed(['dog'], 'query'),
      /takes inputs \[input_ids, attention_mask, position_ids\]; keel feeds input_ids, attention_mask and token_type_ids/,
    );
  });

  it('is what `memory.embedder = "onnx:<dir>"` creates', async () => {
    const config = loadConfig({ data_dir: dir }, {}, dir);
    const embedder = createEmbedder({ ...config, memory: { embedder: `onnx:${e5Dir}` } });
    embedders.push(embedder);
    assert.equal(embedder.id, `onnx:${e5Dir}`);
    assert.ok(along(await embedOne(embedder, 'puppy', 'query'), 'query') > 0.2);
  });
});

describe('memory search with the onnx embedder (SQLite)', { skip }, () => {
  it('finds each fact from a paraphrase that shares no word with it, semantic and fused', async () => {
    const store = await openStore('search');
    const memory = createMemoryService({ store, embedder: onnx(e5Dir) });
    for (const [id, text] of Object.entries(FACTS)) await memory.put('t1', 'default', id, text);
    for (const [question, expected] of QUESTIONS) {
      assert.deepEqual(await memory.search('t1', 'default', question, 3, 'lexical'), []);
      const semantic = await memory.search('t1', 'default', question, 3, 'semantic');
      assert.equal(semantic[0]?.id, expected, question);
      assert.equal(semantic[0]?.semantic_rank, 1);
      assert.equal(semantic[0]?.text, FACTS[expected]);
      const fused = await memory.search('t1', 'default', question, 3, 'fused');
      assert.equal(fused[0]?.id, expected, question);
      assert.equal(fused[0]?.semantic_rank, 1);
      assert.equal(fused[0]?.lexical_rank, null);
    }
  });

  it('a corrupt model.onnx is EMBEDDER_UNAVAILABLE, nothing is written, and a fixed file loads without a restart', async () => {
    const broken = await writeTinyModelDirectory(join(dir, 'broken'));
    const modelPath = join(broken, 'model.onnx');
    const good = await readFile(modelPath);
    await writeFile(modelPath, 'this is not an onnx model');
    const store = await openStore('corrupt');
    const embedder = onnx(broken);
    const memory = createMemoryService({ store, embedder });
    await assert.rejects(memory.put('t1', 'default', 'pet', FACTS.pet as string), {
      code: 'EMBEDDER_UNAVAILABLE',
      message: /cannot load model .*broken\/model\.onnx: .*protobuf parsing failed/i,
    });
    assert.equal(await memory.get('t1', 'default', 'pet'), null);
    await assert.rejects(memory.search('t1', 'default', 'Which pet do I own?', 3, 'semantic'), {
      code: 'EMBEDDER_UNAVAILABLE',
    });
    // Half a model is as clear, and the process is still serving.
    await writeFile(modelPath, good.subarray(0, good.length / 2));
    await assert.rejects(memory.put('t1', 'default', 'pet', FACTS.pet as string), {
      code: 'EMBEDDER_UNAVAILABLE',
    });
    await writeFile(modelPath, good);
    assert.equal((await memory.put('t1', 'default', 'pet', FACTS.pet as string)).created, true);
    const hits = await memory.search('t1', 'default', 'Which pet do I own?', 3, 'semantic');
    assert.equal(hits[0]?.id, 'pet');
  });

  it('after switching from hash, search is EMBEDDER_MISMATCH until reindex completes', async () => {
    const store = await openStore('switch');
    const hash = createMemoryService({ store, embedder: createHashEmbedder() });
    for (const [id, text] of Object.entries(FACTS)) await hash.put('t1', 'default', id, text);
    const embedder = onnx(e5Dir);
    const memory = createMemoryService({ store, embedder });
    const question = 'Which pet do I own?';
    await assert.rejects(memory.search('t1', 'default', question, 3, 'semantic'), {
      code: 'EMBEDDER_MISMATCH',
      message: /6 from "hash"/,
    });
    await assert.rejects(memory.search('t1', 'default', question, 3), {
      code: 'EMBEDDER_MISMATCH',
    });
    assert.deepEqual(await memory.search('t1', 'default', question, 3, 'lexical'), []);

    const partial = await memory.reindex({ batchSize: 4, maxBatches: 1 });
    assert.deepEqual(partial, { embedder: embedder.id, stale: 6, reindexed: 4, remaining: 2 });
    await assert.rejects(memory.search('t1', 'default', question, 3), {
      code: 'EMBEDDER_MISMATCH',
    });

    const progress: [number, number][] = [];
    const rest = await memory.reindex({
      batchSize: 4,
      onProgress: (done, total) => progress.push([done, total]),
    });
    assert.deepEqual(rest, { embedder: embedder.id, stale: 2, reindexed: 2, remaining: 0 });
    assert.deepEqual(progress, [[2, 2]]);
    for (const [text, expected] of QUESTIONS) {
      const hits = await memory.search('t1', 'default', text, 3);
      assert.equal(hits[0]?.id, expected, text);
      assert.equal(hits[0]?.semantic_rank, 1);
    }
    // The hash vectors are gone, so now the old embedder is the stale one.
    await assert.rejects(hash.search('t1', 'default', question, 3), { code: 'EMBEDDER_MISMATCH' });
  });
});
