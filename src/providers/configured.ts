// Builds the providers declared in keel.toml (`[providers.NAME]`) on the AI SDK provider
// packages: `openai-compatible` (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter, the
// fixture-model server), `openai` (Chat Completions via `.chat()`), `anthropic`. Keys
// come from the env vars the config names (read by config.ts); a provider without a
// key sends none, which is right for local servers. The AI SDK packages are imported on
// a provider's first call, so a keel without configured providers (and every CLI
// command) starts without loading them (~0.6 s under tsx).

import { KeelError } from '../errors.ts';
import type { LanguageModelFactory, StreamMode } from './ai-sdk-provider.ts';
import { createAiSdkProvider } from './ai-sdk-provider.ts';
import { createNodeHttpTransport } from './node-http-transport.ts';
import type { Provider } from './provider.ts';

export interface ProviderSpec {
  type: 'openai' | 'openai-compatible' | 'anthropic';
  base_url?: string;
  api_key_env?: string;
  /**
   * "when-watched" (default) → streamed only while watched live; true → always streamed;
   * false → non-streaming requests.
   */
  stream?: StreamMode;
  /** One model request, sent to last byte (default DEFAULT_MODEL_TIMEOUT_MS). */
  timeout_ms?: number;
}

/**
 * Ten minutes: a long answer of a slow local model, or of a model that thinks before it
 * writes, still fits; a stalled connection does not hold a run for longer.
 */
export const DEFAULT_MODEL_TIMEOUT_MS = 600_000;

/**
 * A call is streamed only when someone watches the run live: on Node 20 the provider
 * packages' web-stream pipeline is over a third of a model call's CPU, and the deltas are
 * all a stream buys. A late SSE client still gets a call's whole text as one delta
 * (src/api/routes/events.ts); docs/agent-loop.md, Providers.
 */
export const DEFAULT_STREAM_MODE: StreamMode = 'when-watched';

function modelFactory(
  name: string,
  spec: ProviderSpec,
  apiKey: string | undefined,
): LanguageModelFactory {
  switch (spec.type) {
    case 'openai-compatible': {
      const baseURL = spec.base_url;
      if (!baseURL) {
        throw new KeelError(
          'CONFIG_INVALID',
          `providers.${name}: type "openai-compatible" needs base_url (e.g. "http://127.0.0.1:11434/v1")`,
        );
      }
      return async (modelId, fetch) =>
        (await import('@ai-sdk/openai-compatible'))
          .createOpenAICompatible({
            name,
            baseURL,
            ...(apiKey && { apiKey }),
            // Without it, streamed responses carry no usage
            // (OpenAI's `stream_options.include_usage`).
            includeUsage: true,
            fetch,
          })
          .chatModel(modelId);
    }
    case 'openai':
      // `openai(id)` would be the Responses API; keel speaks Chat Completions.
      return async (modelId, fetch) =>
        (await import('@ai-sdk/openai'))
          .createOpenAI({
            // An explicit key: the library would otherwise read OPENAI_API_KEY itself.
            apiKey: apiKey ?? '',
            ...(spec.base_url && { baseURL: spec.base_url }),
            fetch,
          })
          .chat(modelId);
    case 'anthropic':
      return async (modelId, fetch) =>
        (await import('@ai-sdk/anthropic')).createAnthropic({
          apiKey: apiKey ?? '',
          ...(spec.base_url && { baseURL: spec.base_url }),
          fetch,
        })(modelId);
  }
}

/** One Provider per configured name. Throws CONFIG_INVALID for an unusable entry. */
export function createConfiguredProviders(
  specs: Readonly<Record<string, ProviderSpec>>,
  keys: Readonly<Record<string, string | undefined>>,
): Record<string, Provider> {
  // The AI SDK prints warnings (unknown model ids, unsupported settings) to the console
  // unless told not to; keel's logs are JSON lines on stderr.
  (globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;
  const providers: Record<string, Provider> = {};
  const transport = createNodeHttpTransport();
  for (const [name, spec] of Object.entries(specs)) {
    const apiKey = keys[name];
    providers[name] = createAiSdkProvider({
      name,
      model: modelFactory(name, spec, apiKey),
      secrets: apiKey ? [apiKey] : [],
      stream: spec.stream ?? DEFAULT_STREAM_MODE,
      timeoutMs: spec.timeout_ms ?? DEFAULT_MODEL_TIMEOUT_MS,
      transport,
    });
  }
  return providers;
}
