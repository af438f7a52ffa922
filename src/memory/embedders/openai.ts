// `openai:<provider>/<model>`: any OpenAI-compatible `POST {base_url}/embeddings`
// endpoint declared in [providers] (OpenAI, Ollama, vLLM …). Not offline.

import type { Embedder } from './embedder.ts';
import { l2normalize } from './embedder.ts';

export interface OpenAiEmbedderOptions {
  provider: string;
  model: string;
  /** Includes the version path, e.g. "http://127.0.0.1:11434/v1". */
  baseUrl: string;
  apiKey?: string;
  /** Texts per request. */
  batchSize?: number;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

interface EmbeddingsResponse {
  data?: { index?: number; embedding?: unknown }[];
}

export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const url = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
  const batchSize = options.batchSize ?? 64;
  const doFetch = options.fetch ?? fetch;
  const describe = `embedder openai:${options.provider}/${options.model} (${url})`;

  async function request(input: readonly string[]): Promise<Float32Array[]> {
    let response: Response;
    try {
      response = await doFetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify({ model: options.model, input }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
      });
    } catch (error) {
      throw new Error(`${describe}: request failed: ${(error as Error).message}`);
    }
    if (!response.ok) {
      const text = (await response.text().catch(() => '')).slice(0, 300);
      throw new Error(`${describe}: HTTP ${response.status} ${text}`);
    }
    const body = (await response.json().catch(() => ({}))) as EmbeddingsResponse;
    const rows = Array.isArray(body.data) ? body.data : [];
    if (rows.length !== input.length) {
      throw new Error(`${describe}: expected ${input.length} embeddings, got ${rows.length}`);
    }
    const vectors: Float32Array[] = new Array<Float32Array>(input.length);
    rows.forEach((row, position) => {
      const index = typeof row.index === 'number' ? row.index : position;
      const values = row.embedding;
      if (
        !Array.isArray(values) ||
        values.length === 0 ||
        !values.every((value) => typeof value === 'number' && Number.isFinite(value)) ||
        index < 0 ||
        index >= input.length
      ) {
        throw new Error(`${describe}: embedding ${position} is not a list of finite numbers`);
      }
      vectors[index] = l2normalize(Float32Array.from(values as number[]));
    });
    const dimension = vectors[0]?.length;
    if (vectors.some((vector) => vector === undefined || vector.length !== dimension)) {
      throw new Error(`${describe}: embeddings of different lengths`);
    }
    return vectors;
  }

  return {
    id: `openai:${options.provider}/${options.model}`,
    embed: async (texts) => {
      const out: Float32Array[] = [];
      for (let start = 0; start < texts.length; start += batchSize) {
        out.push(...(await request(texts.slice(start, start + batchSize))));
      }
      return out;
    },
  };
}
