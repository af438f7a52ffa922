// `onnx:<dir>`: a sentence-transformer ONNX model supplied by the operator (e.g.
// multilingual-e5-small): `model.onnx` (or `onnx/model.onnx`) and `tokenizer.json`,
// mean pooling over the attention mask, L2. The runtime packages are optional
// dependencies — keel must still start after `npm install --omit=optional` — so they
// are loaded with a dynamic import() and a missing package is a clear error naming
// what to install.
//
// Optional `keel-embedder.json` in the directory: {"query_prefix", "passage_prefix",
// "max_tokens"}. Without it, e5 models (directory name containing "e5") get the
// "query: " / "passage: " prefixes they were trained with.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { EmbedKind, Embedder } from './embedder.ts';
import { l2normalize } from './embedder.ts';

const ONNX_INSTALL_HINT =
  'onnxruntime-node and @huggingface/tokenizers are optional dependencies of keel that `npm install` installs unless optional dependencies are omitted; restore them with `npm install --include=optional` (on npm older than 11.19, which ignores package.json allowScripts, prefix ONNXRUNTIME_NODE_INSTALL=skip to skip the CUDA download of the onnxruntime-node install script)';

// Texts per session.run: one run per text wastes the batching a model is built for,
// but the native run blocks the event loop, so batches stay small enough to keep the
// process responsive and the padded [batch, tokens, dim] output small.
const TEXTS_PER_RUN = 16;

// The inputs keel can feed; a model asking for anything else is refused at load time.
const KNOWN_INPUTS = new Set(['input_ids', 'attention_mask', 'token_type_ids']);

export interface OnnxModelFiles {
  dir: string;
  model: string;
  tokenizer: string;
  queryPrefix: string;
  passagePrefix: string;
  maxTokens: number;
}

/** Checks the directory before anything is loaded; throws a message naming the problem. */
export function resolveOnnxModelDir(dir: string): OnnxModelFiles {
  const absolute = resolve(dir);
  if (!existsSync(absolute) || !statSync(absolute).isDirectory()) {
    throw new Error(`onnx embedder: ${absolute} is not a directory`);
  }
  const model = ['model.onnx', 'onnx/model.onnx']
    .map((name) => join(absolute, name))
    .find((path) => existsSync(path));
  if (!model) throw new Error(`onnx embedder: ${absolute} has no model.onnx (or onnx/model.onnx)`);
  const tokenizer = join(absolute, 'tokenizer.json');
  if (!existsSync(tokenizer)) throw new Error(`onnx embedder: ${absolute} has no tokenizer.json`);
  const isE5 = /e5/i.test(basename(absolute));
  let settings: { query_prefix?: unknown; passage_prefix?: unknown; max_tokens?: unknown } = {};
  const settingsPath = join(absolute, 'keel-embedder.json');
  if (existsSync(settingsPath)) {
    try {
      settings = JSON.parse(readFileSync(settingsPath, 'utf8')) as typeof settings;
    } catch (error) {
      throw new Error(`onnx embedder: ${settingsPath}: ${(error as Error).message}`);
    }
  }
  const text = (value: unknown, fallback: string): string =>
    typeof value === 'string' ? value : fallback;
  return {
    dir: absolute,
    model,
    tokenizer,
    queryPrefix: text(settings.query_prefix, isE5 ? 'query: ' : ''),
    passagePrefix: text(settings.passage_prefix, isE5 ? 'passage: ' : ''),
    maxTokens: tokenLimit(settings.max_tokens, settingsPath),
  };
}

// The shapes used from the optional packages, declared here so keel compiles without them.
interface OrtTensor {
  readonly type: string;
  readonly data: unknown;
  readonly dims: readonly number[];
}
interface OrtSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  run(feeds: Record<string, unknown>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}
interface OrtModule {
  InferenceSession: { create(path: string): Promise<OrtSession> };
  Tensor: new (type: 'int64', data: BigInt64Array, dims: readonly number[]) => unknown;
}
interface TokenizerModule {
  Tokenizer: new (
    json: unknown,
    config: unknown,
  ) => {
    encode(text: string): { ids: number[]; attention_mask: number[] };
  };
}

export interface OnnxEmbedderOptions {
  /** Loads an optional package by name; tests replace it to simulate a missing one. */
  importPackage?: (name: string) => Promise<unknown>;
}

