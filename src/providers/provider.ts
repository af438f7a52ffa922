// keel's own provider interface (DESIGN.md §9): one model response per call. Adapters
// turn keel's entries into their wire format; stored history never depends on a
// library's message type.

import type { AssistantBody, JsonObject, RunEntry, ThreadMessage } from '../types.ts';

export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: JsonObject;
}

export interface ModelRequest {
  /** The model name after the `provider/` prefix. */
  model: string;
  system: string;
  /** Past turns of the thread (user text and final assistant text). */
  context: ThreadMessage[];
  /** This run's entries, in order. */
  entries: RunEntry[];
  tools: ToolDefinition[];
  temperature: number;
  max_tokens: number;
  /** Aborted on cancel, lease loss, run deadline or shutdown. */
  signal: AbortSignal;
  /** Live text chunks while the model streams (not stored). */
  onDelta?: (text: string) => void;
}

export interface ModelResponse {
  assistant: AssistantBody;
  /** Raw request and response bodies for the trace (keys already removed). */
  raw?: { request?: unknown; response?: unknown };
}

export interface Provider {
  readonly name: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}

/** Resolves `provider/model` strings to a provider; `fixture` is always present. */
export interface ProviderRegistry {
  resolve(modelRef: string): { provider: Provider; model: string } | null;
}
