// `onnx:<dir>`: a sentence-transformer ONNX model supplied by the operator (e.g.
// multilingual-e5-small): `model.onnx` (or `onnx/model.onnx`) and `tokenizer.json`,
// mean pooling over the attention mask, L2. The runtime packages are optional and
// NOT dependencies of keel — onnxruntime-node's install script downloads extras and
// would break a plain `npm install` — so they are loaded with a dynamic import() and
// a missing package is a clear error naming what to install.
//
// Optional `keel-embedder.json` in the directory: {"query_prefix", "passage_prefix",
// "max_tokens"}. Without it, e5 models (directory name containing "e5") get the
// "query: " / "passage: " prefixes they were trained with.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { EmbedKind, Embedder } from './embedder.ts';
import { l2normalize } from './embedder.ts';

export const ONNX_INSTALL_HINT =
  'ONNXRUNTIME_NODE_INSTALL=skip npm install onnxruntime-node@1.30.0 @huggingface/tokenizers@0.2.0';

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
    maxTokens: typeof settings.max_tokens === 'number' ? settings.max_tokens : 512,
  };
}

// The shapes used from the optional packages, declared here so keel compiles without them.
interface OrtTensor {
  data: Float32Array | BigInt64Array;
  dims: readonly number[];
}
interface OrtModule {
  InferenceSession: {
    create(path: string): Promise<{
      inputNames: readonly string[];
      run(feeds: Record<string, unknown>): Promise<Record<string, OrtTensor>>;
    }>;
  };
  Tensor: new (type: string, data: BigInt64Array, dims: number[]) => unknown;
}
interface TokenizerModule {
  Tokenizer: new (
    json: unknown,
    config: unknown,
  ) => {
    encode(text: string): { ids: number[]; attention_mask: number[] };
  };
}

async function importOptional<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    throw new Error(
      `onnx embedder: the optional package "${name}" is not installed (${(error as Error).message.split('\n')[0]}); install it with: ${ONNX_INSTALL_HINT}`,
    );
  }
}

export function createOnnxEmbedder(dir: string): Embedder {
  const files = resolveOnnxModelDir(dir);
  let loaded: Promise<
    (texts: readonly string[], kind: EmbedKind) => Promise<Float32Array[]>
  > | null = null;

  async function load() {
    const ort = await importOptional<OrtModule>('onnxruntime-node');
    const tokenizers = await importOptional<TokenizerModule>('@huggingface/tokenizers');
    const tokenizerJson: unknown = JSON.parse(readFileSync(files.tokenizer, 'utf8'));
    const configPath = join(files.dir, 'tokenizer_config.json');
    const tokenizerConfig: unknown = existsSync(configPath)
      ? JSON.parse(readFileSync(configPath, 'utf8'))
      : {};
    const tokenizer = new tokenizers.Tokenizer(tokenizerJson, tokenizerConfig);
    const session = await ort.InferenceSession.create(files.model);
    return async (texts: readonly string[], kind: EmbedKind): Promise<Float32Array[]> => {
      const out: Float32Array[] = [];
      for (const text of texts) {
        const prefix = kind === 'query' ? files.queryPrefix : files.passagePrefix;
        const encoded = tokenizer.encode(prefix + text);
        if (encoded.ids.length > files.maxTokens) {
          throw new Error(
            `onnx embedder: ${encoded.ids.length} tokens, the model takes ${files.maxTokens}`,
          );
        }
        const length = encoded.ids.length;
        const ids = BigInt64Array.from(encoded.ids.map(BigInt));
        const mask = BigInt64Array.from(encoded.attention_mask.map(BigInt));
        const feeds: Record<string, unknown> = {
          input_ids: new ort.Tensor('int64', ids, [1, length]),
          attention_mask: new ort.Tensor('int64', mask, [1, length]),
        };
        if (session.inputNames.includes('token_type_ids')) {
          feeds.token_type_ids = new ort.Tensor('int64', new BigInt64Array(length), [1, length]);
        }
        const outputs = await session.run(feeds);
        const hidden = outputs.last_hidden_state ?? Object.values(outputs)[0];
        if (!hidden || !(hidden.data instanceof Float32Array)) {
          throw new Error('onnx embedder: the model returned no float hidden state');
        }
        out.push(meanPool(hidden.data, hidden.dims, encoded.attention_mask));
      }
      return out;
    };
  }

  return {
    id: `onnx:${files.dir}`,
    embed: async (texts, kind) => {
      loaded ??= load();
      return (await loaded)(texts, kind);
    },
    warm: async () => {
      loaded ??= load();
      await loaded;
    },
  };
}

/** Mean of the token vectors the attention mask keeps ([1, tokens, dim] layout), L2. */
export function meanPool(
  data: Float32Array,
  dims: readonly number[],
  mask: readonly number[],
): Float32Array {
  const tokens = dims[1] ?? 0;
  const dimension = dims[2] ?? 0;
  const out = new Float32Array(dimension);
  let kept = 0;
  for (let t = 0; t < tokens; t++) {
    if (!mask[t]) continue;
    kept++;
    for (let k = 0; k < dimension; k++)
      out[k] = (out[k] as number) + (data[t * dimension + k] as number);
  }
  if (kept > 0) for (let k = 0; k < dimension; k++) out[k] = (out[k] as number) / kept;
  return l2normalize(out);
}