const importByName = (name: string): Promise<unknown> => import(name);

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}

function readJson(path: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`onnx embedder: cannot read ${what} ${path}: ${firstLine(error)}`);
  }
}

interface LoadedModel {
  session: OrtSession;
  embed(texts: readonly string[], kind: EmbedKind): Promise<Float32Array[]>;
}

export function createOnnxEmbedder(dir: string, options: OnnxEmbedderOptions = {}): Embedder {
  const files = resolveOnnxModelDir(dir);
  const importPackage = options.importPackage ?? importByName;
  let loaded: Promise<LoadedModel> | null = null;

  async function importOptional<T>(name: string, member: string): Promise<T> {
    let module: unknown;
    try {
      module = await importPackage(name);
    } catch (error) {
      throw new Error(
        `onnx embedder: the optional package "${name}" is not installed (${firstLine(error)}); ${ONNX_INSTALL_HINT}`,
      );
    }
    if (typeof (module as Record<string, unknown> | null)?.[member] !== 'function') {
      throw new Error(
        `onnx embedder: the package "${name}" has no ${member}; ${ONNX_INSTALL_HINT}`,
      );
    }
    return module as T;
  }

  async function load(): Promise<LoadedModel> {
    const ort = await importOptional<OrtModule>('onnxruntime-node', 'InferenceSession');
    const tokenizers = await importOptional<TokenizerModule>(
      '@huggingface/tokenizers',
      'Tokenizer',
    );
    const configPath = join(files.dir, 'tokenizer_config.json');
    const tokenizerConfig = existsSync(configPath) ? readJson(configPath, 'tokenizer config') : {};
    const tokenizerJson = readJson(files.tokenizer, 'tokenizer');
    let tokenizer: InstanceType<TokenizerModule['Tokenizer']>;
    try {
      tokenizer = new tokenizers.Tokenizer(tokenizerJson, tokenizerConfig);
    } catch (error) {
      throw new Error(
        `onnx embedder: cannot use tokenizer ${files.tokenizer}: ${firstLine(error)}`,
      );
    }
    let session: OrtSession;
    try {
      session = await ort.InferenceSession.create(files.model);
    } catch (error) {
      throw new Error(`onnx embedder: cannot load model ${files.model}: ${firstLine(error)}`);
    }
    const unknown = session.inputNames.filter((name) => !KNOWN_INPUTS.has(name));
    if (unknown.length > 0 || !session.inputNames.includes('input_ids')) {
      await session.release();
      throw new Error(
        `onnx embedder: ${files.model} takes inputs [${session.inputNames.join(', ')}]; keel feeds input_ids, attention_mask and token_type_ids`,
      );
    }
    // Exports name the per-token output last_hidden_state (transformers) or
    // token_embeddings (sentence-transformers); anything else: the first output.
    const outputName =
      ['last_hidden_state', 'token_embeddings'].find((name) =>
        session.outputNames.includes(name),
      ) ?? session.outputNames[0];

    // The special tokens the tokenizer closes every text with ([SEP], </s>): a text
    // longer than the model takes is cut before them, so it still ends the way the
    // model was trained (what `truncation=True` does in transformers). Facts up to
    // 4096 bytes are valid whatever the model's limit; the first max_tokens count.
    const closing = closingSpecialTokens(tokenizer);

    function encode(text: string, kind: EmbedKind): { ids: number[]; mask: number[] } {
      const prefix = kind === 'query' ? files.queryPrefix : files.passagePrefix;
      const encoded = tokenizer.encode(prefix + text);
      const limit = files.maxTokens;
      if (encoded.ids.length <= limit) return { ids: encoded.ids, mask: encoded.attention_mask };
      const tail = closing < limit ? closing : 0;
      const ids = [
        ...encoded.ids.slice(0, limit - tail),
        ...encoded.ids.slice(encoded.ids.length - tail),
      ];
      return { ids, mask: ids.map(() => 1) };
    }

    async function runBatch(batch: readonly { ids: number[]; mask: number[] }[]) {
      const tokens = Math.max(...batch.map((encoded) => encoded.ids.length));
      // Padding positions get id 0 and mask 0: the mask hides them from the model's
      // attention and from pooling, so the pad id itself never matters. The model and
      // pooling read the same mask.
      const ids = new BigInt64Array(batch.length * tokens);
      const mask = new Array<number>(batch.length * tokens).fill(0);
      batch.forEach((encoded, row) => {
        encoded.ids.forEach((id, position) => {
          ids[row * tokens + position] = BigInt(id);
          mask[row * tokens + position] = encoded.mask[position] ?? 1;
        });
      });
      const shape = [batch.length, tokens];
      const feeds: Record<string, unknown> = { input_ids: new ort.Tensor('int64', ids, shape) };
      if (session.inputNames.includes('attention_mask')) {
        feeds.attention_mask = new ort.Tensor('int64', BigInt64Array.from(mask, BigInt), shape);
      }
      // One sequence per text: every token is of type 0.
      if (session.inputNames.includes('token_type_ids')) {
        feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(ids.length), shape);
      }
      let outputs: Record<string, OrtTensor>;
      try {
        outputs = await session.run(feeds);
      } catch (error) {
        throw new Error(`onnx embedder: ${files.model} failed to run: ${firstLine(error)}`);
      }
      const hidden = outputName === undefined ? undefined : outputs[outputName];
      if (
        !hidden ||
        !(hidden.data instanceof Float32Array) ||
        hidden.dims.length !== 3 ||
        hidden.dims[0] !== batch.length ||
        hidden.dims[1] !== tokens
      ) {
        throw new Error(
          `onnx embedder: ${files.model} output "${outputName}" is not float32 [batch, tokens, dim] (got ${hidden?.type} [${hidden?.dims.join(', ')}])`,
        );
      }
      const data = hidden.data;
      return batch.map((_, row) =>
        meanPool(data, hidden.dims, mask.slice(row * tokens, (row + 1) * tokens), row),
      );
    }

    return {
      session,
      async embed(texts, kind) {
        const encoded = texts.map((text) => encode(text, kind));
        const vectors: Float32Array[] = [];
        for (let start = 0; start < encoded.length; start += TEXTS_PER_RUN) {
          vectors.push(...(await runBatch(encoded.slice(start, start + TEXTS_PER_RUN))));
        }
        return vectors;
      },
    };
  }

  // A failed load is forgotten, so an operator who fixes the directory (or installs
  // the packages) does not have to restart keel.
  function ready(): Promise<LoadedModel> {
    loaded ??= load().catch((error: unknown) => {
      loaded = null;
      throw error;
    });
    return loaded;
  }

  return {
    id: `onnx:${files.dir}`,
    embed: async (texts, kind) => (texts.length === 0 ? [] : (await ready()).embed(texts, kind)),
    warm: async () => {
      await ready();
    },
    close: async () => {
      const current = loaded;
      loaded = null;
      const model = await current?.catch(() => null);
      await model?.session.release();
    },
  };
}

/**
 * Mean of the token vectors the attention mask keeps, L2. `data` is [batch, tokens,
 * dim]; `mask` is the row's mask, one entry per token.
 */
export function meanPool(
  data: Float32Array,
  dims: readonly number[],
  mask: readonly number[],
  row = 0,
): Float32Array {
  const tokens = dims[1] ?? 0;
  const dimension = dims[2] ?? 0;
  const offset = row * tokens * dimension;
  const out = new Float32Array(dimension);
  let kept = 0;
  for (let t = 0; t < tokens; t++) {
    if (!mask[t]) continue;
    kept++;
    const start = offset + t * dimension;
    for (let k = 0; k < dimension; k++) out[k] = (out[k] as number) + (data[start + k] as number);
  }
  if (kept > 0) for (let k = 0; k < dimension; k++) out[k] = (out[k] as number) / kept;
  return l2normalize(out);
}

function tokenLimit(value: unknown, settingsPath: string): number {
  if (value === undefined) return 512;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 2) {
    throw new Error(`onnx embedder: ${settingsPath}: max_tokens must be an integer ≥ 2`);
  }
  return value;
}

/** How many special tokens the tokenizer appends after a text (1 for [SEP], 0 for none). */
function closingSpecialTokens(tokenizer: { encode(text: string): { ids: number[] } }): number {
  const empty = tokenizer.encode('').ids;
  const word = tokenizer.encode('a').ids;
  let head = 0;
  while (head < empty.length && empty[head] === word[head]) head++;
  return empty.length - head;
}
